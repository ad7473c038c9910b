"""Amaranth's own simulator, set up once for the unit tests of ``tests/rtl``."""

from amaranth.hdl import ClockDomain, Module
from amaranth.sim import Simulator

__all__ = ["run_sync"]


def run_sync(bench, *, top=None, domain=None, period=1e-6, **submodules):
    """Elaborate ``submodules`` (name=elaboratable) in one module (``top``, when the test wires
    them together itself) with a ``sync`` clock domain (``domain``, when the bench drives its
    reset) clocked every ``period`` seconds, and run the async testbench ``bench(ctx)`` to its
    end."""
    m = top if top is not None else Module()
    m.domains.sync = domain if domain is not None else ClockDomain("sync")
    for name, sub in submodules.items():
        m.submodules[name] = sub
    sim = Simulator(m)
    sim.add_clock(period)
    sim.add_testbench(bench)
    sim.run()
