# stepcast - GNU make is the front door.
#
#   make            build libstepcast.a and build/stepcast
#   make demo       install missing packages, build, run on the bundled example
#   make test       install missing packages, build, run the test suite
#                   (the C tests, then the Python module's, tests/python/)
#   make install    PREFIX=/usr/local DESTDIR=: the CLI, libraries, header,
#                   pkg-config file, man page, bash completion, Python module
#   make uninstall  removes what make install put there (same variables)
#   make programs   build the library, the CLI, the test and bench programs;
#                   run nothing (CI's warnings-as-errors builds)
#   make check      the test suite under ASan + UBSan (build-asan/; with
#                   CC=clang, clang's sanitizers in build-asan-clang/)
#   make tsan       the tests that run threads under ThreadSanitizer, on
#                   small inputs (build-tsan/)
#   make bench      throughput and memory figures
#   make fuzz       libFuzzer targets (clang), FUZZ_SECONDS per target
#   make valgrind   the CLI over the shared traces under valgrind
#   make valgrind-tests  the same, and every test program under valgrind
#   make interop    builds ASTRA-sim (once, into $(BUILD)/astra-sim) and runs
#                   it on the Chakra exports of the 8-rank shared sets
#
# Variables: CC, BUILD (output folder), OPT (default -O2; -O1 under the
# sanitizers), CFLAGS (added after ours), SAN=1 (ASan + UBSan) or
# SAN=thread, WERROR=1.
#
# A folder holds one configuration: $(BUILD)/.flags records the compiler and
# flags its files were built with, and every object and program depends on
# it, so a change of CC, CFLAGS, OPT, SAN, WERROR (or of the flags in this
# file) rebuilds the folder rather than mixing old objects in.

CC      ?= cc
BUILD   ?= build
OPT     ?= $(if $(SAN)$(FUZZ),-O1,-O2)
CSTD     = -std=c17 -D_GNU_SOURCE
WARN     = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wno-unused-parameter
ifeq ($(WERROR),1)
WARN    += -Werror
endif
ifeq ($(SAN),1)
SANFLAGS = -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
LDSAN    = -fsanitize=address,undefined
endif
ifeq ($(SAN),thread)
SANFLAGS = -fno-omit-frame-pointer -fsanitize=thread
LDSAN    = -fsanitize=thread
endif
# Ours first, the caller's CFLAGS last (so that they can override ours):
# `make CFLAGS=...` adds to the flags instead of replacing them.
SC_CFLAGS = $(CSTD) $(OPT) $(SANFLAGS) -g $(WARN) -Iinclude -fvisibility=hidden -pthread $(CFLAGS)
LDLIBS   = -lisal -lz -lm -pthread $(LDSAN)

