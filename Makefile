# Thin driver around CMake. `make run` and `make test` are the README's two
# quick-start commands; both install missing Debian packages first.
#
#   make test   the whole suite (ctest) on the release build, again on an
#               AddressSanitizer + UBSan build, then every fuzz target for
#               FUZZ_SECONDS each (clang/libFuzzer, JOBS at once) over its
#               seed corpus
#   make check  the release-build suite alone (quick)
#   make clang  a Release build with clang (users' other compiler), no tests
#
# Developers build with -Werror (RS_WERROR); a user's plain cmake does not.
BUILD ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
CLANG_BUILD ?= build-clang
FUZZ_SECONDS ?= 60
JOBS  ?= $(shell nproc)
FUZZ_TARGETS = scenario timeline trace plan fault parts chakra wire

.PHONY: all deps build run test check asan fuzz clang bench clean

all: build

deps:
	@scripts/install-deps

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRS_WERROR=ON >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

run: build
	$(BUILD)/cli/railsim compare -o out/compare

check: build
	cd $(BUILD) && ctest --output-on-failure --no-tests=error -j $(JOBS)

asan: deps
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DRS_SANITIZE=ON -DRS_WERROR=ON >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
		ctest --output-on-failure --no-tests=error -j $(JOBS)

# Each target runs on a scratch copy of its corpus, so findings never land
# in the tree by accident; a crash fails the run and leaves crash-* here.
# JOBS targets run at once (each for FUZZ_SECONDS, one core each).
fuzz: deps
	@cmake -S . -B $(FUZZ_BUILD) -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRS_FUZZ=ON -DRS_WERROR=ON >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target $(addprefix fuzz_,$(FUZZ_TARGETS))
	@one() { \
		t=$$1; log=$(FUZZ_BUILD)/fuzz_$$t.log; work=$$(mktemp -d); cp tests/fuzz/corpus/$$t/* $$work/; \
		if $(FUZZ_BUILD)/tests/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=2048 \
			-timeout=10 -print_final_stats=1 $$work 2>$$log; then \
			echo "fuzz $$t: $(FUZZ_SECONDS) s: $$(grep -E 'stat::number_of_executed_units|Done' $$log | tail -1)"; \
			rm -rf $$work; \
		else \
			echo "fuzz $$t: FAILED"; tail -40 $$log; rm -rf $$work; return 1; \
		fi; \
	}; \
	fail=0; pids=""; n=0; \
	for t in $(FUZZ_TARGETS); do \
		one $$t & pids="$$pids $$!"; n=$$((n + 1)); \
		if [ $$n -ge $(JOBS) ]; then for p in $$pids; do wait $$p || fail=1; done; pids=""; n=0; fi; \
	done; \
	for p in $$pids; do wait $$p || fail=1; done; \
	exit $$fail

clang: deps
	@cmake -S . -B $(CLANG_BUILD) -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Release -DRS_WERROR=ON -DRS_TESTS=OFF >/dev/null
	@cmake --build $(CLANG_BUILD) -j $(JOBS)

test: check clang asan fuzz

bench: build
	bench/run

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD) $(CLANG_BUILD) out
