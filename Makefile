# The two commands: `make demo` and `make test`. Both install what is missing first.
JOBS ?= 2
BUILD ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
TSAN_BUILD ?= build-tsan
FUZZ_SECONDS ?= 20
CMAKE_FLAGS ?=

.PHONY: all build demo test test-release test-asan test-tsan test-fuzz bench deps clean format

all: build

deps:
	@tools/install-deps.sh

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j$(JOBS)

demo: build
	$(BUILD)/bin/sightline-sim

test: test-release test-asan test-tsan test-fuzz

test-release: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

$(ASAN_BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSIGHTLINE_SANITIZE=address,undefined \
	  -DSIGHTLINE_BUILD_BENCH=OFF $(CMAKE_FLAGS)

test-asan: deps $(ASAN_BUILD)/CMakeCache.txt
	cmake --build $(ASAN_BUILD) -j$(JOBS)
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j$(JOBS) -LE no-sanitizer

# The threaded tick under ThreadSanitizer: the determinism test runs 1 to 4 threads.
$(TSAN_BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(TSAN_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSIGHTLINE_SANITIZE=thread \
	  -DSIGHTLINE_BUILD_BENCH=OFF -DSIGHTLINE_BUILD_TOOLS=OFF -DSIGHTLINE_BUILD_EXAMPLES=OFF $(CMAKE_FLAGS)

test-tsan: deps $(TSAN_BUILD)/CMakeCache.txt
	cmake --build $(TSAN_BUILD) -j$(JOBS) --target threads_test
	TSAN_OPTIONS=halt_on_error=1 $(TSAN_BUILD)/bin/threads_test

# Every parser of untrusted bytes is fuzzed for a fixed time (the trace reader; the packet decoder
# with the ClientMirror); new inputs go to the build folder, the committed seed corpus is only read.
$(FUZZ_BUILD)/CMakeCache.txt: | deps
	CXX=clang++-14 cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DSIGHTLINE_SANITIZE=address,undefined -DSIGHTLINE_BUILD_FUZZ=ON -DSIGHTLINE_BUILD_TESTS=OFF \
	  -DSIGHTLINE_BUILD_BENCH=OFF -DSIGHTLINE_BUILD_EXAMPLES=OFF $(CMAKE_FLAGS)

test-fuzz: deps $(FUZZ_BUILD)/CMakeCache.txt
	cmake --build $(FUZZ_BUILD) -j$(JOBS) --target sightline-fuzz-trace sightline-fuzz-packet
	@for target in trace packet; do \
	  mkdir -p $(FUZZ_BUILD)/corpus-$$target; \
	  $(FUZZ_BUILD)/bin/sightline-fuzz-$$target -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -print_final_stats=1 \
	    $(FUZZ_BUILD)/corpus-$$target fuzz/corpus/$$target > $(FUZZ_BUILD)/fuzz-$$target.log 2>&1 \
	    || { tail -n 40 $(FUZZ_BUILD)/fuzz-$$target.log; exit 1; }; \
	  tail -n 6 $(FUZZ_BUILD)/fuzz-$$target.log; \
	  echo "fuzz: $$target ran $(FUZZ_SECONDS) s with no crash"; \
	done

bench: build
	$(BUILD)/bin/sightline-bench
	$(BUILD)/bin/sightline-bench-send

format:
	clang-format -i $$(git ls-files '*.h' '*.cpp')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) $(FUZZ_BUILD)
