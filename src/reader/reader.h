/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The reader layer's contract: a file's notes, probes and call sites,
 * read with no kernel, and the per-architecture argument parsers.
 * What a higher layer includes of this one (tests/layers.sh).
 */
#ifndef __LIBUSDT_READER_READER_H_CONTRACT
#define __LIBUSDT_READER_READER_H_CONTRACT

#include "reader/arch_ops.h"
#include "reader/notes.h"
#include "reader/noteidx.h"
#include "reader/file.h"

#endif /* __LIBUSDT_READER_READER_H_CONTRACT */
