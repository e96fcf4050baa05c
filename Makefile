# stepcast - GNU make is the front door.
#
#   make            build libstepcast.a and build/stepcast
#   make demo       install missing packages, build, run on the bundled example
#   make test       install missing packages, build, run the test suite
#   make check      the test suite under ASan + UBSan (build-asan/; with
#                   CC=clang, clang's sanitizers in build-asan-clang/)
#   make tsan       the tests that run threads under ThreadSanitizer
#   make bench      throughput and memory figures
#   make fuzz       libFuzzer targets (clang), FUZZ_SECONDS per target
#   make valgrind   the CLI over the shared traces and the tests under valgrind
#
# Variables: CC, BUILD (output folder), SAN=1 (ASan + UBSan) or SAN=thread,
# WERROR=1.

CC      ?= cc
BUILD   ?= build
OPT     ?= -O2
CSTD     = -std=c17 -D_GNU_SOURCE
WARN     = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wno-unused-parameter
ifeq ($(WERROR),1)
WARN    += -Werror
endif
ifeq ($(SAN),1)
OPT      = -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
LDSAN    = -fsanitize=address,undefined
endif
ifeq ($(SAN),thread)
OPT      = -O1 -fno-omit-frame-pointer -fsanitize=thread
LDSAN    = -fsanitize=thread
endif
CFLAGS  ?=
CFLAGS  += $(CSTD) $(OPT) -g $(WARN) -Iinclude -fvisibility=hidden -pthread
LDLIBS   = -lisal -lz -lm -pthread $(LDSAN)

LIB_SRC  := $(sort $(wildcard src/*/*.c))
CLI_SRC  := $(sort $(wildcard cli/*.c))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
TEST_SRC := $(sort $(wildcard tests/test_*.c))
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
BENCH_SRC := $(sort $(wildcard bench/*.c))
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)

.PHONY: all deps demo test check tsan bench fuzz clean
all: $(BUILD)/stepcast

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/libstepcast.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/stepcast: $(CLI_OBJ) $(BUILD)/libstepcast.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: tests/%.c tests/testutil.h tests/testgraph.h $(BUILD)/libstepcast.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Isrc -o $@ $< $(BUILD)/libstepcast.a $(LDLIBS) -lcmocka $(TEST_LDLIBS)

# yajl is the reader's test oracle: only this test program links it.
$(BUILD)/tests/test_oracle: TEST_LDLIBS = -lyajl

$(BUILD)/bench/%: bench/%.c $(BUILD)/libstepcast.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Isrc -o $@ $< $(BUILD)/libstepcast.a $(LDLIBS)

deps:
	@sh scripts/install-deps.sh

demo: deps
	@$(MAKE) --no-print-directory all
	$(BUILD)/stepcast info examples/megatron-tp8
	$(BUILD)/stepcast replay examples/megatron-tp8

test: deps
	@$(MAKE) --no-print-directory all $(TEST_BIN)
	@sh tests/run.sh $(BUILD)

# CHECK_BUILD: the folder of the sanitizer build, one per compiler so that
# objects of gcc and clang never mix (CI also runs it with CC=clang, whose
# UBSan checks more, e.g. offsets applied to NULL).
CHECK_BUILD ?= build-asan$(if $(findstring clang,$(CC)),-clang)
check: deps
	@$(MAKE) --no-print-directory BUILD=$(CHECK_BUILD) SAN=1 all \
	  $(TEST_SRC:tests/%.c=$(CHECK_BUILD)/tests/%)
	@sh tests/run.sh $(CHECK_BUILD)

# The tests whose code runs threads: the parallel reader (plain and gzip),
# the chunk store, parallel loading (also with info's per-rank summaries),
# the parallel graph build, and the prefault helper (alone and in the
# simulator).
TSAN_TESTS := test_split test_kineto test_graph test_info test_memory test_sim
tsan: deps
	@$(MAKE) --no-print-directory BUILD=build-tsan SAN=thread all \
	  $(TSAN_TESTS:%=build-tsan/tests/%)
	@sh tests/run.sh build-tsan

bench: deps
	@$(MAKE) --no-print-directory all $(BENCH_BIN)
	@sh bench/run.sh $(BUILD)

# ---- hardening (issue 6): libFuzzer targets and valgrind -------------------
# make fuzz [FUZZ_SECONDS=600]: builds fuzz/fuzz_*.c with clang into build-fuzz/
# (libFuzzer + ASan + UBSan; the CLI's main renamed so fuzz_cli can call it),
# makes seeds from ../shared/traces and runs each target for FUZZ_SECONDS.
# make valgrind: the CLI over the shared traces and every test program under
# valgrind (leaks and invalid accesses are errors).
FUZZ_SECONDS ?= 600
FUZZ_SRC := $(sort $(wildcard fuzz/fuzz_*.c))
ifeq ($(FUZZ),1)
OPT      = -O1 -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined \
           -fno-sanitize-recover=undefined
LDSAN    = -fsanitize=fuzzer,address,undefined
$(BUILD)/obj/cli/main.o: CFLAGS += -Dmain=sc__cli_main
endif

$(BUILD)/fuzz/%: fuzz/%.c $(BUILD)/libstepcast.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Isrc -o $@ $< $(filter %.o,$^) $(BUILD)/libstepcast.a $(LDLIBS)
$(BUILD)/fuzz/fuzz_cli: $(CLI_OBJ)

fuzz: deps
	@$(MAKE) --no-print-directory BUILD=build-fuzz CC=clang FUZZ=1 \
	  $(FUZZ_SRC:fuzz/%.c=build-fuzz/fuzz/%)
	@sh fuzz/run.sh build-fuzz $(FUZZ_SECONDS)

valgrind: deps
	@$(MAKE) --no-print-directory all $(TEST_BIN)
	@sh tests/valgrind.sh $(BUILD)

.PHONY: valgrind
# ---- end of hardening block ------------------------------------------------

clean:
	rm -rf build build-asan build-asan-clang build-clang build-fuzz build-tsan

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d)
