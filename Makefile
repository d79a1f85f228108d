# The two commands: `make demo` and `make test`. Both install what is missing first.
JOBS ?= 2
BUILD ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
TSAN_BUILD ?= build-tsan
WASM_BUILD ?= build-wasm
FUZZ_SECONDS ?= 6
CLANG_FORMAT ?= clang-format-14
CMAKE_FLAGS ?=
# make demo's server: DEMO_FLAGS takes any sightline-server option (--help lists them).
DEMO_HOST ?= 127.0.0.1
DEMO_PORT ?= 8080
DEMO_FLAGS ?=
# The sanitizer builds: the library, its tests and examples; no benchmarks, tools or Beast network
# layer (the release build tests the tools, and the fuzz build runs the tools' byte readers under
# ASan) but for the ThreadSanitizer build's sightline-server (see test-tsan), line tables only for stack traces, and the library as a unity build (the ASan library in
# 46 s against 80 s file by file), to keep make test under 20 minutes on 2 cores.
# No NDEBUG: SIGHTLINE_ASSERT and the World's validation after every tick are on there.
SANITIZER_FLAGS = -DSIGHTLINE_BUILD_BENCH=OFF -DSIGHTLINE_BUILD_NETWORK=OFF \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1" -DSIGHTLINE_UNITY_BUILD=ON

.PHONY: all build demo load soak test test-format test-release test-asan test-tsan test-fuzz test-wasm bench deps clean \
	format

all: build

deps:
	@tools/install-deps.sh

$(BUILD)/CMakeCache.txt: Makefile | deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j$(JOBS)

# The simulator's report of seed 000, then the demo server with its page (Ctrl-C stops it).
demo: build
	$(BUILD)/bin/sightline-sim
	@echo
	@echo "sightline-server: seed 000's world, streamed to a browser; open the URL below."
	$(BUILD)/bin/sightline-server --host $(DEMO_HOST) --port $(DEMO_PORT) $(DEMO_FLAGS)

test: test-format test-release test-asan test-tsan test-fuzz test-wasm

# Every C++ file as .clang-format lays it out (make format rewrites them).
test-format: deps
	$(CLANG_FORMAT) --dry-run --Werror $$(git ls-files '*.h' '*.c' '*.cpp')
	@echo "format: every C++ file matches .clang-format"

test-release: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

$(ASAN_BUILD)/CMakeCache.txt: Makefile | deps
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSIGHTLINE_SANITIZE=address,undefined \
	  -DSIGHTLINE_UNITY_BUILD=ON $(SANITIZER_FLAGS) -DSIGHTLINE_BUILD_TOOLS=OFF $(CMAKE_FLAGS)

# The sanitizer builds compile the library as a unity build (SIGHTLINE_UNITY_BUILD; the release
# build compiles it file by file): 66 s against 95 s here for the ASan library.
test-asan: deps $(ASAN_BUILD)/CMakeCache.txt
	cmake --build $(ASAN_BUILD) -j$(JOBS)
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j$(JOBS) -LE no-sanitizer

