# hetplan -- one non-recursive Makefile.
#   make            library and the hetplan tool (build/)
#   make demo       build, then plan and evaluate the bundled examples
#   make test       warnings-fatal build, then the whole test suite (what CI runs)
#   make bench      planning-time benchmark tables (not a test)
#   make bench-mip  the MIP solvers' bound and gap on 16 to 768 GPUs (not a test, ~35 min)
#   make check-asan the test suite under AddressSanitizer + UBSan + LeakSanitizer (build/asan/)
#   make check-valgrind  the unit tests and a few commands under valgrind (build/vg/)
#   make deps       install the Debian packages the project needs (as root)
# Optional parts are switches: CUDA_HOME (the GPU profiler, built only where the
# toolkit is), BUILD (output folder), XCFLAGS (extra flags).

CC       ?= cc
CFLAGS   ?= -O2 -g
BUILD    ?= build
XCFLAGS  ?=
XLDFLAGS ?=
WARN     := -std=c11 -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
            -Wwrite-strings -Wpointer-arith -Wformat=2
CPPFLAGS += -D_POSIX_C_SOURCE=200809L -Iinclude $(shell pkg-config --cflags libcjson 2>/dev/null)
LDLIBS   += $(shell pkg-config --libs libcjson 2>/dev/null || echo -lcjson) -lm -pthread

# The MIP backends are built where their libraries are (Debian: libglpk-dev,
# coinor-libcbc-dev); GLPK=0 or CBC=0 leaves one out.
GLPK ?= $(shell test -f /usr/include/glpk.h && echo 1 || echo 0)
CBC  ?= $(shell pkg-config --exists cbc 2>/dev/null && echo 1 || echo 0)
LIB_SRCS  := $(wildcard src/*.c formulation/*.c solvers/*.c)
ifeq ($(GLPK),1)
CPPFLAGS += -DHP_HAVE_GLPK
LDLIBS   += -lglpk
else
LIB_SRCS := $(filter-out solvers/solver_glpk.c,$(LIB_SRCS))
endif
ifeq ($(CBC),1)
CPPFLAGS += -DHP_HAVE_CBC $(shell pkg-config --cflags cbc | sed 's|-I/usr/include/coin||')
LDLIBS   += $(shell pkg-config --libs cbc)
else
LIB_SRCS := $(filter-out solvers/solver_cbc.c,$(LIB_SRCS))
endif
CLI_SRCS  := $(wildcard cli/*.c)
TEST_SRCS := $(wildcard tests/unit/*.c)
LIB_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/%.o)
CLI_OBJS  := $(CLI_SRCS:%.c=$(BUILD)/%.o)
TEST_OBJS := $(TEST_SRCS:%.c=$(BUILD)/%.o)

LIB   := $(BUILD)/libhetplan.a
TOOL  := $(BUILD)/hetplan
UNIT  := $(BUILD)/unit_tests

.PHONY: all demo test unit bench bench-mip check-asan check-valgrind deps clean

all: $(TOOL)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) $(XCFLAGS) -MMD -MP -c $< -o $@

$(LIB): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

$(TOOL): $(CLI_OBJS) $(LIB)
	$(CC) $(CFLAGS) $(XCFLAGS) $(XLDFLAGS) -o $@ $(CLI_OBJS) $(LIB) $(LDLIBS)

$(UNIT): $(TEST_OBJS) $(LIB)
	$(CC) $(CFLAGS) $(XCFLAGS) $(XLDFLAGS) -o $@ $(TEST_OBJS) $(LIB) $(LDLIBS)

unit: $(UNIT) $(TOOL)

BENCH := $(BUILD)/bench_search
$(BENCH): $(BUILD)/bench/bench_search.o $(LIB)
	$(CC) $(CFLAGS) $(XCFLAGS) $(XLDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

# Planning-time figures (printed, not asserted): see bench/README.md.
bench: $(BENCH)
	./$(BENCH)

# The MIP certificate's time, bound and gap (about 35 minutes; BENCH_QUICK=1: 3).
bench-mip: $(TOOL)
	./bench/bench_mip.sh $(TOOL)

demo: all
	./examples/demo.sh $(TOOL)

# The test build: warnings are errors; the runner's last line is "N passed, N failed".
# Builds without a backend (make GLPK=0 CBC=0 test) get a folder of their own.
TEST_BUILD := build/test$(if $(filter 0,$(GLPK)),-noglpk)$(if $(filter 0,$(CBC)),-nocbc)
test:
	$(MAKE) --no-print-directory BUILD=$(TEST_BUILD) XCFLAGS="-Werror" unit
	./tests/run.sh $(TEST_BUILD)

# The suite under AddressSanitizer, UBSan and LeakSanitizer; then a self-check that
# LeakSanitizer really runs: a test with a planted leak (HARNESS_PLANT_LEAK) must fail.
LEAK_PROBE := evaluate_names_the_lowest_overflowing_device
check-asan:
	$(MAKE) --no-print-directory BUILD=build/asan CFLAGS="-O1 -g -fno-omit-frame-pointer" \
	  XCFLAGS="-Werror -fsanitize=address,undefined -fno-sanitize-recover=all" \
	  XLDFLAGS="-fsanitize=address,undefined" unit
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ./tests/run.sh build/asan
	@if ASAN_OPTIONS=detect_leaks=1 HARNESS_PLANT_LEAK=1 build/asan/unit_tests $(LEAK_PROBE) \
	     >build/asan/leak-probe.txt 2>&1; then \
	  echo "check-asan: a planted leak passed: LeakSanitizer is not running"; exit 1; \
	elif grep -q "detected memory leaks" build/asan/leak-probe.txt; then \
	  echo "check-asan: LeakSanitizer caught the planted leak, as it must"; \
	else echo "check-asan: the leak probe failed without a leak report:"; \
	  cat build/asan/leak-probe.txt; exit 1; fi

# The unit tests and a few commands under valgrind (memcheck: errors and definite
# leaks fail), with the tests' time limit scaled for valgrind's slowness.
VALGRIND := valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite
check-valgrind:
	$(MAKE) --no-print-directory BUILD=build/vg CFLAGS="-O1 -g" XCFLAGS="-Werror" unit
	HARNESS_TIMEOUT_SCALE=30 $(VALGRIND) build/vg/unit_tests
	./tests/valgrind_cli.sh "$(VALGRIND)" build/vg/hetplan

deps:
	./scripts/install-deps.sh

clean:
	rm -rf build

-include $(LIB_OBJS:.o=.d) $(CLI_OBJS:.o=.d) $(TEST_OBJS:.o=.d)
