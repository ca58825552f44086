# casslab: `make demo` and `make test` set up everything on a fresh Debian 12 machine.
SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV      := .venv
PY        := $(VENV)/bin/python
CASSLAB   := $(VENV)/bin/casslab
STAMPS    := .build
CASSANDRA_VERSION ?= 5.0.6
APT_PACKAGES := iproute2 iptables ethtool procps util-linux rsync openjdk-17-jdk-headless maven \
                build-essential pkg-config chromium lxc mmdebstrap openssh-server prometheus
# Only `make bench-vm` needs these (issue 21 is blocked here: no hardware KVM).
VM_PACKAGES := qemu-system-x86 qemu-utils

.PHONY: help setup apt venv rust jars rootfs lint check test test-unit test-cli test-integration bench-tests demo bench bench-vm bench-tune bench-tune-learned reproduce k8s-schemas clean

help:
	@echo "make demo   set up, then run the demo on a local 3-node lab"
	@echo "make check  lint, unit and CLI tests, no lab (< 3 min): run it before every commit"
	@echo "make test   set up, then everything: check, Rust tests, integration tests (< 20 min; CI)"
	@echo "make test-unit | test-cli | test-integration  one tier of the tests on its own"
	@echo "make bench-tests  time make test and make check, record them in BENCHMARKS.md"
	@echo "make bench  set up, then measure and record numbers in BENCHMARKS.md"
	@echo "make bench-vm  the VM spike: one node in a QEMU/KVM VM vs a process (issue 21)"
	@echo "make bench-tune  static vs tuned compaction, side by side, seed 003 scenario (~70 min)"
	@echo "make bench-tune-learned  the same with rules learned here first (~2 h)"
	@echo "make reproduce [STUDY=002] [SCALE=paper|smoke]  the studies' reproductions (hours)"
	@echo "make k8s-schemas  regenerate the CRD schemas of casslab k8s render (needs Go's module proxy)"
	@echo "make setup  only install: apt packages, Python venv, Rust builds, Cassandra jars, LXC root filesystems"

setup: apt venv rust jars rootfs

$(STAMPS):
	mkdir -p $(STAMPS)

# Packages must not start their daemons (openssh-server, prometheus; the tests run their
# own on addresses they made): a policy-rc.d that refuses every start while apt runs,
# removed after unless it was there.
NO_SERVICES := made=; if [ ! -e /usr/sbin/policy-rc.d ]; then printf '\043!/bin/sh\nexit 101\n' \
  > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d && made=1; fi;
SERVICES_BACK := if [ -n "$$made" ]; then rm -f /usr/sbin/policy-rc.d; fi

# apt only when a tool is missing: a fresh machine gets everything, a warm one pays nothing.
apt: | $(STAMPS)
	@if ! command -v ip >/dev/null || ! command -v iptables >/dev/null \
	    || ! command -v ethtool >/dev/null || ! command -v rsync >/dev/null \
	    || ! command -v flock >/dev/null || ! command -v java >/dev/null \
	    || ! command -v jcmd >/dev/null || ! command -v mvn >/dev/null \
	    || ! command -v lxc-start >/dev/null || ! command -v mmdebstrap >/dev/null \
	    || ! test -x /usr/sbin/sshd || ! command -v prometheus >/dev/null; then \
	  echo "installing apt packages: $(APT_PACKAGES)"; \
	  $(NO_SERVICES) apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(APT_PACKAGES); \
	  rc=$$?; $(SERVICES_BACK); exit $$rc; \
	fi

