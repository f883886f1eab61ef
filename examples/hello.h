/* SPDX-License-Identifier: BSD-2-Clause */
/* What examples/hello.bpf.c sends to examples/hello.c for each greeting. */
#ifndef __HELLO_H
#define __HELLO_H

struct greeting {
	int pid;
	int count;
	char name[32];
};

#endif
