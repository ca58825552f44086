# casslab: `make demo` and `make test` set up everything on a fresh Debian 12 machine.
SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV      := .venv
PY        := $(VENV)/bin/python
CASSLAB   := $(VENV)/bin/casslab
STAMPS    := .build
CASSANDRA_VERSION ?= 5.0.6
APT_PACKAGES := iproute2 iptables ethtool procps util-linux openjdk-17-jdk-headless maven \
                build-essential pkg-config chromium lxc mmdebstrap prometheus

.PHONY: help setup apt venv rust jars lint test test-unit test-integration demo bench bench-tune bench-tune-learned reproduce clean

help:
	@echo "make demo   set up, then run the demo on a local 3-node lab"
	@echo "make test   set up, then run lint, unit, CLI and integration tests"
	@echo "make bench  set up, then measure and record numbers in BENCHMARKS.md"
	@echo "make bench-tune  static vs tuned compaction, side by side, seed 003 scenario (~70 min)"
	@echo "make bench-tune-learned  the same with rules learned here first (~2 h)"
	@echo "make reproduce [STUDY=002] [SCALE=paper|smoke]  the studies' reproductions (hours)"
	@echo "make setup  only install: apt packages, Python venv, Rust builds, Cassandra jars"

setup: apt venv rust jars

$(STAMPS):
	mkdir -p $(STAMPS)

# apt only when a tool is missing: a fresh machine gets everything, a warm one pays nothing.
# A policy-rc.d that exits 101 while installing: packages (prometheus) start no daemon;
# the tests run their own Prometheus on loopback.
apt: | $(STAMPS)
	@if ! command -v ip >/dev/null || ! command -v iptables >/dev/null \
	    || ! command -v ethtool >/dev/null || ! command -v java >/dev/null \
	    || ! command -v jcmd >/dev/null || ! command -v mvn >/dev/null \
	    || ! command -v lxc-start >/dev/null || ! command -v mmdebstrap >/dev/null \
	    || ! command -v prometheus >/dev/null; then \
	  echo "installing apt packages: $(APT_PACKAGES)"; \
	  made_policy=; if [ ! -e /usr/sbin/policy-rc.d ]; then \
	    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d; \
	    made_policy=1; fi; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(APT_PACKAGES); \
	  rc=$$?; [ -n "$$made_policy" ] && rm -f /usr/sbin/policy-rc.d; exit $$rc; \
	fi

venv: $(STAMPS)/venv.stamp
$(STAMPS)/venv.stamp: pyproject.toml | $(STAMPS)
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e '.[dev]'
	touch $@

rust:
	cargo build --release --workspace -j 2

jars: venv
	$(CASSLAB) fetch --cassandra-version $(CASSANDRA_VERSION)

lint: venv
	$(VENV)/bin/ruff check src tests scripts
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -j 2 -- -D warnings

test-unit: venv
	$(VENV)/bin/pytest -q tests/unit

test-integration: setup
	$(VENV)/bin/pytest -q tests/cli tests/integration

test: setup lint
	cargo test --workspace --release -j 2
	$(VENV)/bin/pytest -q -ra tests

demo: setup
	$(PY) scripts/demo_campaign.py

bench: setup
	$(PY) scripts/bench_lab.py
	$(PY) scripts/bench_load.py
	$(PY) scripts/bench_net.py
	$(PY) scripts/bench_plan.py
	$(PY) scripts/bench_startup.py
	$(PY) scripts/bench_runtimes.py

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

clean:
	rm -rf $(VENV) $(STAMPS) target
