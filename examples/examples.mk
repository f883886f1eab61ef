# SPDX-License-Identifier: BSD-2-Clause
# make examples: the example application, built against the in-tree
# library the way a user builds against the installed one (see
# examples/Makefile.standalone for that).

EXAMPLES_DIR := $(OBJDIR)/examples

examples: $(EXAMPLES_DIR)/hello $(EXAMPLES_DIR)/counters $(EXAMPLES_DIR)/target

$(EXAMPLES_DIR)/target: examples/target.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -g -O2 -Wall -Wextra -Werror -o $@ $<

$(OBJDIR)/bpf/examples/hello.bpf.o: examples/hello.h

$(EXAMPLES_DIR)/hello: examples/hello.c examples/hello.h \
		$(OBJDIR)/skel/examples/hello.skel.h $(STATIC_LIB)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -I$(OBJDIR)/skel/examples -o $@ $< \
		$(STATIC_LIB) $(ALL_LDFLAGS) $(LIBS)

# Per-attach storage: one program, two probes, counters read in place.
$(OBJDIR)/bpf/examples/counters.bpf.o: examples/counters.h

$(EXAMPLES_DIR)/counters: examples/counters.c examples/counters.h \
		$(OBJDIR)/skel/examples/counters.skel.h $(STATIC_LIB)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -I$(OBJDIR)/skel/examples -o $@ $< \
		$(STATIC_LIB) $(ALL_LDFLAGS) $(LIBS)
