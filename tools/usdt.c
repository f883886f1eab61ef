// SPDX-License-Identifier: BSD-2-Clause
/*
 * usdt: list the USDT probes of binaries and libraries, and trace them
 * live with their arguments decoded. Built on libusdt's public API.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

/* clang-format off */
static const char usage[] =
"Usage: usdt COMMAND [OPTIONS] ...\n"
"\n"
"Commands:\n"
"  list   print the USDT probes of a file or process, arguments decoded\n"
"  trace  print each hit of matching probes, live, with argument values\n"
"\n"
"  usdt COMMAND --help   options of a command\n"
"  usdt --version        libusdt's version\n"
"\n"
"Examples:\n"
"  usdt list /usr/lib/x86_64-linux-gnu/libc.so.6\n"
"  usdt list --json ./app 'myprov:*'\n"
"  usdt trace -c './app --flag' ./app 'myprov:*'\n"
"  usdt trace -p 1234 libc.so.6 'libc:memory_*'\n"
"  usdt trace -p 1234 /usr/bin/python3 python:function__entry '%s %s %d'\n"
"  usdt trace --count -i 1 -p 1234\n";
/* clang-format on */

int main(int argc, char **argv)
{
	/*
	 * The tool reports each failure in one line of its own; the
	 * library's messages would repeat it. USDT_LOG_LEVEL=warn|info|debug
	 * brings them back, for debugging.
	 */
	if (!getenv("USDT_LOG_LEVEL"))
		usdt_set_print(NULL);
	if (argc < 2) {
		fputs(usage, stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		fputs(usage, stdout);
		return 0;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		printf("usdt (libusdt) %d.%d\n", USDT_MAJOR_VERSION,
		       USDT_MINOR_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "list"))
		return cmd_list(argc - 1, argv + 1);
	if (!strcmp(argv[1], "trace"))
		return cmd_trace(argc - 1, argv + 1);
	tool_err("unknown command '%s' (try: usdt --help)", argv[1]);
	return 2;
}
