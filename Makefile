# RunLoopKit — set-up and common tasks. `make demo` and `make test` install libev-dev
# (Debian's package) when <ev.h> is missing, and libglib2.0-dev (the RunLoopKitGLib
# product's) when <glib.h> is, then build.

SWIFT ?= swift
EV_HEADER ?= /usr/include/ev.h
GLIB_HEADER ?= /usr/include/glib-2.0/glib.h

.PHONY: demo test sanitizers soak-tests clock-soak build bench docs deps clean gtk-demo gtk-deps

# The examples are a package of their own (Examples/), so that the root manifest is only the
# library; these flags build and run them from the root.
EXAMPLES = --package-path Examples
# The library's own builds enable all its package traits (Metrics: the RunLoopKitMetrics
# product), so that make test builds and tests every product.
TRAITS = --enable-all-traits
# How many tests Swift Testing runs at once. Unbounded, it starts every test together; most of
# them block the thread they run on (real-time waits), and libdispatch adds a worker only once
# a second on Linux, so a task a test starts waits behind hundreds of blocked test starts (async
# shutdown(), swift-subprocess and file-change sequences then missed their bounds on a loaded
# machine). CONTRIBUTING.md has the measurement.
TEST_WIDTH = --experimental-maximum-parallelization-width 8

# How many times `make soak-tests` runs the suite.
RUNS ?= 20

# Installs libev-dev and libglib2.0-dev when their headers are missing (root on
# Debian/Ubuntu; sudo if present).
deps:
	@MISSING=""; \
	if [ ! -f "$(EV_HEADER)" ]; then echo "RunLoopKit: <ev.h> missing, installing libev-dev"; MISSING="libev-dev"; fi; \
	if [ ! -f "$(GLIB_HEADER)" ]; then echo "RunLoopKit: <glib.h> missing, installing libglib2.0-dev"; MISSING="$$MISSING libglib2.0-dev"; fi; \
	if [ -n "$$MISSING" ]; then \
		SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO="sudo"; \
		$$SUDO apt-get update && $$SUDO apt-get install -y $$MISSING; \
	fi

build: deps
	$(SWIFT) build $(TRAITS)
	$(SWIFT) build $(EXAMPLES)

# The main demo: the aligned clock comparing three strategies for ten seconds.
demo: deps
	$(SWIFT) run $(EXAMPLES) aligned-clock --compare --duration 10

# The library's tests, then the examples'. A warning in either build fails it.
test: deps
	@for package in "$(TRAITS)" "$(EXAMPLES)"; do \
		$(SWIFT) build --build-tests $$package > .build-log.txt 2>&1; status=$$?; cat .build-log.txt; \
		if [ $$status -ne 0 ]; then rm -f .build-log.txt; exit $$status; fi; \
		if grep -q "warning:" .build-log.txt; then echo "RunLoopKit: the build has warnings" >&2; rm -f .build-log.txt; exit 1; fi; \
	done; rm -f .build-log.txt
	$(SWIFT) test --skip-build $(TEST_WIDTH) $(TRAITS)
	$(SWIFT) test --skip-build $(TEST_WIDTH) $(EXAMPLES)

# The suite under AddressSanitizer, then ThreadSanitizer (scratch paths .build-asan and
# .build-tsan): fails on a failed test or any report, children's included, and prints how long
# each build and run took. scripts/sanitizers says what differs from `make test`, and why.
sanitizers: deps
	SWIFT=$(SWIFT) scripts/sanitizers

# The suite RUNS times on a fresh clone of the current commit, one core kept busy: prints
# "N passed, M failed", keeps the failed runs' logs, and fails when a run failed.
soak-tests:
	RUNS=$(RUNS) SWIFT=$(SWIFT) scripts/soak-tests

# The benchmark is its own package (Benchmarks/), so that `make test` never builds its peers;
# run from the root, it writes BENCHMARKS.md and its charts here. Its instruction rows run
# under valgrind's callgrind: installed here when missing (the rows say "skipped" without it).
bench: deps
	@if ! command -v valgrind > /dev/null; then \
		echo "RunLoopKit: valgrind missing, installing it (loop-bench's instruction rows)"; \
		SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO="sudo"; \
		$$SUDO apt-get update && $$SUDO apt-get install -y valgrind; \
	fi
	$(SWIFT) run -c release --package-path Benchmarks loop-bench --write BENCHMARKS.md

# The soak of the CPU counter's bounds of the clock: CLOCK_SOAK_SECONDS idle, then as long
# with every core busy; prints what it checked and fails on any contradicted answer.
CLOCK_SOAK_SECONDS ?= 120
clock-soak: deps
	scripts/clock-soak $(CLOCK_SOAK_SECONDS)

# The GTK 4 example (Examples/gtk-timers, a package of its own so that `make test` never needs
# GTK): S3's task list and S1's stopwatch in a window on RunLoopKit's main loop. Installs
# libgtk-4-dev when pkg-config does not find gtk4. GTK_DEMO_FLAGS are the app's, for example
# `make gtk-demo GTK_DEMO_FLAGS="--auto-add 5"`. Without a display it runs the Xvfb check instead
# (scripts/gtk-screenshot-test) and keeps its screenshot in .build-gtk/.
GTK_DEMO_FLAGS ?=
gtk-deps: deps
	@if ! command -v pkg-config > /dev/null || ! pkg-config --exists gtk4; then \
		echo "RunLoopKit: GTK 4 missing, installing libgtk-4-dev"; \
		SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO="sudo"; \
		$$SUDO apt-get update && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y pkg-config libgtk-4-dev; \
	fi

gtk-demo: gtk-deps
	$(SWIFT) build --package-path Examples/gtk-timers
	@if [ -n "$$DISPLAY" ] || [ -n "$$WAYLAND_DISPLAY" ]; then \
		$(SWIFT) run --package-path Examples/gtk-timers --skip-build gtk-timers $(GTK_DEMO_FLAGS); \
	else \
		echo "RunLoopKit: no display; the window runs under Xvfb instead (scripts/gtk-screenshot-test)"; \
		scripts/gtk-screenshot-test --save .build-gtk/gtk-timers.png && \
		echo "RunLoopKit: its screenshot is .build-gtk/gtk-timers.png"; \
	fi

# The DocC catalogues of RunLoopKit, RunLoopKitExperimental and RunLoopKitGLib, with every DocC
# warning an error.
docs: deps
	$(SWIFT) package --disable-sandbox generate-documentation --target RunLoopKit --target RunLoopKitExperimental --target RunLoopKitGLib --warnings-as-errors

clean:
	rm -rf .build .build-asan .build-tsan .build-consumer Benchmarks/.build Examples/.build Examples/gtk-timers/.build
