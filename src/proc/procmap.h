/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Process identity (src/proc/procmap.c): the one parser of /proc/PID/maps, how
 * maps shows a file, whether a mapping is that file's, and opening it.
 * The `usdt` tool uses it too (tools/common.c, tools/trace_stack.c), so
 * this header includes system headers only, not internal.h.
 */
#ifndef __LIBUSDT_PROCMAP_H
#define __LIBUSDT_PROCMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/types.h>

struct usdt_file;

/*
 * How /proc/PID/maps shows a file, and how to tell its mappings there from
 * other files' (usdt__map_id(), usdt__mapping_is()).
 * Invariant: without confirm, no other file shows dev/ino in maps; with
 * it, no other file's mapping has mf_dev/mf_ino as the stat() of its
 * /proc/PID/map_files/START-END.
 */
struct usdt__map_id {
	dev_t dev; /* what maps shows for it */
	ino_t ino;
	bool confirm; /* others may show dev/ino too (btrfs) */
	int mf_err;   /* 0, or why mf_dev/mf_ino are unknown */
	dev_t mf_dev; /* stat() of a mapping of it through */
	ino_t mf_ino; /* /proc/PID/map_files/ */
};

/*
 * One line of /proc/PID/maps. path points into the line: what maps shows
 * after the inode, less " (deleted)"; "" for a mapping with no name, else
 * a path ("/...") or a name that is none ("[heap]", "anon_inode:[...]").
 * A file-backed mapping has an inode and a path.
 */
struct usdt__mapping {
	uint64_t start, end, off;
	dev_t dev;
	ino_t ino;
	bool exec;
	bool deleted; /* " (deleted)" was cut off path */
	const char *path;
};

/* /proc/PID/maps (pid 0: our own, /proc/self), opened for
 * usdt__maps_next(); NULL with errno. */
FILE *usdt__maps_open(pid_t pid);
/*
 * Parse one line of maps into m, cutting its newline and " (deleted)" off
 * in place. 0, or -EINVAL for a line that is not one (m is then
 * unchanged).
 */
int usdt__maps_parse(char *line, struct usdt__mapping *m);
/* The next file-backed mapping (1), or the end (0); malformed lines are
 * passed over. *line and *cap are getline()'s buffer, freed by the
 * caller. */
int usdt__maps_next(FILE *f, char **line, size_t *cap, struct usdt__mapping *m);
/* As usdt__maps_next(), but every mapping, anonymous ones too. */
int usdt__maps_next_any(FILE *f, char **line, size_t *cap,
			struct usdt__mapping *m);
/*
 * How maps shows the file open at fd, whose fstat() is st: st's device and
 * inode, except on overlayfs before Linux 6.8 (the file below the overlay)
 * and on btrfs (the file system's device, not the subvolume's: inode
 * numbers repeat there, so its mappings are confirmed).
 */
struct stat;
void usdt__map_id(int fd, const struct stat *st, struct usdt__map_id *id);
/*
 * Is mapping m of process pid a mapping of the file that id describes?
 * 1 or 0; a negative errno if it could not be told (-EPERM: reading
 * /proc/PID/map_files/ needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE).
 */
int usdt__mapping_is(pid_t pid, const struct usdt__mapping *m,
		     const struct usdt__map_id *id);
/*
 * Open the file of mapping m of process pid (a regular file only), the
 * first of these that is the mapped inode (usdt__mapping_is()):
 * /proc/PID/map_files/START-END, the mapping itself (with CAP_SYS_ADMIN
 * or CAP_CHECKPOINT_RESTORE); else, looked up inside the process's root
 * (src/base/openpath.c), /proc/PID/root/PATH, or /proc/PID/root/REST where
 * PATH is the process's root as we see it followed by REST (a process
 * chrooted in our mount namespace, whose maps show our paths). A deleted
 * file, or one mapped from outside the process's root, is only reached
 * through map_files/. Where no way can be told (-EPERM: no
 * CAP_SYS_ADMIN), the first whose file maps shows by the mapping's device
 * and inode. The path used goes to out. Returns the fd or a negative
 * errno (-ENOSYS: no way, and no openat2() to look inside the root).
 */
int usdt__open_mapping(pid_t pid, const struct usdt__mapping *m, char *out,
		       size_t out_sz);

/*
 * How maps shows file (one read from a descriptor): usdt__map_id() of
 * it, worked out on the first call and kept with the file (also when the
 * file is shared: the first result stays). Returns 0 with *id set, or
 * -ENOMEM.
 */
int usdt__file_map_id(const struct usdt_file *file,
		      const struct usdt__map_id **id);

/* Has process pid ended: gone, unknown, or a zombie (state Z or X in
 * /proc/PID/stat)? For the attach, and the tool without a pidfd. */
bool usdt__proc_gone(pid_t pid);

/* This process's open descriptors below limit (the ones that use up the
 * limit's room), or -1 when /proc cannot say. */
long usdt__open_fds_below(rlim_t limit);

#endif /* __LIBUSDT_PROCMAP_H */
