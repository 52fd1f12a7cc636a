# solbench — two commands do all set-up on a fresh Debian machine:
#   make run    installs what is missing, builds, runs the quick suite here
#               and a short validation (a reference LLM against predict)
#   make test   the same set-up, then the whole test suite (ctest)
#
# Overridable: BUILD (build folder), BUILD_TYPE, CMAKE_ARGS, CC, RUN_ARGS.

BUILD      ?= build
BUILD_TYPE ?= Release
CMAKE_ARGS ?=
RUN_ARGS   ?= --suite quick
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
MAKEFLAGS  += --no-print-directory
# CI builds with warnings as errors.
ifneq ($(CI),)
  CMAKE_ARGS += -DSOLBENCH_WERROR=ON
endif

.PHONY: all deps build run test test-sanitize fuzz-build fuzz format format-check clean

all: build

deps:
	@bash scripts/install-deps.sh
	@bash scripts/fetch-pjrt.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_ARGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

run: build
	./$(BUILD)/solbench sysinfo
	./$(BUILD)/solbench run $(RUN_ARGS)
	./$(BUILD)/solbench validate --quick

test: build
	cd $(BUILD) && ctest --output-on-failure -j 1

# The test suite built with clang, AddressSanitizer and UBSan.
test-sanitize: deps
	@CC=clang cmake -S . -B $(BUILD)-asan -DCMAKE_BUILD_TYPE=Debug \
	  -DSOLBENCH_SANITIZE=ON -DSOLBENCH_NATIVE=ON $(CMAKE_ARGS) >/dev/null
	@cmake --build $(BUILD)-asan -j $(JOBS)
	cd $(BUILD)-asan && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j 1 -LE slow

# The libFuzzer harnesses of tests/fuzz (docs/FUZZ.md), built with clang,
# ASan and UBSan into $(BUILD)-fuzz; `make fuzz` runs each for FUZZ_SECONDS
# on a copy of its corpus and fails on a crash, hang (10 s) or leak.
# FUZZERS names a subset: make fuzz FUZZERS=fuzz_run FUZZ_SECONDS=60
FUZZ_SECONDS ?= 600
FUZZERS    ?= fuzz_param fuzz_run fuzz_workload fuzz_hw fuzz_trace fuzz_plugin

fuzz-build: deps
	@CC=clang cmake -S . -B $(BUILD)-fuzz -DCMAKE_BUILD_TYPE=Debug \
	  -DSOLBENCH_FUZZ=ON -DSOLBENCH_CUDA=OFF -DSOLBENCH_PJRT=OFF \
	  -DBUILD_TESTING=OFF \
	  $(CMAKE_ARGS) >/dev/null
	@cmake --build $(BUILD)-fuzz -j $(JOBS) --target fuzzers

fuzz: fuzz-build
	bash tests/fuzz/run.sh $(BUILD)-fuzz $(FUZZ_SECONDS) $(FUZZERS)

# The C style of .clang-format over every tracked C, header and CUDA file:
# `make format` applies it, `make format-check` (CI) fails on a difference.
SOURCES_FMT = $(shell git ls-files '*.c' '*.h' '*.cu' 2>/dev/null)

format: deps
	clang-format -i $(SOURCES_FMT)

format-check: deps
	@clang-format --dry-run --Werror $(SOURCES_FMT) && \
	  echo "format-check: $(words $(SOURCES_FMT)) files as .clang-format has them"

clean:
	rm -rf $(BUILD) $(BUILD)-asan $(BUILD)-fuzz