# The threaded tick under ThreadSanitizer: the determinism test runs 1 to 4 threads. And the
# server, whose WebSockets run on I/O threads beside the Game's: the release build's end-to-end
# tests drive the ThreadSanitizer build's binary (SIGHTLINE_SERVER), which exits 66 on a race: the
# protocol attacks, and of the hostile clients those that join, send, get refused and tick.
$(TSAN_BUILD)/CMakeCache.txt: Makefile | deps
	cmake -S . -B $(TSAN_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSIGHTLINE_SANITIZE=thread \
	  -DSIGHTLINE_UNITY_BUILD=ON $(SANITIZER_FLAGS) -DSIGHTLINE_BUILD_TOOLS=ON -DSIGHTLINE_BUILD_NETWORK=ON $(CMAKE_FLAGS)

test-tsan: deps build $(TSAN_BUILD)/CMakeCache.txt
	cmake --build $(TSAN_BUILD) -j$(JOBS) --target threads_test plain_pass_test sightline-server
	TSAN_OPTIONS=halt_on_error=1 $(TSAN_BUILD)/bin/threads_test
	TSAN_OPTIONS=halt_on_error=1 $(TSAN_BUILD)/bin/plain_pass_test --gtest_filter=*Mixed*
	SIGHTLINE_SERVER=$(abspath $(TSAN_BUILD))/bin/sightline-server TSAN_OPTIONS="halt_on_error=1 exitcode=66" \
	  $(BUILD)/bin/sightline-protocol-attacks-test
	SIGHTLINE_SERVER=$(abspath $(TSAN_BUILD))/bin/sightline-server TSAN_OPTIONS="halt_on_error=1 exitcode=66" \
	  $(BUILD)/bin/sightline-server-test --gtest_filter='*EachBadFrame*:*GoodClient*:*AnotherClients*'

# The C API as WebAssembly (Debian's emscripten; its tools need Debian's node modules) and the
# Node binding's quickstart under node --test. The library as a unity build (SIGHTLINE_UNITY_BUILD):
# 26 s here against 48 s file by file (each em++ start costs about a second).
$(WASM_BUILD)/CMakeCache.txt: Makefile | deps
	NODE_PATH=/usr/share/nodejs emcmake cmake -S . -B $(WASM_BUILD) -DCMAKE_BUILD_TYPE=Release \
	  -DSIGHTLINE_UNITY_BUILD=ON \
	  -DSIGHTLINE_BUILD_TESTS=OFF -DSIGHTLINE_BUILD_TOOLS=OFF -DSIGHTLINE_BUILD_BENCH=OFF \
	  -DSIGHTLINE_BUILD_EXAMPLES=OFF -DSIGHTLINE_BUILD_C_API=OFF -DSIGHTLINE_INSTALL=OFF $(CMAKE_FLAGS)

test-wasm: deps $(WASM_BUILD)/CMakeCache.txt
	NODE_PATH=/usr/share/nodejs cmake --build $(WASM_BUILD) -j$(JOBS) --target sightline_wasm
	bindings/node/run.sh $(WASM_BUILD)/bin/sightline_wasm.cjs

# Every parser of untrusted bytes is fuzzed for a fixed time (the trace reader; the packet decoder
# with the ClientMirror; the demo's frame readers; the replay of a World recording; the server's
# check of WebSocket frame headers; the shard frame codec); new inputs go to the build folder, the
# committed seed corpus is only read.
$(FUZZ_BUILD)/CMakeCache.txt: Makefile | deps
	CXX=clang++-14 cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DSIGHTLINE_SANITIZE=address,undefined -DSIGHTLINE_BUILD_FUZZ=ON -DSIGHTLINE_BUILD_TESTS=OFF \
	  -DSIGHTLINE_UNITY_BUILD=ON \
	  -DSIGHTLINE_BUILD_BENCH=OFF -DSIGHTLINE_BUILD_EXAMPLES=OFF $(CMAKE_FLAGS)

test-fuzz: deps $(FUZZ_BUILD)/CMakeCache.txt
	cmake --build $(FUZZ_BUILD) -j$(JOBS) --target sightline-fuzz-trace sightline-fuzz-packet sightline-fuzz-demo-frames sightline-fuzz-replay sightline-fuzz-frame-guard \
	  sightline-fuzz-shard-frame
	@for target in trace packet demo-frames replay frame-guard shard-frame; do \
	  mkdir -p $(FUZZ_BUILD)/corpus-$$target; \
	  $(FUZZ_BUILD)/bin/sightline-fuzz-$$target -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -print_final_stats=1 \
	    $(FUZZ_BUILD)/corpus-$$target fuzz/corpus/$$target > $(FUZZ_BUILD)/fuzz-$$target.log 2>&1 \
	    || { tail -n 40 $(FUZZ_BUILD)/fuzz-$$target.log; exit 1; }; \
	  tail -n 6 $(FUZZ_BUILD)/fuzz-$$target.log; \
	  echo "fuzz: $$target ran $(FUZZ_SECONDS) s with no crash"; \
	done

# The six scenarios beside brute force (numbers also in $(BUILD)/bench.json), the Replicator's
# send, the enter test's scalar and AVX2 scans, the tick and send on 1 to $(JOBS) threads, then tick
# time against entity count and its log-log plot ($(BUILD)/scaling.svg).
bench: build
	cmake --build $(BUILD) -j$(JOBS) --target sightline-bench sightline-bench-send sightline-bench-scan \
	  sightline-bench-profile sightline-bench-threads sightline-bench-mirror
	$(BUILD)/bin/sightline-bench --json $(BUILD)/bench.json
	$(BUILD)/bin/sightline-bench-send
	$(BUILD)/bin/sightline-bench-mirror
	$(BUILD)/bin/sightline-bench-scan
	$(BUILD)/bin/sightline-bench-threads --threads $(JOBS) --scenarios arena,mmo,observers
	$(BUILD)/bin/sightline-bench --scaling --csv $(BUILD)/scaling.csv --json $(BUILD)/scaling.json
	tools/plot/scaling.sh $(BUILD)/scaling.csv $(BUILD)/scaling.svg

# The demo server under load on loopback (tools/bots/load.sh): LOAD_BOTS bots (2,000) for
# LOAD_SECONDS (60), in a world grown with the bots so that each sees about as many entities as
# 1,000 bots see in the default world (SCALE_WORLD=1; LOAD_WORLD=default keeps the default world);
# the figures printed and checked (BENCHMARKS.md). TRANSPORT=enet runs them over UDP; LOSS=0.2
# (ENet only) puts the lossy relay between them. soak: 1,000 bots for 10 minutes in the default
# world, memory flat after warm-up.
TRANSPORT ?= websocket
LOSS ?=
LOAD_BOTS ?= 2000
LOAD_SECONDS ?= 60
LOAD_WORLD ?= scaled
load: build
	SIGHTLINE_BIN=$(BUILD)/bin TRANSPORT=$(TRANSPORT) LOSS=$(LOSS) SCALE_WORLD=$(if $(filter scaled,$(LOAD_WORLD)),1,0) \
	  tools/bots/load.sh $(LOAD_BOTS) $(LOAD_SECONDS) $(BUILD)/load

soak: build
	SIGHTLINE_BIN=$(BUILD)/bin tools/bots/load.sh 1000 600 $(BUILD)/soak

format:
	$(CLANG_FORMAT) -i $$(git ls-files '*.h' '*.c' '*.cpp')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) $(FUZZ_BUILD) $(WASM_BUILD)