venv: $(STAMPS)/venv.stamp
# The exact versions of requirements.lock (every extra, with hashes, from PyPI), then
# casslab itself without resolving again. uv installs them (itself pinned with its hash,
# requirements-uv.lock): the same files as pip, but it keeps what it fetched in
# ~/.cache/uv, so a fresh clone's venv takes seconds (BENCHMARKS.md, test tiers). It
# compiles the bytecode as pip does: without it every process paid ~2 s to import the
# libraries from source again (importing casslab with numpy, scipy, pandas, matplotlib,
# pyarrow and ansible: 3.3 s against 1.3 s, every time; a fresh clone's unit tests took
# 163 s instead of 110-127 s).
# After a change of pyproject's dependencies:
#   uv pip compile pyproject.toml --all-extras --generate-hashes --python-version 3.11 \
#     --python-platform x86_64-unknown-linux-gnu -o requirements.lock
$(STAMPS)/venv.stamp: pyproject.toml requirements.lock requirements-uv.lock | $(STAMPS)
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --require-hashes -r requirements-uv.lock
	$(VENV)/bin/uv pip install -q --python $(PY) --compile-bytecode --require-hashes \
	  -r requirements.lock
	$(VENV)/bin/uv pip install -q --python $(PY) --compile-bytecode --no-deps -e .
	touch $@

# Rust builds go to one target directory per machine, beside the jar cache: a fresh clone
# then compiles only this workspace's three crates, not their ~200 dependencies again.
# The release binaries are built from one copy of the Rust sources per machine
# ($(RUST_SRC), synced by content): cargo keys a path crate's artifacts by its path, so a
# build in each fresh clone compiled the three crates again (50 s here) although they had
# not changed; from the copy, a clone whose crates match the last build compiles nothing,
# and one that changed them compiles what changed (rsync rewrites only files whose content
# differs, so cargo's mtime check sees exactly those). flock keeps two trees' builds from
# syncing over each other. The binaries the Python side runs are copied into
# ./target/release right after the build. mypy's cache is kept there too (it checks each
# module's hash). `cargo test` and clippy run in the tree itself (the tests read golden
# files beside the crates).
CASSLAB_CACHE ?= $(HOME)/.cache/casslab
export CARGO_TARGET_DIR ?= $(CASSLAB_CACHE)/cargo-target
export MYPY_CACHE_DIR ?= $(CASSLAB_CACHE)/mypy-cache
RUST_SRC := $(CASSLAB_CACHE)/rust-src
RUST_BINS := casslab-load casslab-netem

rust:
	mkdir -p $(RUST_SRC) target/release
	flock $(RUST_SRC).lock sh -c 'rsync -rc --delete Cargo.toml Cargo.lock crates $(RUST_SRC)/ \
	  && cd $(RUST_SRC) && cargo build --release --workspace -j 2 \
	  && cp -f $(addprefix $(CARGO_TARGET_DIR)/release/,$(RUST_BINS)) $(CURDIR)/target/release/'

jars: venv
	$(CASSLAB) fetch --cassandra-version $(CASSANDRA_VERSION)

# The LXC root filesystems (Debian packages, built once into the cache): the lxc runtime's
# node containers and the systemd stand-in hosts' machines; tests then download nothing.
rootfs: venv
	$(PY) -c 'from casslab.core.paths import default_cache; from casslab.lab import lxc; \
	  from casslab.system import sshhosts; lxc.ensure_rootfs(default_cache(), print); \
	  sshhosts.ensure_machine_rootfs(default_cache(), print)'

lint: venv
	$(VENV)/bin/ruff check src tests scripts
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports
	$(VENV)/bin/vulture
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -j 2 -- -D warnings

# The test tiers (issue 28), each with a budget on these 2 cores:
# - check: lint, unit and CLI tests, never a lab; under 3 minutes; before every commit.
#   Its tests run on both cores (pytest-xdist): they are pure logic or one short command
#   each, and every one has its own temporary directory and CASSLAB_HOME.
# - test: everything (CI's .ci/run): check, the Rust tests, then every test marked
#   `integration` (real labs): first two modules at a time (each worker has its own home,
#   shared labs and stand-in hosts; a module stays on one worker, the stand-in hosts'
#   modules go together: tests/scheduling.py), then alone the ones marked `timing` (they
#   measure delays and rates a neighbour would disturb); under 20 minutes.
# Every test that needs a lab is marked `integration` (tests/integration/conftest.py
# refuses a module there without the mark), so the two selections cover every test.
PYTEST := $(VENV)/bin/pytest -q -ra
CHECK_JOBS ?= 2
NO_LAB := -m "not integration"
INTEGRATION_JOBS ?= 2
ALONE := timing
INTEGRATION := $(PYTEST) -n $(INTEGRATION_JOBS) --dist loadfile -m "integration and not ($(ALONE))" tests \
  && $(PYTEST) -m "integration and ($(ALONE))" tests

