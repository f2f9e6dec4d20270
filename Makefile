# SPDX-License-Identifier: MIT
# Front door. The real build is CMake (CMakeLists.txt).
#   make demo      build, run examples/demo.c, print its trace
#   make test      build and run the whole suite (normal, ASan+UBSan, TSan, fuzz,
#                  cross: docs/portability.md)
#   make cross     the cross stage only (scripts/cross.sh)
#   make check     the normal build's tests only (quick, for development)
#   make mutants   break the code on purpose, see the tests notice (tests/README.md)
#   make bench     the side-by-side benchmark (LTTng-UST, barectf)
#   make soak      one fdrd, programs and traces coming and going for
#                  SOAK_SECONDS (default 600), then every trace checked
#                  (scripts/soak.py; not in CI)
#   make install   PREFIX=/usr/local DESTDIR=
#   make qemu-check QEMU_SRC=DIR  QEMU built with fdr as its trace back-end,
#                  its events checked, the overhead table (docs/qemu.md; not in CI)
PREFIX ?= /usr/local
BUILD ?= build
SOAK_SECONDS ?= 600

.PHONY: all demo test check cross mutants bench soak install clean qemu-check
# The build is quiet: its log goes to $(BUILD).log, printed only when
# the build fails, so `make demo` shows the demo's trace and nothing else.
QUIET_BUILD = cmake -S . -B $(BUILD) -DFDR_BENCH=OFF $(CMAKE_ARGS) >$(BUILD).log 2>&1 && \
	cmake --build $(BUILD) -j $(TARGET) >>$(BUILD).log 2>&1 || \
	{ cat $(BUILD).log; echo "make: the build failed (log: $(BUILD).log)"; exit 1; }

all:
	@scripts/deps.sh build
	@$(QUIET_BUILD)

demo:
	@scripts/deps.sh demo
	@$(MAKE) -s all TARGET="--target demo"
	@rm -rf $(BUILD)/demo-trace
	@FDR_OUTPUT=$(BUILD)/demo-trace $(BUILD)/demo
	@babeltrace2 $(BUILD)/demo-trace

test:
	scripts/deps.sh test
	scripts/test.sh

check:
	scripts/deps.sh test
	FDR_TEST_ONLY=normal scripts/test.sh

cross:
	scripts/deps.sh cross
	FDR_TEST_ONLY=cross scripts/test.sh

mutants:
	scripts/deps.sh test
	scripts/mutants.py

bench:
	bench/run.sh

soak:
	scripts/deps.sh test
	@$(MAKE) -s all TARGET="2 --target fdr-cli fdrd session-prog"
	SOAK_SECONDS=$(SOAK_SECONDS) scripts/soak.py $(BUILD)

install:
	@scripts/deps.sh build
	@$(MAKE) -s all CMAKE_ARGS=-DCMAKE_INSTALL_PREFIX=$(PREFIX)
	DESTDIR=$(DESTDIR) cmake --install $(BUILD)

qemu-check:
	QEMU_SRC=$(QEMU_SRC) scripts/qemu-check.sh

clean:
	rm -rf $(BUILD) build-test build-bench
