"""Chronos hardware: the wrapped wave-front arbiter (and, later, the BhaVaN BvN engine)."""

from .wwfa import WavefrontArbiter

__all__ = ["WavefrontArbiter"]
