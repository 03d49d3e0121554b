# Monsoon: `make demo` shows the main job; `make test` is what CI runs.

SWIFT ?= swift
# Debian packages the build needs (installed when missing; binutils strips the installed binary;
# libpq-dev: libpq, the PostgreSQL client library of the shared queue, MonsoonCluster; zlib1g-dev:
# zlib, which gzips WARC records; python3: scripts/reference-roff.py, which puts docs/REFERENCE.md
# in the manual page).
BUILD_PACKAGES := libcurl4-openssl-dev libsqlite3-dev libxml2-dev libssl-dev libpq-dev zlib1g-dev pkg-config ca-certificates binutils python3
# And those only the tests need, kept apart so `make install` does not put them on a user's machine:
# libxml2-utils: xmllint checks exports; openssl makes test certificates; nginx-light and mpv are
# real peers; zsh and fish run the completion scripts; systemd: systemd-analyze checks the units
# `monsoon systemd` prints; chromium: headless, checks a run's page; man-db, groff-base and
# bash-completion check what `make install` puts in place; postgresql: initdb and pg_ctl, with
# which the cluster's tests start real servers in temporary folders; python3-venv: the virtual
# environment warcio (PyPI) is installed into, which validates the WARC files monsoon writes; its
# python3 also runs the mpv stand-in (Tests/Fixtures/mpv-standin) most play tests use.
TEST_PACKAGES := libxml2-utils openssl nginx-light mpv zsh fish systemd chromium man-db groff-base bash-completion postgresql python3-venv
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all build release release-monsoon install install-files uninstall deb deps test-deps warcio test tsan fuzz soak demo bench bench-quick bench-cluster order clean

all: build

# `apt_install` PACKAGES: installs those of them that are missing.
define apt_install
	@missing=""; \
	for package in $(1); do \
	  dpkg-query -W -f='$${Status}' $$package 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$package"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi
endef

deps:
	$(call apt_install,$(BUILD_PACKAGES))

test-deps:
	$(call apt_install,$(BUILD_PACKAGES) $(TEST_PACKAGES))
	$(MAKE) warcio

# warcio (PyPI), the Webrecorder project's WARC reader, which the tests and the demo check
# `--warc` output with: in a virtual environment of its own under .build, made once.
WARCIO_VERSION := 1.7.4
warcio: .build/warcio-venv/bin/warcio

.build/warcio-venv/bin/warcio:
	$(call apt_install,python3-venv)
	python3 -m venv .build/warcio-venv
	.build/warcio-venv/bin/pip install -q warcio==$(WARCIO_VERSION)

build: deps
	$(SWIFT) build

# libstdc++ linked into the shipped build (below), not loaded: the Swift runtime uses little of it
# (allocation, strings, hash tables), and loading the shared library, with its start-up, cost `get`
# 1.6 M of its 32 M instructions and `--version` a quarter of its own. A folder holding only the
# archive, searched first, makes the runtime's `-lstdc++` find it (its symbols stay unexported:
# the toolchain links with `--exclude-libs ALL`).
STATIC_CXX := $(CURDIR)/.build/static-c++

# The shipped build: the Swift runtime and Foundation linked in (a quarter less resident
# memory and a faster start than loading them as shared libraries), linked with the
# toolchain's lld. Its relative relocations are packed (DT_RELR, glibc 2.36 and later): the
# loader no longer reads 1.8 MiB of them at every start (1.5 MiB less resident). Each
# function gets its own section, and the linker packs the ones the main jobs run together
# (scripts/monsoon.order, from `make order`): 4 MiB less of the program resident. A generic
# type's metadata (a dictionary's storage, say) is made by a call that names its conformances,
# not by demangling its name at first use, which looks each conformance up through all 4,000 of
# the program's: `get` ran 24.5 M instructions instead of 29.2 M, for 0.1 MB more of program.
RELEASE_FLAGS := -c release --static-swift-stdlib -Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs \
	-Xswiftc -Xfrontend -Xswiftc -function-sections \
	-Xswiftc -Xfrontend -Xswiftc -disable-concrete-type-metadata-mangled-name-accessors \
	-Xlinker --symbol-ordering-file=$(CURDIR)/scripts/monsoon.order -Xlinker --no-warn-symbol-ordering \
	-Xswiftc -L$(STATIC_CXX)

$(STATIC_CXX)/libstdc++.a:
	@archive="$$("$$(dirname "$$(readlink -f "$$(command -v $(SWIFT))")")/clang" -print-file-name=libstdc++.a)"; \
	  [ -f "$$archive" ] || { echo "libstdc++.a not found: install the libstdc++ development package (Debian 12: libstdc++-12-dev)" >&2; exit 1; }; \
	  mkdir -p "$(STATIC_CXX)" && ln -sf "$$archive" "$@"

# Every product: the benchmarks, the soak and `make order` run more than monsoon.
release: deps $(STATIC_CXX)/libstdc++.a
	$(SWIFT) build $(RELEASE_FLAGS)

