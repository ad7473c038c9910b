"""Chronos (Renganathan & McKeown, NAIC'25): prescheduled circuit switching for LLM training.

So far: the wrapped wave-front arbiter (:mod:`models.chronos.wwfa`) that the BhaVaN BvN engine
builds on. It reproduces no number of the paper by itself, so :func:`reproduce` has no records
yet; the permutation-stack, time-slot and BvN models add theirs.
"""

from __future__ import annotations

from models.common.records import Record

from .wwfa import WavefrontArbiter

__all__ = ["WavefrontArbiter", "reproduce"]


def reproduce() -> list[Record]:
    """Records of the Chronos paper's figures that this package reproduces."""
    return []
