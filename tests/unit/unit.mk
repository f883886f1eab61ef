# Link hooks of the unit tests.

# The spec-ID allocator runs against a fake map: libbpf's map calls are
# wrapped by the test.
LDFLAGS_test_specids := -Wl,--wrap=bpf_map__fd \
	-Wl,--wrap=bpf_map__max_entries -Wl,--wrap=bpf_map_update_elem
