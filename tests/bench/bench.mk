# make bench: libusdt side by side with the system's libbpf (root).
BENCH_SKELS := $(OBJDIR)/skel/tests/bench/bench_ours.skel.h \
	       $(OBJDIR)/skel/tests/bench/bench_libbpf.skel.h

# libbpf's usdt.bpf.h includes <linux/errno.h>, which needs the host's asm/.
$(OBJDIR)/bpf/tests/bench/bench_libbpf.bpf.o: BPF_EXTRA_CFLAGS += \
	-idirafter /usr/include/$(shell $(CC) -print-multiarch)

$(OBJDIR)/bench: tests/bench/bench.c $(STATIC_LIB) $(BENCH_SKELS)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -I$(OBJDIR)/skel/tests/bench $< -o $@ \
		$(STATIC_LIB) $(ALL_LDFLAGS) $(LIBS)

bench: $(OBJDIR)/bench
	$(Q)$(OBJDIR)/bench
