# solbench — two commands do all set-up on a fresh Debian machine:
#   make run    installs what is missing, builds, runs the quick suite here
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

.PHONY: all deps build run test test-sanitize clean

all: build

deps:
	@bash scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_ARGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

run: build
	./$(BUILD)/solbench sysinfo
	./$(BUILD)/solbench run $(RUN_ARGS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j 1

# The test suite built with clang, AddressSanitizer and UBSan.
test-sanitize: deps
	@CC=clang cmake -S . -B $(BUILD)-asan -DCMAKE_BUILD_TYPE=Debug \
	  -DSOLBENCH_SANITIZE=ON -DSOLBENCH_NATIVE=ON $(CMAKE_ARGS) >/dev/null
	@cmake --build $(BUILD)-asan -j $(JOBS)
	cd $(BUILD)-asan && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j 1 -LE slow

clean:
	rm -rf $(BUILD) $(BUILD)-asan
