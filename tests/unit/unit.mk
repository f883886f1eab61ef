# Link hooks of the unit tests.

# The spec-ID allocator runs against a fake map: libbpf's map calls are
# wrapped by the test.
LDFLAGS_test_specids := -Wl,--wrap=bpf_map_update_elem \
	-Wl,--wrap=bpf_map_create -Wl,--wrap=bpf_map_lookup_elem \
	-Wl,--wrap=bpf_map_delete_elem

# test_version reads the pkg-config file. (Before the rule below, whose
# prerequisites are expanded where it stands.)
TEST_DEPS += $(OBJDIR)/libusdt.pc

# The unit tests under valgrind: any error or leak fails the test.
VALGRIND := valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=99
.PHONY: valgrind
valgrind: $(UNIT_BINS) $(TEST_DEPS)
	$(Q)TEST_WRAPPER="$(VALGRIND)" tests/run.sh 1200 $(UNIT_BINS)


# test_fmt_parse compiles the tool's format and filter code into itself.
$(OBJDIR)/tests/unit/test_fmt_parse: tools/common.c tools/trace_fmt.c \
	tools/trace_filter.c \
	tools/trace_stack.c tools/trace_peek.c tools/trace_time.c tools/trace.h \
	tools/trace_event.h tools/tool.h

# test_tool_names compiles the tool's common code into itself.
$(OBJDIR)/tests/unit/test_tool_names: tools/common.c tools/tool.h

# test_prom compiles the tool's Prometheus text and HTTP code into itself.
$(OBJDIR)/tests/unit/test_prom: tools/common.c tools/trace_prom.c \
	tools/trace_http.c tools/trace.h tools/trace_event.h tools/tool.h

# test_header_link: a second file of the program that includes usdt.h.
LDFLAGS_test_header_link := tests/unit/header_second.c
$(OBJDIR)/tests/unit/test_header_link: tests/unit/header_second.c

# test_bpf_header builds a user's program from the public include
# directory (OBJDIR/include) alone.
$(OBJDIR)/tests/unit/test_bpf_header: $(PUBLIC_LINKS)
