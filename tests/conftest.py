import pytest
from hypothesis import HealthCheck, settings

# numpy's first calls and Amaranth elaboration make the first examples slow; time is measured
# in `make bench`, never in tests.
settings.register_profile("aifabric", deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("aifabric")


def pytest_addoption(parser):
    parser.addoption("--cosim-seed", type=int, default=1,
                     help="random seed of the cocotb co-simulations (default 1)")


@pytest.fixture
def cosim_seed(request):
    return request.config.getoption("--cosim-seed")
