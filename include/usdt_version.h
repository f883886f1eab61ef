/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef __LIBUSDT_USDT_VERSION_H
#define __LIBUSDT_USDT_VERSION_H

#define USDT_MAJOR_VERSION 0
#define USDT_MINOR_VERSION 1

#endif /* __LIBUSDT_USDT_VERSION_H */
