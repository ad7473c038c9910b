"""Parameter checks shared by the optics controllers' models (``models.infinitehbd.ocstrx``,
``models.flexsipac.wss``, ``models.flexsipac.transceiver``)."""

from __future__ import annotations

__all__ = ["check_ranges", "check_settle"]


def check_ranges(*ranges) -> None:
    """``(name, value, low, high)`` each: ValueError naming the first value that is not an
    int in its range."""
    for name, v, lo, hi in ranges:
        if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
            raise ValueError(f"{name} must be an int in {lo}..{hi}, not {v!r}")


def check_settle(settle, timer_bits: int) -> None:
    """The settle time at reset must fit the timer and be at least one cycle."""
    top = (1 << timer_bits) - 1
    if not isinstance(settle, int) or isinstance(settle, bool) or not 1 <= settle <= top:
        raise ValueError(f"settle must be 1..{top} cycles (timer_bits {timer_bits}), "
                         f"not {settle!r}")
