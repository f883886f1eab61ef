/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The base layer's contract: logging and errors, hashing, the
 * provider:name matcher, and opening a file someone else controls.
 * What a higher layer includes of this one (tests/layers.sh).
 */
#ifndef __LIBUSDT_BASE_BASE_H_CONTRACT
#define __LIBUSDT_BASE_BASE_H_CONTRACT

#include "base/internal.h"
#include "base/hash.h"
#include "base/match.h"
#include "base/openpath.h"

#endif /* __LIBUSDT_BASE_BASE_H_CONTRACT */
