"""Interface constants and word layouts shared by the slot blocks (``slot_switch``,
``slot_endpoint``, ``slot_fabric``)."""

from amaranth.lib import data

__all__ = ["TIME_BITS", "TAG_BITS", "ECHO_LATENCY", "MAX_DELAY", "word_layout", "out_layout"]

TIME_BITS = 16     # period, guard and phase counters; the widest round-trip counter
TAG_BITS = 2       # slot tag carried by sync pulses and data words
ECHO_LATENCY = 1   # the switch answers a ping one cycle after it arrives
MAX_DELAY = 64     # the test fabric's longest fibre, cycles


def word_layout(d):
    """A word on an up fibre (endpoint -> switch): ``valid``, the slot ``tag`` it was sent
    for (slot number mod 2**TAG_BITS), ``data``. Bit 0 is ``valid``, then ``tag``, then
    ``data``."""
    return data.StructLayout({"valid": 1, "tag": TAG_BITS, "data": d})


def out_layout(d):
    """A crossbar output: ``valid`` (bit 0) and ``data``."""
    return data.StructLayout({"valid": 1, "data": d})
