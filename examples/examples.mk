# SPDX-License-Identifier: BSD-2-Clause
# make examples: the example application, built against the in-tree
# library the way a user builds against the installed one (see
# examples/Makefile.standalone for that).

EXAMPLES_DIR := $(OBJDIR)/examples

examples: $(EXAMPLES_DIR)/hello $(EXAMPLES_DIR)/hello_skel \
	$(EXAMPLES_DIR)/counters $(EXAMPLES_DIR)/target

$(EXAMPLES_DIR)/target: examples/target.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -g -O2 -Wall -Wextra -Werror -o $@ $<

$(OBJDIR)/bpf/examples/hello.bpf.o: examples/hello.h
$(OBJDIR)/bpf/examples/hello_skel.bpf.o: examples/hello.h examples/hello.bpf.c

# hello (usdt_manager__attach()) and hello_skel (SEC("usdt/..."), the
# skeleton's __attach(), no manager).
# They include <usdt/usdt.h>, as a user's code does: OBJDIR/include
# first, so that they see the installed layout.
$(EXAMPLES_DIR)/%: examples/%.c examples/hello.h \
		$(OBJDIR)/skel/examples/%.skel.h $(STATIC_LIB) $(PUBLIC_LINKS)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -I$(PUBLIC_INC) $(ALL_CFLAGS) -I$(OBJDIR)/skel/examples \
		-o $@ $< $(STATIC_LIB) $(ALL_LDFLAGS) $(LIBS)

# Per-attach storage: one program, two probes, counters read in place.
$(OBJDIR)/bpf/examples/counters.bpf.o: examples/counters.h
$(EXAMPLES_DIR)/counters: examples/counters.h