LIB_SRC  := $(sort $(wildcard src/*/*.c))
CLI_SRC  := $(sort $(wildcard cli/*.c))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/gen/benchgen_template.o
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
TEST_SRC := $(sort $(wildcard tests/test_*.c))
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
BENCH_SRC := $(sort $(wildcard bench/*.c))
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)

.PHONY: all programs deps demo test check tsan bench fuzz clean FORCE
all: $(BUILD)/stepcast

programs: $(BUILD)/stepcast $(TEST_BIN) $(BENCH_BIN)

# The flags stamp: rewritten only when the text differs, so that its time
# changes (and everything in the folder is rebuilt) only then. Its
# prerequisite FORCE makes make look at it on every run.
FLAGS_TEXT = $(strip $(CC) $(SC_CFLAGS) | $(LDLIBS))
sc_same = $(and $(findstring x$(1)x,x$(2)x),$(findstring x$(2)x,x$(1)x))
$(BUILD)/.flags: FORCE
	@$(if $(call sc_same,$(FLAGS_TEXT),$(strip $(file <$@))),:,$(shell mkdir -p $(@D))$(file >$@,$(FLAGS_TEXT))echo "$(@D)/: new compiler or flags, building everything in it")
FORCE:

$(BUILD)/obj/%.o: %.c $(BUILD)/.flags
	@mkdir -p $(dir $@)
	$(CC) $(SC_CFLAGS) -MMD -MP -c $< -o $@

# The program `stepcast benchgen` writes: src/report/benchgen_template.py
# as a C string (one line of Python per line of C).
$(BUILD)/gen/benchgen_template.c: src/report/benchgen_template.py
	@mkdir -p $(dir $@)
	{ echo '/* generated from $< by the Makefile */'; echo 'const char sc__benchgen_template[] ='; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $<; echo ';'; } > $@
$(BUILD)/obj/gen/benchgen_template.o: $(BUILD)/gen/benchgen_template.c $(BUILD)/.flags
	@mkdir -p $(dir $@)
	$(CC) $(SC_CFLAGS) -c $< -o $@

$(BUILD)/libstepcast.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/stepcast: $(CLI_OBJ) $(BUILD)/libstepcast.a $(BUILD)/.flags
	$(CC) $(SC_CFLAGS) -o $@ $(filter-out %/.flags,$^) $(LDLIBS)

$(BUILD)/tests/%: tests/%.c $(wildcard tests/*.h) $(BUILD)/libstepcast.a $(BUILD)/.flags
	@mkdir -p $(dir $@)
	$(CC) $(SC_CFLAGS) -Isrc -o $@ $< $(BUILD)/libstepcast.a $(LDLIBS) -lcmocka $(TEST_LDLIBS)

# yajl is the reader's test oracle: only this test program links it.
$(BUILD)/tests/test_oracle: TEST_LDLIBS = -lyajl

$(BUILD)/bench/%: bench/%.c $(BUILD)/libstepcast.a $(BUILD)/.flags
	@mkdir -p $(dir $@)
	$(CC) $(SC_CFLAGS) -Isrc -o $@ $< $(BUILD)/libstepcast.a $(LDLIBS)

deps:
	@sh scripts/install-deps.sh

demo: deps
	@$(MAKE) --no-print-directory all
	$(BUILD)/stepcast info examples/megatron-tp8
	$(BUILD)/stepcast replay examples/megatron-tp8

test: deps
	@$(MAKE) --no-print-directory all $(TEST_BIN) $(BUILD)/$(SC_SO)
	@$(MAKE) --no-print-directory -s install-test
	@sh tests/run.sh $(BUILD)

# CHECK_BUILD: the folder of the sanitizer build, one per compiler so that
# objects of gcc and clang never mix (CI runs it with CC=clang only, whose
# UBSan checks more, e.g. offsets applied to NULL).
CHECK_BUILD ?= build-asan$(if $(findstring clang,$(CC)),-clang)
check: deps
	@$(MAKE) --no-print-directory BUILD=$(CHECK_BUILD) SAN=1 all \
	  $(TEST_SRC:tests/%.c=$(CHECK_BUILD)/tests/%)
	@sh tests/run.sh $(CHECK_BUILD)

# The tests whose code runs threads: the parallel reader (plain and gzip),
# the chunk store, parallel loading (also with info's per-rank summaries),
# the parallel graph build, and the prefault helper (alone and in the
# simulator). Built with ThreadSanitizer, they leave out the large shared
# traces (sc_test_big_ok in tests/testutil.h): the threads, slices and
# chunks are the same on the small ones, at a tenth of the time.
TSAN_TESTS := test_split test_kineto test_graph test_info test_memory test_sim
tsan: deps
	@$(MAKE) --no-print-directory BUILD=build-tsan SAN=thread all \
	  $(TSAN_TESTS:%=build-tsan/tests/%)
	@sh tests/run.sh build-tsan

bench: deps
	@$(MAKE) --no-print-directory all $(BENCH_BIN)
	@sh bench/run.sh $(BUILD)

# ---- hardening: libFuzzer targets and valgrind ----------------------------
# make fuzz [FUZZ_SECONDS=600]: builds fuzz/fuzz_*.c with clang into build-fuzz/
# (libFuzzer + ASan + UBSan; the CLI's main renamed so fuzz_cli can call it),
# makes seeds from ../shared/traces and runs each target for FUZZ_SECONDS.
# make valgrind: the CLI over the shared traces under valgrind (leaks and
# invalid accesses are errors). The test programs are left to `make check`:
# ASan finds those errors in them in about 2 minutes, where valgrind took 8.
FUZZ_SECONDS ?= 600
FUZZ_SRC := $(sort $(wildcard fuzz/fuzz_*.c))
ifeq ($(FUZZ),1)
SANFLAGS = -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined \
           -fno-sanitize-recover=undefined
LDSAN    = -fsanitize=fuzzer,address,undefined
# private: not passed on to its prerequisites (the flags stamp)
$(BUILD)/obj/cli/main.o: private SC_CFLAGS += -Dmain=sc__cli_main
endif

$(BUILD)/fuzz/%: fuzz/%.c $(BUILD)/libstepcast.a $(BUILD)/.flags
	@mkdir -p $(dir $@)
	$(CC) $(SC_CFLAGS) -Isrc -o $@ $< $(filter %.o,$^) $(BUILD)/libstepcast.a $(LDLIBS)
$(BUILD)/fuzz/fuzz_cli: $(CLI_OBJ)

fuzz: deps
	@$(MAKE) --no-print-directory BUILD=build-fuzz CC=clang FUZZ=1 \
	  $(FUZZ_SRC:fuzz/%.c=build-fuzz/fuzz/%)
	@sh fuzz/run.sh build-fuzz $(FUZZ_SECONDS)

valgrind: deps
	@$(MAKE) --no-print-directory all
	@sh tests/valgrind.sh $(BUILD)

# The CLI runs and every test program under valgrind (about 8 more minutes
# on 2 cores): not in CI, where ASan covers the test programs.
valgrind-tests: deps
	@$(MAKE) --no-print-directory all $(TEST_BIN)
	@VALGRIND_TESTS=1 sh tests/valgrind.sh $(BUILD)

.PHONY: valgrind valgrind-tests
# ---- end of hardening block ------------------------------------------------

# make interop: stepcast's Chakra exports on ASTRA-sim (tests/interop.sh):
# ASTRA-sim is built once from ../shared/tools/astra-sim into
# $(BUILD)/astra-sim, then both 8-rank shared sets are exported in every mode
# and must run to the end on it. Without the packages ASTRA-sim builds with
# (installed here as root; otherwise install-deps prints the command), it
# says so and skips.
interop:
	@sh scripts/install-deps.sh interop || echo "interop: could not install the packages ASTRA-sim needs"
	@$(MAKE) --no-print-directory all
	@bash tests/interop.sh $(BUILD)

.PHONY: interop

# ---- install ----------------------------------------------------------------
# make install [PREFIX=/usr/local] [DESTDIR=]: the CLI, libstepcast.a, the
# shared library (its soname is libstepcast.so.MAJOR, or .0.MINOR before 1.0,
# when any minor release may change the option structs), stepcast.h,
# stepcast.pc, the man page, bash completion and the Python module. The
# version is the header's SC_VERSION_STRING, read from it here. The shared
# library is built from a position-independent copy of the library's objects
# ($(BUILD)/pic/), so that the CLI, the tests and the bench keep theirs.
# make install-test (run by `make test`): installs into $(BUILD)/install-test
# with PREFIX=/usr, where tests/install.sh (from tests/python/test_install.py)
# builds a program with pkg-config and runs the Python module; and installs
# then uninstalls into $(BUILD)/uninstall-test, which must be left empty.
SC_VERSION   := $(shell sed -n 's/^\#define SC_VERSION_STRING "\(.*\)"$$/\1/p' include/stepcast.h)
SC_MAJOR     := $(word 1,$(subst ., ,$(SC_VERSION)))
SC_MINOR     := $(word 2,$(subst ., ,$(SC_VERSION)))
SC_SOVERSION := $(if $(filter 0,$(SC_MAJOR)),0.$(SC_MINOR),$(SC_MAJOR))
SC_SO        := libstepcast.so.$(SC_VERSION)
SC_SONAME    := libstepcast.so.$(SC_SOVERSION)
PIC_OBJ      := $(LIB_SRC:%.c=$(BUILD)/pic/%.o) $(BUILD)/pic/gen/benchgen_template.o
PY_SRC       := $(sort $(wildcard python/stepcast/*.py))

PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR     ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
PYTHONDIR  ?= $(PREFIX)/lib/python3/dist-packages
INSTALL    ?= install

$(BUILD)/pic/%.o: %.c $(BUILD)/.flags
	@mkdir -p $(dir $@)
	$(CC) $(SC_CFLAGS) -fPIC -MMD -MP -c $< -o $@
$(BUILD)/pic/gen/benchgen_template.o: $(BUILD)/gen/benchgen_template.c $(BUILD)/.flags
	@mkdir -p $(dir $@)
	$(CC) $(SC_CFLAGS) -fPIC -c $< -o $@

# Only the sc_ names of stepcast.h are exported (-fvisibility=hidden).
$(BUILD)/$(SC_SO): $(PIC_OBJ) $(BUILD)/.flags
	$(CC) $(SC_CFLAGS) -shared -Wl,-soname,$(SC_SONAME) -Wl,--no-undefined -o $@ $(PIC_OBJ) $(LDLIBS)
	ln -sf $(SC_SO) $(BUILD)/$(SC_SONAME)
	ln -sf $(SC_SO) $(BUILD)/libstepcast.so

shared: $(BUILD)/$(SC_SO)

$(BUILD)/stepcast.pc: scripts/stepcast.pc.in $(BUILD)/.flags FORCE
	@sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCLUDEDIR@|$(INCLUDEDIR)|; s|@VERSION@|$(SC_VERSION)|' $< >$@

install: $(BUILD)/stepcast $(BUILD)/libstepcast.a $(BUILD)/$(SC_SO) $(BUILD)/stepcast.pc
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR) \
	  $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(PYTHONDIR)/stepcast
	$(INSTALL) -m 755 $(BUILD)/stepcast $(DESTDIR)$(BINDIR)/stepcast
	$(INSTALL) -m 644 $(BUILD)/libstepcast.a $(DESTDIR)$(LIBDIR)/libstepcast.a
	$(INSTALL) -m 755 $(BUILD)/$(SC_SO) $(DESTDIR)$(LIBDIR)/$(SC_SO)
	ln -sf $(SC_SO) $(DESTDIR)$(LIBDIR)/$(SC_SONAME)
	ln -sf $(SC_SO) $(DESTDIR)$(LIBDIR)/libstepcast.so
	$(INSTALL) -m 644 include/stepcast.h $(DESTDIR)$(INCLUDEDIR)/stepcast.h
	$(INSTALL) -m 644 $(BUILD)/stepcast.pc $(DESTDIR)$(LIBDIR)/pkgconfig/stepcast.pc
	$(INSTALL) -m 644 doc/stepcast.1 $(DESTDIR)$(MANDIR)/man1/stepcast.1
	$(INSTALL) -m 644 scripts/stepcast-completion.bash $(DESTDIR)$(BASHCOMPDIR)/stepcast
	$(INSTALL) -m 644 $(PY_SRC) $(DESTDIR)$(PYTHONDIR)/stepcast/

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/stepcast $(DESTDIR)$(LIBDIR)/libstepcast.a \
	  $(DESTDIR)$(LIBDIR)/$(SC_SO) $(DESTDIR)$(LIBDIR)/$(SC_SONAME) $(DESTDIR)$(LIBDIR)/libstepcast.so \
	  $(DESTDIR)$(INCLUDEDIR)/stepcast.h $(DESTDIR)$(LIBDIR)/pkgconfig/stepcast.pc \
	  $(DESTDIR)$(MANDIR)/man1/stepcast.1 $(DESTDIR)$(BASHCOMPDIR)/stepcast
	rm -rf $(DESTDIR)$(PYTHONDIR)/stepcast

install-test: $(BUILD)/stepcast $(BUILD)/libstepcast.a $(BUILD)/$(SC_SO)
	rm -rf $(BUILD)/install-test $(BUILD)/uninstall-test
	$(MAKE) --no-print-directory install DESTDIR=$(abspath $(BUILD)/install-test) PREFIX=/usr
	$(MAKE) --no-print-directory install DESTDIR=$(abspath $(BUILD)/uninstall-test) PREFIX=/usr
	$(MAKE) --no-print-directory uninstall DESTDIR=$(abspath $(BUILD)/uninstall-test) PREFIX=/usr

.PHONY: shared install uninstall install-test
# ---- end of install block ----------------------------------------------------

clean:
	rm -rf build build-asan build-asan-clang build-clang build-fuzz build-tsan

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(PIC_OBJ:.o=.d)
