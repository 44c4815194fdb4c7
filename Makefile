# hetplan -- one non-recursive Makefile.
#   make            library and the hetplan tool (build/)
#   make demo       build, then plan and evaluate the bundled examples
#   make test       warnings-fatal build, then the whole test suite (what CI runs)
#   make bench      planning-time benchmark tables (not a test)
#   make probe-bounds  builds probe_bounds: what binds a certificate's bound (bench/README.md)
#   make bench-mip  the MIP solvers' bound and gap on 16 to 768 GPUs (not a test, ~25 min)
#   make bench-quality  the default solver against the baselines, 64 to 4096 GPUs
#   make bench-mpi  the MIP search under mpirun with 1, 2 and 4 ranks (~35 min)
#   make bench-fidelity  the cost model against measured runs (BLOOM, Sailor, Aceso; seconds)
#   make check-asan the test suite under AddressSanitizer + UBSan + LeakSanitizer (build/asan/)
#   make check-valgrind  the unit tests and a few commands under valgrind (build/vg/)
#   make fuzz       libFuzzer targets of every loader (fuzz/, clang), each run for
#                   FUZZ_SECONDS (default 60), one at a time; not part of make test
#   make deps       install the Debian packages the project needs (as root)
#   make profiler   build/hetplan-profile (Open MPI's mpicc; the GPU parts where CUDA is)
# Optional parts are switches: CUDA_HOME (the GPU profiler's CUDA, cuBLAS and NCCL, built
# only where the toolkit is), CUDA_ARCHS, MPICC, MPI (0: hetplan without `mpirun -np N`
# sharing, docs/distributed.md), BUILD (output folder), XCFLAGS (extra flags).

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
TEST_SRCS := $(wildcard tests/unit/*.c) fuzz/fuzz_bodies.c
LIB_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/%.o)
CLI_OBJS  := $(CLI_SRCS:%.c=$(BUILD)/%.o)
TEST_OBJS := $(TEST_SRCS:%.c=$(BUILD)/%.o)

LIB   := $(BUILD)/libhetplan.a
TOOL  := $(BUILD)/hetplan
UNIT  := $(BUILD)/unit_tests
PROBE := $(BUILD)/probe_bounds

# --- the profiler (profiler/, docs/profiler.md): its plain-C parts always (and their
# tests, prof_units); the program with mpicc where Open MPI is; the GPU parts (CUDA
# runtime, cuBLAS, NCCL; kernels by nvcc) only where $(CUDA_HOME)/include/cuda_runtime.h
# is, else a stub that says why they are skipped.
MPICC      ?= mpicc
CUDA_HOME  ?= /usr/local/cuda
NVCC       ?= $(CUDA_HOME)/bin/nvcc
CUDA_ARCHS ?= 75 80 90
HAVE_MPI   := $(shell command -v $(MPICC) >/dev/null 2>&1 && echo 1 || echo 0)
HAVE_CUDA  := $(shell test -f $(CUDA_HOME)/include/cuda_runtime.h && test -x $(NVCC) && echo 1 || echo 0)
# The planner shares `mpirun -np N hetplan plan` among its processes where Open MPI is
# (cli/team.c built and the program linked with mpicc); MPI=0 leaves that out.
MPI        ?= $(HAVE_MPI)
ifeq ($(MPI),1)
TOOL_LD    := $(MPICC)
$(BUILD)/cli/team.o: CC := $(MPICC)
$(BUILD)/cli/team.o: CPPFLAGS += -DHP_HAVE_MPI
else
TOOL_LD    := $(CC)
endif
PROF_PURE  := $(addprefix profiler/,prof_args.c prof_ops.c prof_stats.c prof_schedule.c prof_device.c prof_write.c)
PROF_MPI   := $(addprefix profiler/,prof_main.c prof_hosts.c prof_matrix.c)
ifeq ($(HAVE_CUDA),1)
PROF_MPI   += profiler/prof_gpu.c profiler/prof_nccl.c
PROF_CU    := profiler/prof_kernels.cu
PROF_LIBS  := -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lnccl -lcublas -lcudart -lstdc++
else
PROF_MPI   += profiler/prof_gpu_stub.c
PROF_CU    :=
PROF_LIBS  :=
endif
PROF_PURE_OBJS := $(PROF_PURE:%.c=$(BUILD)/%.o)
PROF_MPI_OBJS  := $(PROF_MPI:%.c=$(BUILD)/%.o)
PROF_CU_OBJS   := $(PROF_CU:%.cu=$(BUILD)/%.o)
PROFILER   := $(BUILD)/hetplan-profile
PROF_UNIT  := $(BUILD)/prof_units
NVCCFLAGS  ?= -O2 -std=c++17 $(foreach a,$(CUDA_ARCHS),-gencode arch=compute_$(a),code=sm_$(a)) \
              -Xcompiler -Wall,-Wextra

.PHONY: all demo test unit profiler bench probe-bounds bench-mip bench-mpi bench-quality bench-fidelity check-asan check-valgrind deps clean \
        fuzz fuzz-targets

all: $(TOOL) profiler

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) $(XCFLAGS) -MMD -MP -c $< -o $@

$(LIB): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

$(TOOL): $(CLI_OBJS) $(LIB)
	$(TOOL_LD) $(CFLAGS) $(XCFLAGS) $(XLDFLAGS) -o $@ $(CLI_OBJS) $(LIB) $(LDLIBS)

$(UNIT): $(TEST_OBJS) $(LIB)
	$(CC) $(CFLAGS) $(XCFLAGS) $(XLDFLAGS) -o $@ $(TEST_OBJS) $(LIB) $(LDLIBS)

unit: $(UNIT) $(TOOL) $(PROF_UNIT) $(PROBE)

# warnings are errors for nvcc too when they are for cc (make test)
NVCC_WERROR := $(if $(findstring -Werror,$(XCFLAGS)),-Werror all-warnings)

$(PROF_MPI_OBJS): CC := $(MPICC)
$(PROF_MPI_OBJS): CPPFLAGS += $(if $(PROF_CU),-isystem $(CUDA_HOME)/include)

$(BUILD)/%.o: %.cu profiler/prof_ops.h
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) $(NVCC_WERROR) -Iprofiler -c $< -o $@

$(PROFILER): $(PROF_MPI_OBJS) $(PROF_PURE_OBJS) $(PROF_CU_OBJS) $(LIB)
	$(MPICC) $(CFLAGS) $(XCFLAGS) $(XLDFLAGS) -o $@ $^ $(LDLIBS) $(PROF_LIBS)

$(BUILD)/tests/profiler/harness.o: tests/unit/harness.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -DHARNESS_NAME='"prof_units"' $(WARN) $(CFLAGS) $(XCFLAGS) -MMD -MP -c $< -o $@

$(PROF_UNIT): $(BUILD)/tests/profiler/test_prof.o $(BUILD)/tests/profiler/harness.o $(PROF_PURE_OBJS) $(LIB)
	$(CC) $(CFLAGS) $(XCFLAGS) $(XLDFLAGS) -o $@ $^ $(LDLIBS)

ifeq ($(HAVE_MPI),1)
profiler: $(PROFILER) $(PROF_UNIT)
else
profiler: $(PROF_UNIT)
	@echo "profiler: skipped: '$(MPICC)' not found (Open MPI: ./scripts/install-deps.sh); the planner is built"
endif

BENCH := $(BUILD)/bench_search
$(BENCH): $(BUILD)/bench/bench_search.o $(LIB)
	$(CC) $(CFLAGS) $(XCFLAGS) $(XLDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

# Planning-time figures (printed, not asserted): see bench/README.md.
bench: $(BENCH)
	./$(BENCH)

# What binds a certificate's bound, configuration by configuration (a probe for developers,
# printed, not asserted; bench/README.md "Probing a gap").
$(PROBE): $(BUILD)/bench/probe_bounds.o $(LIB)
	$(CC) $(CFLAGS) $(XCFLAGS) $(XLDFLAGS) -o $@ $< $(LIB) $(LDLIBS)
probe-bounds: $(PROBE)

# The MIP certificate's time, bound and gap (about 25 minutes; BENCH_QUICK=1: 30 s).
bench-mip: $(TOOL)
	./bench/bench_mip.sh $(TOOL)

# The MIP search shared by 1, 2 and 4 MPI ranks, and the speed-up (about 35 minutes).
bench-mpi: $(TOOL)
	./bench/bench_mpi.sh $(TOOL)

# The default solver's plans against every baseline on 64 to 4096 mixed GPUs.
bench-quality: $(TOOL)
	./bench/bench_quality.sh $(TOOL)

# The cost model scored against measured runs (printed against issue 22's targets, not
# asserted): bench/fidelity/README.md. MEASURED: the folder of the three data sets.
MEASURED ?= ../shared/data/measured
bench-fidelity: $(TOOL)
	python3 bench/fidelity/score.py --hetplan $(TOOL) --data $(MEASURED) --out $(BUILD)/fidelity

demo: all
	./examples/demo.sh $(TOOL)

# The test build: warnings are errors; the runner's last line is "N passed, N failed".
# Builds without a backend (make GLPK=0 CBC=0 test) get a folder of their own.
TEST_BUILD := build/test$(if $(filter 0,$(GLPK)),-noglpk)$(if $(filter 0,$(CBC)),-nocbc)
test:
	$(MAKE) --no-print-directory BUILD=$(TEST_BUILD) XCFLAGS="-Werror" unit profiler
	./tests/run.sh $(TEST_BUILD)

# The suite under AddressSanitizer, UBSan and LeakSanitizer; then a self-check that
# LeakSanitizer really runs: a test with a planted leak (HARNESS_PLANT_LEAK) must fail.
LEAK_PROBE := evaluate_names_the_lowest_overflowing_device
check-asan:
	$(MAKE) --no-print-directory BUILD=build/asan CFLAGS="-O1 -g -fno-omit-frame-pointer" \
	  XCFLAGS="-Werror -fsanitize=address,undefined -fno-sanitize-recover=all" \
	  XLDFLAGS="-fsanitize=address,undefined" unit profiler
	# the tests' time limits doubled: the 60-instance MIP brute force takes 117 s of its
	# 120 under ASan on the 2-core build machine
	# a leak inside CoinUtils' presolve is suppressed (tests/lsan-coin.supp), nothing else
	HARNESS_TIMEOUT_SCALE=2 ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan-coin.supp:print_suppressions=0 ./tests/run.sh build/asan
	@if ASAN_OPTIONS=detect_leaks=1 HARNESS_PLANT_LEAK=1 build/asan/unit_tests $(LEAK_PROBE) \
	     >build/asan/leak-probe.txt 2>&1; then \
	  echo "check-asan: a planted leak passed: LeakSanitizer is not running"; exit 1; \
	elif grep -q "detected memory leaks" build/asan/leak-probe.txt; then \
	  echo "check-asan: LeakSanitizer caught the planted leak, as it must"; \
	else echo "check-asan: the leak probe failed without a leak report:"; \
	  cat build/asan/leak-probe.txt; exit 1; fi

# The unit tests and a few commands under valgrind (memcheck: errors and definite
# leaks fail), with the tests' time limit scaled for valgrind's slowness, and a tenth of
# the brute-force tests' random instances (HARNESS_LIGHT=1; all of them take over an hour
# under valgrind; make test and check-asan run them all).
VALGRIND := valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite
check-valgrind:
	$(MAKE) --no-print-directory BUILD=build/vg CFLAGS="-O1 -g" XCFLAGS="-Werror" unit
	HARNESS_TIMEOUT_SCALE=30 HARNESS_LIGHT=1 $(VALGRIND) build/vg/unit_tests
	./tests/valgrind_cli.sh "$(VALGRIND)" build/vg/hetplan

deps:
	./scripts/install-deps.sh

# Fuzzing (docs/fuzzing.md): the loaders of model, cluster, profile, plan, job and HF config under
# libFuzzer with AddressSanitizer and UBSan, built by clang in build/fuzz/ without the
# MIP backends; each target runs FUZZ_SECONDS, one at a time. Inputs that crash, leak or
# hang go to build/fuzz/artifacts/; kept in tests/fuzz/, `make test` replays them.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= model cluster profile plan job hf
FUZZ_BUILD   := build/fuzz
fuzz:
	@mkdir -p $(FUZZ_BUILD); printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n);\nint LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' \
	  > $(FUZZ_BUILD)/probe.c; \
	if ! $(FUZZ_CC) -fsanitize=fuzzer,address,undefined $(FUZZ_BUILD)/probe.c \
	     -o $(FUZZ_BUILD)/probe >/dev/null 2>&1; then \
	  echo "make fuzz: '$(FUZZ_CC)' cannot build a libFuzzer target: install clang and its"; \
	  echo "  sanitizer runtime (Debian 12: apt-get install clang libclang-rt-14-dev)"; \
	  rm -f $(FUZZ_BUILD)/probe.c; exit 2; fi; rm -f $(FUZZ_BUILD)/probe.c $(FUZZ_BUILD)/probe
	$(MAKE) --no-print-directory BUILD=$(FUZZ_BUILD) CC=$(FUZZ_CC) GLPK=0 CBC=0 CFLAGS="-O1 -g" \
	  XCFLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all" fuzz-targets
	./fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

fuzz-targets: $(FUZZ_TARGETS:%=$(BUILD)/fuzz-%)

# one binary per target from fuzz/fuzz_target.c, its body named by HPFZ_BODY
$(BUILD)/fuzz-%: fuzz/fuzz_target.c fuzz/fuzz_bodies.h $(BUILD)/fuzz/fuzz_bodies.o $(LIB)
	$(CC) $(CPPFLAGS) -DHPFZ_ROOT='"$(CURDIR)"' -DHPFZ_BODY=hpfz_$* $(WARN) $(CFLAGS) $(XCFLAGS) \
	  -fsanitize=fuzzer -o $@ $< $(BUILD)/fuzz/fuzz_bodies.o $(LIB) $(LDLIBS)

clean:
	rm -rf build

-include $(LIB_OBJS:.o=.d) $(CLI_OBJS:.o=.d) $(TEST_OBJS:.o=.d) $(PROF_PURE_OBJS:.o=.d) \
  $(PROF_MPI_OBJS:.o=.d) $(BUILD)/tests/profiler/test_prof.d $(BUILD)/tests/profiler/harness.d \
  $(BUILD)/bench/bench_search.d $(BUILD)/bench/probe_bounds.d