# monsoon alone, for `make install`, `make deb` and `make demo`: no benchmark, soak, fuzz
# driver or test server compiled and linked for a user who runs none of them. The same flags as
# `release`, so the two share one build: neither compiles again what the other compiled.
release-monsoon: deps $(STATIC_CXX)/libstdc++.a
	$(SWIFT) build $(RELEASE_FLAGS) --product monsoon
	python3 scripts/check-limits.py --binary .build/release/monsoon --max-stripped-mb 20

# `make install PREFIX=/usr/local DESTDIR=`: the release build, stripped, with its manual page
# and its bash, zsh and fish completions where those look for them (on Debian, zsh's default
# fpath has /usr/local/share/zsh/site-functions, and bash-completion and fish read
# $XDG_DATA_DIRS, /usr/local/share first).
PREFIX ?= /usr/local
DESTDIR ?=
BIN ?= .build/release/monsoon
# Debian's zsh package keeps its own folder for the completions of other packages (`make deb`).
ZSH_FUNCTIONS ?= $(PREFIX)/share/zsh/site-functions
INSTALLED := $(DESTDIR)$(PREFIX)/bin/monsoon \
	$(DESTDIR)$(PREFIX)/share/man/man1/monsoon.1 \
	$(DESTDIR)$(PREFIX)/share/bash-completion/completions/monsoon \
	$(DESTDIR)$(ZSH_FUNCTIONS)/_monsoon \
	$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/monsoon.fish

install: release-monsoon
	$(MAKE) install-files BIN=.build/release/monsoon

# The installation from any build of monsoon (BIN): what the tests run with the debug build. The
# page and the scripts are made by the installed binary itself, which checks that it still runs
# once stripped; the page ends with docs/REFERENCE.md, its DETAILS section.
install-files:
	@[ -x "$(BIN)" ] || { echo "make: $(BIN) is missing: run 'make install' (it builds it), or give BIN=path/to/monsoon" >&2; exit 1; }
	install -d "$(DESTDIR)$(PREFIX)/bin" "$(DESTDIR)$(PREFIX)/share/man/man1" "$(DESTDIR)$(PREFIX)/share/bash-completion/completions" \
		"$(DESTDIR)$(ZSH_FUNCTIONS)" "$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d"
	install -m 755 -s "$(BIN)" "$(DESTDIR)$(PREFIX)/bin/monsoon"
	{ "$(DESTDIR)$(PREFIX)/bin/monsoon" completions man && python3 scripts/reference-roff.py docs/REFERENCE.md; } > "$(DESTDIR)$(PREFIX)/share/man/man1/monsoon.1"
	"$(DESTDIR)$(PREFIX)/bin/monsoon" completions bash > "$(DESTDIR)$(PREFIX)/share/bash-completion/completions/monsoon"
	"$(DESTDIR)$(PREFIX)/bin/monsoon" completions zsh > "$(DESTDIR)$(ZSH_FUNCTIONS)/_monsoon"
	"$(DESTDIR)$(PREFIX)/bin/monsoon" completions fish > "$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/monsoon.fish"
	chmod 644 $(foreach file,$(wordlist 2,5,$(INSTALLED)),"$(file)")
	@echo "Installed $(DESTDIR)$(PREFIX)/bin/monsoon ($$(du -h "$(DESTDIR)$(PREFIX)/bin/monsoon" | cut -f1), stripped), its manual page and its completions."

uninstall:
	rm -f $(foreach file,$(INSTALLED),"$(file)")

# A Debian package of the release build, monsoon_<version>_<arch>.deb here (scripts/deb.sh:
# Debian's tools, its Depends from the libraries monsoon links), then checked as a user would
# use it (scripts/deb-check.sh: lintian, apt-get install, run, purge, nothing left), which needs
# root or sudo. Not in `make test`: a release build costs CI minutes. dpkg-dev: dpkg-shlibdeps
# and dpkg-gencontrol; the rest is what the check runs. DEB_MAINTAINER='Name <address>' names the
# maintainer (by default a placeholder at localhost, whose lintian errors the package overrides).
deb: release-monsoon
	$(call apt_install,dpkg-dev lintian man-db bash-completion zsh fish)
	MAKE="$(MAKE)" scripts/deb.sh .build/release/monsoon
	scripts/deb-check.sh monsoon_$$(.build/release/monsoon --version)_$$(dpkg --print-architecture).deb

