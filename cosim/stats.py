"""Statistics a testbench reports back to the runner (transactions and cycles simulated)."""

from __future__ import annotations

import json
import os

STATS_ENV = "AIFABRIC_STATS"
PARAMS_ENV = "AIFABRIC_PARAMS"   # the block's parameters, JSON: for testbenches that cannot
                                 # read every parameter off the ports' widths


def block_params() -> dict:
    """The parameters the block was generated with: set by ``aifabric cosim`` and by the
    FuseSoC ``sim`` targets. Without them a testbench cannot know what it is testing, so it
    stops at once, saying so (a testbench that assumed defaults would wait for outputs a
    smaller block never gives)."""
    text = os.environ.get(PARAMS_ENV)
    if not text:
        raise RuntimeError(f"${PARAMS_ENV} is not set: run this testbench through "
                           "`aifabric cosim` or a FuseSoC sim target (rtl/<area>/<block>.core), "
                           "which pass the parameters the Verilog was generated with")
    return json.loads(text)


def seed_text(test_seed: int | None = None, run_seed: str | None = None) -> str:
    """Which seed is which, for a testbench's log line. The run's seed is the one
    ``aifabric cosim`` prints (``run seed N``; cocotb's ``COCOTB_RANDOM_SEED``, what
    ``SEED=N`` replays). Inside a test ``cocotb.RANDOM_SEED`` is another number: cocotb adds
    a hash of the test's name to the run's seed so that each test draws its own stream, and
    the testbench seeds its stimulus and the golden model's draws from that test seed.
    Printed bare beside the run's seed, the two looked like a disagreement."""
    if test_seed is None:
        import cocotb
        test_seed = cocotb.RANDOM_SEED
    if run_seed is None:
        run_seed = os.environ.get("COCOTB_RANDOM_SEED", "").strip() or None
    run = (f"run seed {run_seed} (SEED={run_seed} replays it)" if run_seed is not None else
           "run seed as cocotb logged it at start ('Seeding Python random module with')")
    return (f"{run}; this test's seed {test_seed} (cocotb's RANDOM_SEED in a test: the run "
            f"seed plus a hash of the test's name)")


class CycleMeter:
    """Clock cycles simulated since it was made, measured from simulation time (so a
    testbench's reported cycle count cannot drift from what it ran)."""

    def __init__(self, period_ns: float) -> None:
        from cocotb.simtime import get_sim_time
        self._now = lambda: get_sim_time("ns")
        self.period_ns = period_ns
        self.start_ns = self._now()

    @property
    def cycles(self) -> int:
        return int(round((self._now() - self.start_ns) / self.period_ns))


def record_stats(test: str, *, transactions: int, cycles: int, seconds: float | None = None,
                 **extra) -> None:
    """Append one JSON line for ``test`` to the file the runner named in ``AIFABRIC_STATS``.

    Does nothing when the testbench runs outside the runner.
    """
    path = os.environ.get(STATS_ENV)
    if not path:
        return
    line = {"test": test, "transactions": transactions, "cycles": cycles, "seconds": seconds}
    line.update(extra)
    with open(path, "a") as f:
        f.write(json.dumps(line) + "\n")


def read_stats(path) -> list[dict]:
    try:
        with open(path) as f:
            return [json.loads(line) for line in f if line.strip()]
    except FileNotFoundError:
        return []
