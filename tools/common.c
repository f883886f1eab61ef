// SPDX-License-Identifier: BSD-2-Clause
/*
 * What both subcommands need: messages, probe patterns, finding the file a
 * user named, the files a process has mapped, and JSON strings.
 */
#include <ctype.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tool.h"

const char *tool_name = "usdt";

int tool_err(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", tool_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

pid_t parse_pid(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v <= 0 || v > INT_MAX)
		return -1;
	return (pid_t)v;
}

/* ---------------------------------------------------------------------- */
/* Patterns                                                               */

int patterns_parse(char **argv, int argc, struct pattern **out, int *cnt)
{
	struct pattern *pats;
	int i;

	*out = NULL;
	*cnt = 0;
	if (!argc)
		return 0;
	pats = calloc((size_t)argc, sizeof(*pats));
	if (!pats)
		return -ENOMEM;
	for (i = 0; i < argc; i++) {
		const char *colon = strchr(argv[i], ':');

		if (colon) {
			pats[i].provider = strndup(argv[i],
						   (size_t)(colon - argv[i]));
			pats[i].name = strdup(colon + 1);
		} else {
			pats[i].provider = strdup(argv[i]);
			pats[i].name = strdup("*");
		}
		if (!pats[i].provider || !pats[i].name) {
			patterns_free(pats, i + 1);
			return -ENOMEM;
		}
		/* An empty half ("prov:" or ":name") means any. */
		if (!pats[i].provider[0]) {
			free(pats[i].provider);
			pats[i].provider = strdup("*");
		}
		if (!pats[i].name[0]) {
			free(pats[i].name);
			pats[i].name = strdup("*");
		}
		if (!pats[i].provider || !pats[i].name) {
			patterns_free(pats, i + 1);
			return -ENOMEM;
		}
	}
	*out = pats;
	*cnt = argc;
	return 0;
}

void patterns_free(struct pattern *pats, int cnt)
{
	int i;

	if (!pats)
		return;
	for (i = 0; i < cnt; i++) {
		free(pats[i].provider);
		free(pats[i].name);
	}
	free(pats);
}

struct pattern *patterns_match(struct pattern *pats, int cnt,
			       const char *provider, const char *name)
{
	static struct pattern any = { .provider = "*", .name = "*" };
	int i;

	if (!cnt)
		return &any;
	for (i = 0; i < cnt; i++) {
		if (!fnmatch(pats[i].provider, provider, 0) &&
		    !fnmatch(pats[i].name, name, 0)) {
			pats[i].used = true;
			return &pats[i];
		}
	}
	return NULL;
}

/* ---------------------------------------------------------------------- */
/* Finding files                                                          */

void target_free(struct target *t)
{
	if (!t)
		return;
	free(t->shown);
	free(t->open_path);
	t->shown = t->open_path = NULL;
}

void targets_free(struct target *t, int cnt)
{
	int i;

	if (!t)
		return;
	for (i = 0; i < cnt; i++)
		target_free(&t[i]);
	free(t);
}

static int target_set(struct target *t, const char *shown, pid_t pid)
{
	t->shown = strdup(shown);
	if (pid > 0 && shown[0] == '/') {
		if (asprintf(&t->open_path, "/proc/%d/root%s", (int)pid,
			     shown) < 0)
			t->open_path = NULL;
	} else {
		t->open_path = strdup(shown);
	}
	if (!t->shown || !t->open_path) {
		target_free(t);
		return -ENOMEM;
	}
	return 0;
}

/* Is path a 64-bit ELF file of the machine we run on? Libraries of other
 * ABIs (i386 multiarch) share names with ours. */
static bool elf_for_host(const char *path)
{
	unsigned char h[EI_NIDENT + 4];
	uint16_t machine;
	int fd, ok;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ok = read(fd, h, sizeof(h)) == (ssize_t)sizeof(h);
	close(fd);
	if (!ok || memcmp(h, ELFMAG, SELFMAG) || h[EI_CLASS] != ELFCLASS64)
		return false;
	memcpy(&machine, h + EI_NIDENT + 2, sizeof(machine));
#if defined(__x86_64__)
	return machine == EM_X86_64;
#elif defined(__aarch64__)
	return machine == EM_AARCH64;
#elif defined(__s390x__)
	return machine == EM_S390;
#elif defined(__riscv)
	return machine == EM_RISCV;
#else
	return true;
#endif
}

