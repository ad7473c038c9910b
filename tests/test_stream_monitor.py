"""The stream monitor's three rules, each made to fire on a hand-written trace (no simulator:
the monitor only reads ``.value`` of its signals)."""

import pytest

from aifabric.cosim.stream import ProtocolError, StreamMonitor


class Value(int):
    def to_unsigned(self):
        return int(self)


class Sig:
    def __init__(self):
        self.value = Value(0)


class Dut:
    def __init__(self):
        self.s__valid, self.s__ready, self.s__payload, self.rst = Sig(), Sig(), Sig(), Sig()


def replay(trace):
    """trace: (rst, valid, ready, payload) per cycle; returns the monitor."""
    dut = Dut()
    mon = StreamMonitor(dut, "s", dut.rst)
    for cycle, (rst, valid, ready, payload) in enumerate(trace):
        for sig, v in ((dut.rst, rst), (dut.s__valid, valid), (dut.s__ready, ready),
                       (dut.s__payload, payload)):
            sig.value = Value(v)
        mon.sample(cycle)
    return mon


def test_legal_trace_counts_beats():
    mon = replay([(1, 0, 0, 0), (0, 1, 0, 5), (0, 1, 0, 5), (0, 1, 1, 5), (0, 1, 1, 6),
                  (0, 0, 0, 9), (0, 1, 1, 7)])
    assert mon.beats == 3


@pytest.mark.parametrize("trace,signal,cycle", [
    ([(1, 1, 0, 0)], "valid", 0),                                      # valid in reset
    ([(0, 1, 0, 5), (0, 0, 0, 5)], "valid", 1),                        # withdrawn
    ([(0, 1, 0, 5), (0, 1, 0, 6)], "payload", 1),                      # changed while waiting
    ([(0, 1, 0, 5), (0, 1, 0, 5), (0, 1, 1, 4)], "payload", 2),        # changed as taken
])
def test_each_rule_fires_naming_cycle_and_signal(trace, signal, cycle):
    with pytest.raises(ProtocolError, match=rf"stream 's', cycle {cycle}: s__{signal} "):
        replay(trace)


def batched(trace, every=512):
    """The same trace through the batched checker (:class:`cosim.batch.StreamLog`)."""
    from aifabric.cosim.batch import StreamLog
    log = StreamLog("s", every=every)
    for cycle, (rst, valid, ready, payload) in enumerate(trace):
        log.record(cycle, rst, valid, ready, payload)
    log.check()
    return log


@pytest.mark.parametrize("every", [1, 2, 512])
def test_batched_reset_rule_starts_at_the_edge_that_takes_the_reset(every):
    """The first cycle of a reset still shows the outputs from before it (the rising edge that
    takes the reset comes after it); valid high in the next reset cycle is an error, named
    with its cycle, however the cycles fall into batches."""
    batched([(0, 1, 0, 5), (1, 1, 0, 5), (1, 0, 0, 0), (0, 0, 1, 0)], every)
    batched([(1, 1, 0, 5), (1, 0, 0, 0)], every)               # a run that starts in reset
    with pytest.raises(ProtocolError, match=r"cycle 2: s__valid is high during reset"):
        batched([(0, 0, 1, 0), (1, 1, 0, 5), (1, 1, 0, 5)], every)


def test_batched_gap_checks_before_it_and_names_cycles_after_it():
    """``gap(n)``: what was recorded is checked at once, and the cycles after the gap keep
    their own numbers (a violation after it is named with its cycle)."""
    from aifabric.cosim.batch import StreamLog
    log = StreamLog("s")
    log.record(0, 0, 1, 0, 5)
    log.record(1, 0, 0, 0, 0)                  # withdrawn before it was taken
    with pytest.raises(ProtocolError, match=r"cycle 1: s__valid fell"):
        log.gap(100)
    log = StreamLog("s")
    log.record(0, 0, 1, 1, 5)
    log.record(1, 0, 0, 0, 0)
    log.gap(100)
    log.record(102, 0, 1, 0, 7)
    log.record(103, 0, 0, 0, 0)
    with pytest.raises(ProtocolError, match=r"cycle 103: s__valid fell"):
        log.check()
    assert log.beats == 1