check: apt venv rust lint
	$(PYTEST) -n $(CHECK_JOBS) $(NO_LAB) tests/unit tests/cli

test-unit: venv
	$(PYTEST) -n $(CHECK_JOBS) $(NO_LAB) tests/unit

test-cli: venv rust
	$(PYTEST) -n $(CHECK_JOBS) $(NO_LAB) tests/cli

test-integration: setup
	$(INTEGRATION)

# The Rust tests build in the dev profile: they are logic, not measurements (104 + 25
# tests run in 0.2 s either way), and a fresh clone's test build of the three crates takes
# 12 s there against 61 s in release. Their dependencies' debug build (with tokio's
# test-util, which the tests' paused clock needs and the release binaries must not carry)
# is made once per machine, in the shared target directory.
test: setup check
	cargo test --workspace -j 2
	$(INTEGRATION)

# Both tiers timed with their 20 slowest tests (--fresh: make test in a fresh clone).
bench-tests: venv
	$(PY) scripts/bench_tests.py $(if $(FRESH),--fresh)

demo: setup
	$(PY) scripts/demo_campaign.py

bench: setup
	$(PY) scripts/bench_lab.py
	$(PY) scripts/bench_load.py
	$(PY) scripts/bench_clients.py
	$(PY) scripts/bench_net.py
	$(PY) scripts/bench_plan.py
	$(PY) scripts/bench_startup.py
	$(PY) scripts/bench_runtimes.py

# The VM spike (issue 21): builds a Debian image once (~/.cache/casslab/vm), then VM and
# process node take turns; its verdict (passes or blocked) goes to BENCHMARKS.md.
bench-vm: setup
	@if ! command -v qemu-system-x86_64 >/dev/null || ! command -v qemu-img >/dev/null; then \
	  $(NO_SERVICES) apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(VM_PACKAGES); \
	  rc=$$?; $(SERVICES_BACK); [ $$rc = 0 ] || exit $$rc; \
	fi
	$(PY) scripts/spike_vm.py --reps 3

# The tuner comparison replays seed 003's scenario 3 + 3 times: about an hour.
bench-tune: setup
	$(PY) scripts/bench_tune.py --reps 3 --stage-scale 0.025

# Rules learned here for the scenario's points (TTL x read share of its stages), on one
# core as each lab of the side-by-side comparison has; then the comparison with them.
bench-tune-learned: setup
	taskset -c 0 $(VENV)/bin/casslab tune learn --windows 1m,2m --min-thresholds 6,10 \
	  --ttls 180s,360s,540s --read-shares 0.03,0.1,0.3 --duration 60s --lab tlearn \
	  --results results/tune-learn-scenario -o results/tune-rules-scenario.yaml
	$(PY) scripts/bench_tune.py --reps 3 --stage-scale 0.025 \
	  --rules results/tune-rules-scenario.yaml

# Every spec of each study (examples/<study>-*/), then its report; resumable.
reproduce: setup
	$(PY) scripts/reproduce.py $(if $(STUDY),--study $(STUDY)) $(if $(SCALE),--scale $(SCALE))

# The CRD schemas `casslab k8s render` validates against, from the operators' Go modules at
# the versions pinned in the script; not part of setup or test (the files are committed).
k8s-schemas: venv
	$(PY) scripts/k8s_schemas.py

clean:
	rm -rf $(VENV) $(STAMPS) target