/* Does a mapped file's base name answer to name ("libc.so.6", or "libc"
 * for "libc.so.6")? */
static bool basename_matches(const char *path, const char *name)
{
	const char *base = strrchr(path, '/');
	size_t len = strlen(name);

	base = base ? base + 1 : path;
	return !strcmp(base, name) ||
	       (!strncmp(base, name, len) && base[len] == '.');
}

/* Look for name in dir; on success *out is a malloc'ed path. */
static bool try_dir(const char *dir, size_t dir_len, const char *name,
		    char **out)
{
	char *p;

	if (asprintf(&p, "%.*s/%s", (int)dir_len, dir_len ? dir : ".",
		     name) < 0)
		return false;
	if (elf_for_host(p)) {
		*out = p;
		return true;
	}
	free(p);
	return false;
}

/*
 * The loader's cache, /etc/ld.so.cache, in its current format: the header
 * "glibc-ld.so.cache1.1", the entry count at 20, then 24-byte entries from
 * offset 48, each {int32 flags, uint32 key, uint32 value, uint32 osversion,
 * uint64 hwcap} where key and value are offsets of strings from the start
 * of the file. The old "ld.so-1.7.0" format prefix is skipped.
 */
static char *search_ld_cache(const char *name)
{
	static const char magic_new[] = "glibc-ld.so.cache1.1";
	static const char magic_old[] = "ld.so-1.7.0";
	char *buf = NULL, *found = NULL;
	size_t len = 0, base = 0, i, cnt;
	struct stat st;
	uint32_t n;
	FILE *f;

	f = fopen("/etc/ld.so.cache", "re");
	if (!f)
		return NULL;
	if (fstat(fileno(f), &st) || st.st_size <= 0 || st.st_size > (64 << 20))
		goto out;
	len = (size_t)st.st_size;
	buf = malloc(len);
	if (!buf || fread(buf, 1, len, f) != len)
		goto out;
	if (len >= sizeof(magic_old) - 1 &&
	    !memcmp(buf, magic_old, sizeof(magic_old) - 1)) {
		/* Old header (12 bytes + count), 12-byte entries; the new
		 * table follows, 8-byte aligned. */
		uint32_t old_n;

		if (len < 16)
			goto out;
		memcpy(&old_n, buf + 12, 4);
		base = 16 + (size_t)old_n * 12;
		base = (base + 7) & ~(size_t)7;
	}
	if (base + 48 > len ||
	    memcmp(buf + base, magic_new, sizeof(magic_new) - 1))
		goto out;
	memcpy(&n, buf + base + 20, 4);
	cnt = n;
	for (i = 0; i < cnt; i++) {
		size_t e = base + 48 + i * 24;
		uint32_t key, value;

		if (e + 24 > len)
			break;
		memcpy(&key, buf + e + 4, 4);
		memcpy(&value, buf + e + 8, 4);
		/* The new format's offsets are from the start of its header. */
		if (base + key >= len || base + value >= len)
			continue;
		if (!memchr(buf + base + key, 0, len - base - key) ||
		    !memchr(buf + base + value, 0, len - base - value))
			continue;
		if (strcmp(buf + base + key, name))
			continue;
		if (elf_for_host(buf + base + value)) {
			found = strdup(buf + base + value);
			break;
		}
	}
out:
	free(buf);
	fclose(f);
	return found;
}

static char *search_like_loader(const char *name)
{
	static const char *const dirs[] = {
#if defined(__x86_64__)
		"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
#elif defined(__aarch64__)
		"/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
#elif defined(__s390x__)
		"/lib/s390x-linux-gnu", "/usr/lib/s390x-linux-gnu",
#elif defined(__riscv)
		"/lib/riscv64-linux-gnu", "/usr/lib/riscv64-linux-gnu",
#endif
		"/lib64", "/usr/lib64", "/lib", "/usr/lib", "/usr/local/lib",
	};
	const char *env = getenv("LD_LIBRARY_PATH");
	char *found = NULL;
	size_t i;

	while (env && *env) {
		size_t n = strcspn(env, ":;");

		if (try_dir(env, n, name, &found))
			return found;
		env += n;
		if (*env)
			env++;
	}
	found = search_ld_cache(name);
	if (found)
		return found;
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (try_dir(dirs[i], strlen(dirs[i]), name, &found))
			return found;
	return NULL;
}

