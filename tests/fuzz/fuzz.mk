# SPDX-License-Identifier: BSD-2-Clause
#
# libFuzzer targets, included by the Makefile.
#
#   make fuzz                    build every target into build/fuzz/
#   make fuzz FUZZ_SECONDS=N     build, then run each target N seconds
#
# Every tests/fuzz/fuzz_<name>.c is one target, build/fuzz/fuzz_<name>,
# linked with the library's sources compiled for fuzzing (clang,
# -fsanitize=fuzzer-no-link,address,undefined). Its seed corpus is
# tests/fuzz/corpus/fuzz_<name>/ (read only); what the fuzzer finds goes to
# build/fuzz/corpus/fuzz_<name>/, crashes to build/fuzz/fuzz_<name>-crash-*.
# A tests/fuzz/fuzz_<name>.dict, if present, is passed as -dict.
# Extra libFuzzer options: FUZZ_ARGS="-jobs=2 -max_len=256".

FUZZ_CC ?= $(CLANG)
FUZZ_DIR := build/fuzz
FUZZ_SECONDS ?= 0
FUZZ_ARGS ?=
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all \
	    -fno-omit-frame-pointer
FUZZ_CFLAGS := -std=gnu11 -g -O1 -Wall -Wextra -Werror -Wno-unused-parameter \
	       -Wno-missing-field-initializers \
	       -D_GNU_SOURCE -DUSDT_FUZZ -Iinclude -Isrc -Ibpf $(FUZZ_SAN)

FUZZ_SRCS := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(FUZZ_DIR)/%,$(FUZZ_SRCS))
FUZZ_LIB_OBJS := $(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(LIB_SRCS))

$(FUZZ_DIR)/obj/%.o: %.c $(HDRS)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_LIB_OBJS) $(HDRS)
	$(call msg,FUZZ,$@)
	@mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $< $(FUZZ_LIB_OBJS) \
		-o $@ $(LIBS)

fuzz: $(FUZZ_BINS)
ifneq ($(FUZZ_SECONDS),0)
	$(Q)set -e; for bin in $(FUZZ_BINS); do \
		t=$$(basename $$bin); \
		mkdir -p $(FUZZ_DIR)/corpus/$$t tests/fuzz/corpus/$$t; \
		dict=; [ -f tests/fuzz/$$t.dict ] && dict=-dict=tests/fuzz/$$t.dict; \
		echo "  FUZZ     $$t for $(FUZZ_SECONDS)s"; \
		$$bin -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
			-artifact_prefix=$(FUZZ_DIR)/$$t- $$dict $(FUZZ_ARGS) \
			$(FUZZ_DIR)/corpus/$$t tests/fuzz/corpus/$$t; \
	done
endif
