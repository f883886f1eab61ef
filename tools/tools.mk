# SPDX-License-Identifier: BSD-2-Clause
# The `usdt` tool, its man page, and `make demo`. Included by the Makefile.
#
# The tool is built the way a user's program would be: the public header,
# the static library, libbpf, and a bpftool skeleton of its BPF program.
# Only /proc/PID/maps and its patterns it reads with the library's own code
# (src/proc/procmap.h, src/base/match.h: tools/tool.h says why).

TOOL := $(OBJDIR)/usdt
TOOL_SRCS := tools/usdt.c tools/common.c tools/list.c tools/trace_cmd.c \
	tools/trace_fmt.c tools/trace_filter.c tools/trace_sum.c tools/trace_files.c \
	tools/trace_watch.c tools/trace_all.c tools/trace_stack.c tools/trace_table.c \
	tools/trace_load.c tools/trace_peek.c tools/trace_prom.c tools/trace_http.c \
	tools/trace_time.c
TOOL_SKEL := $(OBJDIR)/skel/tools/usdt_trace.skel.h
TOOL_CFLAGS := $(ALL_CFLAGS) -I$(OBJDIR)/skel/tools -Itools
TOOL_OBJS := $(patsubst %.c,$(OBJDIR)/%.o,$(TOOL_SRCS))

tools: $(TOOL)

$(OBJDIR)/tools/%.o: tools/%.c tools/tool.h tools/trace.h tools/trace_event.h \
		include/usdt.h src/proc/procmap.h src/base/match.h $(TOOL_SKEL)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(TOOL_CFLAGS) -c $< -o $@

$(TOOL): $(TOOL_OBJS) $(STATIC_LIB)
	$(call msg,LD,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -pthread -o $@ $(TOOL_OBJS) $(STATIC_LIB) $(LIBS)

$(OBJDIR)/bpf/tools/usdt_trace.bpf.o: tools/trace_event.h

install-extra:: $(TOOL)
	$(call msg,INSTALL,$(DESTDIR)$(BINDIR)/usdt)
	$(Q)install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1
	$(Q)install -m 755 $(TOOL) $(DESTDIR)$(BINDIR)/usdt
	$(Q)install -m 644 man/usdt.1 $(DESTDIR)$(MANDIR)/man1/usdt.1

# ----------------------------------------------------------------------
# make demo: a new user's first minute. Installs what is missing, builds
# the library, the tool and a target whose probes have arguments of many
# shapes, lists them, then traces the target live.

DEMO_TARGET := $(OBJDIR)/demo_target
DEMO_SECONDS ?= 3
DEMO_LINES ?= 40

$(DEMO_TARGET): examples/demo_target.c examples/demo_sema.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -g -O2 -Wall -Wextra -Werror -o $@ $^

demo:
	$(Q)scripts/deps.sh
	$(Q)$(MAKE) --no-print-directory lib tools $(DEMO_TARGET)
	@echo
	@echo '$$ $(TOOL) list $(DEMO_TARGET)'
	$(Q)$(TOOL) list $(DEMO_TARGET)
	$(Q)if [ "$$(id -u)" = 0 ]; then \
		echo; \
		echo '$$ $(TOOL) trace -n $(DEMO_LINES) -c "$(DEMO_TARGET) $(DEMO_SECONDS)" $(DEMO_TARGET) "*:*"'; \
		$(TOOL) trace -n $(DEMO_LINES) -c "$(DEMO_TARGET) $(DEMO_SECONDS)" \
			$(DEMO_TARGET) '*:*'; \
		echo; \
		echo '# a string argument, printed with a format:'; \
		echo '$$ $(TOOL) trace -n 3 -c "$(DEMO_TARGET) 1" $(DEMO_TARGET) demo:string "path=%s round=%d"'; \
		$(TOOL) trace -n 3 -c "$(DEMO_TARGET) 1" $(DEMO_TARGET) \
			demo:string 'path=%s round=%d'; \
		echo; \
		echo '# hits per probe, counted in the kernel:'; \
		echo '$$ $(TOOL) trace --count -c "$(DEMO_TARGET) 1" $(DEMO_TARGET)'; \
		$(TOOL) trace --count -c "$(DEMO_TARGET) 1" $(DEMO_TARGET); \
	else \
		echo "(tracing needs root: run 'sudo make demo' to see it live)"; \
	fi