bool target_is_mapped(const char *name, pid_t pid)
{
	struct target *mapped = NULL;
	bool found = false;
	int cnt, i;

	cnt = targets_of_pid(pid, &mapped);
	for (i = 0; i < cnt && !found; i++)
		found = basename_matches(mapped[i].shown, name);
	targets_free(mapped, cnt > 0 ? cnt : 0);
	return found;
}

int target_resolve(const char *name, pid_t pid, struct target *out)
{
	struct target *mapped = NULL;
	char *found;
	int err, cnt, i;

	memset(out, 0, sizeof(*out));
	if (strchr(name, '/'))
		return target_set(out, name, pid);

	if (pid > 0) {
		cnt = targets_of_pid(pid, &mapped);
		if (cnt < 0)
			return cnt;
		for (i = 0; i < cnt; i++) {
			if (basename_matches(mapped[i].shown, name)) {
				err = target_set(out, mapped[i].shown, pid);
				targets_free(mapped, cnt);
				return err;
			}
		}
		targets_free(mapped, cnt);
	} else if (!access(name, F_OK)) {
		/* A file in the current directory, as the user typed it. */
		return target_set(out, name, 0);
	}

	found = search_like_loader(name);
	if (!found)
		return -ENOENT;
	err = target_set(out, found, 0);
	free(found);
	return err;
}

int targets_of_pid(pid_t pid, struct target **out)
{
	struct target *list = NULL, *tmp;
	char path[64], *line = NULL;
	size_t cap = 0, alloc = 0;
	int cnt = 0, err = 0, i;
	FILE *f;

	*out = NULL;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		unsigned long inode;
		char *file, *nl;
		bool dup = false;

		/* "start-end perms offset dev inode   path" */
		if (sscanf(line, "%*s %*s %*s %*s %lu", &inode) != 1 || !inode)
			continue;
		file = strchr(line, '/');
		if (!file)
			continue;
		nl = strchr(file, '\n');
		if (nl)
			*nl = '\0';
		/* A deleted file can no longer be opened by its path. */
		if (strstr(file, " (deleted)"))
			continue;
		for (i = 0; i < cnt && !dup; i++)
			dup = !strcmp(list[i].shown, file);
		if (dup)
			continue;
		if ((size_t)cnt == alloc) {
			alloc = alloc ? alloc * 2 : 16;
			tmp = realloc(list, alloc * sizeof(*list));
			if (!tmp) {
				err = -ENOMEM;
				break;
			}
			list = tmp;
		}
		err = target_set(&list[cnt], file, pid);
		if (err)
			break;
		cnt++;
	}
	free(line);
	fclose(f);
	if (err) {
		targets_free(list, cnt);
		return err;
	}
	*out = list;
	return cnt;
}

/* ---------------------------------------------------------------------- */
/* Output helpers                                                         */

void json_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	for (; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			/* Notes are untrusted bytes, maybe not UTF-8: every
			 * byte outside printable ASCII becomes a code point of
			 * its own (a Latin-1 reading), so the output is always
			 * valid JSON. */
			if (*p < 0x20 || *p >= 0x7f)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

const char *arg_type_name(const struct usdt_arg_info *a)
{
	if (a->is_float) {
		switch (a->size) {
		case 4:
			return "float";
		case 8:
			return "double";
		case 16:
			return "float128";
		default:
			return "float?";
		}
	}
	switch (a->size) {
	case 1:
		return a->is_signed ? "int8" : "uint8";
	case 2:
		return a->is_signed ? "int16" : "uint16";
	case 4:
		return a->is_signed ? "int32" : "uint32";
	case 8:
		return a->is_signed ? "int64" : "uint64";
	case 16:
		return a->is_signed ? "int128" : "uint128";
	default:
		return "?";
	}
}
