# The two commands of the README's quick start, and a few more.
#   make run    install what is missing, build trainrig (not its tests), and run
#               `trainrig validate` on this machine: its verdict and report
#   make test   install what is missing, build, and run the whole test suite
BUILD ?= build
PKG_BUILD ?= build-pkg
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
FUZZ_SECONDS ?= 30
VALIDATE_FLAGS ?= --level quick

.PHONY: all deps build run test test-asan test-gpu-emulated accuracy fuzz package format clean

all: build

deps:
	@bash scripts/install-deps.sh
	@bash scripts/fetch-tokenizers.sh --if-missing

build: deps
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# validate's exit code 1 (NOT READY) is an answer about this machine, not a build failure; only 2
# (could not judge) fails this target. Only what trainrig runs is built: no tests, no fuzzers.
run: deps
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS) --target runtime
	@$(BUILD)/trainrig validate $(VALIDATE_FLAGS); rc=$$?; \
	  if [ $$rc -eq 1 ]; then echo "(trainrig validate exited 1: this machine is not ready; the report says why)"; fi; \
	  [ $$rc -le 1 ]

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# docs/accuracy.md, measured anew on the seeded-fault corpus (tests/accuracy/README.md): every
# check's false positives, false negatives and time to detect, and the fleet's gray failures.
# `make test` checks that the file says what a run measures.
accuracy: build
	@python3 tests/accuracy/run_accuracy.py --trainrig $(BUILD)/trainrig \
	  --fleet-sim $(BUILD)/accuracy_fleet_sim --write docs/accuracy.md

# The suite under AddressSanitizer and UBSan (CMakePresets.json "debug-asan"): each test binary
# run whole, without the tests labelled slow, reference, script or gpu, which the plain suite runs.
test-asan: deps
	@cmake --preset debug-asan >/dev/null
	@cmake --build --preset debug-asan -j $(JOBS)
	@ctest --preset debug-asan -j $(JOBS)

# Every GPU code path on the emulated CUDA device (docs/testing.md, "The emulated GPU"): the
# plugins built by the host compiler beside trainrig in build-emulated/emulated/, and the tests
# named emulated.* (the slow ones included). Needs the CUDA toolkit's headers, not a GPU.
test-gpu-emulated: deps
	@cmake --preset emulated-gpu >/dev/null
	@cmake --build --preset emulated-gpu -j $(JOBS)
	@ctest --preset emulated-gpu -j $(JOBS)

# The Debian package (docs/packaging.md): install what building needs (not the tests' packages),
# a Release build of what trainrig runs (no tests, no microbenchmarks) in $(PKG_BUILD), then
# CPack; prints the path of trainrig_<version>_<arch>.deb.
package:
	@bash scripts/install-deps.sh --build
	@cmake -S . -B $(PKG_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DTRAINRIG_BUILD_TESTS=OFF \
	  -DTRAINRIG_BUILD_BENCH=OFF $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(PKG_BUILD) -j $(JOBS)
	@rm -f $(PKG_BUILD)/trainrig_*.deb
	@cd $(PKG_BUILD) && cpack -G DEB >cpack.log 2>&1 || { cat cpack.log >&2; exit 1; }
	@cd $(PKG_BUILD) && ls "$$PWD"/trainrig_*.deb

# libFuzzer harnesses in a separate clang build (ASan + UBSan), FUZZ_SECONDS each.
fuzz: deps
	@CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_UNITY_BUILD=OFF -DTRAINRIG_FUZZ=ON -DTRAINRIG_CUDA=OFF -DTRAINRIG_BUILD_BENCH=OFF >/dev/null
	@cmake --build build-fuzz -j $(JOBS) --target parsers_fuzzer data_fuzzer
	@mkdir -p build-fuzz/corpus && build-fuzz/parsers_fuzzer -max_total_time=$(FUZZ_SECONDS) \
	  -max_len=4096 build-fuzz/corpus tests/fuzz/seeds
	@mkdir -p build-fuzz/corpus-data && build-fuzz/data_fuzzer -max_total_time=$(FUZZ_SECONDS) \
	  -max_len=4096 build-fuzz/corpus-data tests/fuzz/seeds-data

format:
	@git ls-files '*.cpp' '*.h' | xargs clang-format -i

clean:
	rm -rf $(BUILD) $(PKG_BUILD) build-fuzz build-asan build-cpu