# Builds what the tests run (the test bundle, `monsoon`, `monsoon-testserver` and the examples;
# no benchmark, soak or fuzz program), then runs every suite in two processes at once: the
# cluster's, which mostly wait on PostgreSQL and worker processes, and all the others, at most
# TEST_WIDTH tests at a time (more only queue for the two cores and the cooperative pool).
# The bundle is run directly: two `swift test` would wait for each other's lock on .build.
TEST_WIDTH ?= 8
TEST_BUNDLE = $$($(SWIFT) build --show-bin-path)/MonsoonPackageTests.xctest --testing-library swift-testing
test: test-deps
	$(SWIFT) build --product MonsoonPackageTests
	$(SWIFT) build --product monsoon
	# The code's shape: type sizes, stored properties, rows by name, owners not id prefixes, and
	# FoundationEssentials only (in the sources, and in what the binary loads).
	python3 scripts/check-limits.py --binary $$($(SWIFT) build --show-bin-path)/monsoon
	$(SWIFT) build --product monsoon-testserver
	# The examples: packages that depend on Monsoon by path, as a user's would. Built before the
	# suites: a test runs PodcastExample against the test server.
	$(SWIFT) build --package-path Examples/EngineExample --scratch-path .build/examples
	$(SWIFT) build --package-path Examples/PodcastExample --scratch-path .build/examples
	# The build leaves gigabytes of dirty pages: written back now, the tests' fsyncs do not
	# queue behind them (on a fresh clone they stalled the whole run for half a minute).
	sync
	@bundle="$(TEST_BUNDLE)"; \
	$$bundle --filter MonsoonClusterTests > .build/test-cluster.log 2>&1 & cluster=$$!; \
	SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=$(TEST_WIDTH) $$bundle --skip MonsoonClusterTests; others=$$?; \
	wait $$cluster; status=$$?; \
	cat .build/test-cluster.log; \
	[ $$others = 0 ] && [ $$status = 0 ]

# The engine's tests under ThreadSanitizer, one at a time: ten times slower, the suites run
# together starve one another's tasks on the two-thread cooperative pool. A test that waits for a
# passing state then finds it passed: a 5-second download was complete before the test's first
# look. Flushed first, as for `make test`.
tsan: test-deps
	$(SWIFT) build --build-tests --sanitize=thread --scratch-path .build/tsan
	sync
	$(SWIFT) test --skip-build --sanitize=thread --scratch-path .build/tsan --filter MonsoonEngineTests --no-parallel

# libFuzzer on the feed, date and duration parsers, the OPML reader and the archive manifest reader
# (Sources/monsoon-fuzz), FUZZ_SECONDS each;
# fails on a crash or a hang and keeps what adds coverage in Tests/Fuzz/ (scripts/fuzz.sh).
# With AddressSanitizer: the parsers read bytes through unsafe pointers, unchecked in release
# builds. Its own scratch path, so these flags never touch the normal build.
FUZZ_SECONDS ?= 60
FUZZ_FLAGS := -c release --scratch-path .build/fuzz -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING -Xswiftc -use-ld=lld

fuzz: deps
	$(SWIFT) build $(FUZZ_FLAGS) --product monsoon-fuzz
	FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/fuzz.sh .build/fuzz/release/monsoon-fuzz

# 300 downloads through the faulty test server while monsoon is killed with SIGKILL at least
# 20 times; checks every byte, the parts, the database and the bytes sent (Tests/Soak). Stops by
# itself within SOAK_MINUTES. SOAK_SEED repeats a run. Then EXIT_STORM_RUNS short commands
# under `stress-ng --cpu 2`, none of which may end by a signal (Tests/ExitStorm, about two minutes).
# Then the chaos tests `make test` leaves out (MONSOON_SOAK=1): workers killed at random, paused
# past their leases, the database away longer than a lease (about two minutes); and the rate
# limit timed on the wire (RateLimitTests, about 25 s), a measurement rather than a check.
SOAK_SUITES := ClusterFaultTests|RateLimitTests
SOAK_MINUTES ?= 10
EXIT_STORM_RUNS ?= 2000
soak: release test-deps
	$(call apt_install,stress-ng)
	.build/release/monsoon-soak --minutes $(SOAK_MINUTES) $(if $(SOAK_SEED),--seed $(SOAK_SEED))
	Tests/ExitStorm/exit_storm.sh --runs $(EXIT_STORM_RUNS)
	$(SWIFT) build --product MonsoonPackageTests
	$(SWIFT) build --product monsoon
	MONSOON_SOAK=1 $(SWIFT) test --skip-build --filter '$(SOAK_SUITES)'

# Refreshes scripts/monsoon.order from callgrind runs of the release binary's main jobs, then
# links again with it (SwiftPM does not see the file change).
order: release
	scripts/order.sh
	rm -f .build/release/monsoon
	$(SWIFT) build $(RELEASE_FLAGS)

# What the demo runs: monsoon and the test server it downloads from.
demo: release-monsoon warcio
	$(SWIFT) build $(RELEASE_FLAGS) --product monsoon-testserver
	scripts/demo.sh

bench: release
	Benchmarks/bench.sh

# One workload of each kind, smaller, one repetition: a check of a change (under 2 minutes).
bench-quick: release
	Benchmarks/bench.sh --quick

# The shared queue under load: 100,000 download jobs over 1,000 hosts, 4 workers of 16 slots,
# against a PostgreSQL of its own (Benchmarks/cluster_bench.py; CLUSTER_JOBS to change the count,
# CLUSTER_OLD=<folder of another build> to run that build too, in the same conditions).
CLUSTER_JOBS ?= 100000
bench-cluster: release
	$(call apt_install,postgresql)
	python3 Benchmarks/cluster_bench.py --jobs $(CLUSTER_JOBS) $(if $(CLUSTER_OLD),--old-build $(CLUSTER_OLD))

clean:
	rm -rf .build
