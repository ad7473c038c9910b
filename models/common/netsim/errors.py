"""The simulator's error for what cannot be simulated as asked, in a module of its own: the
registry raises it for an unknown name and the network builders for a bad parameter, and the
builders look names up in the registry, so neither of the two can hold it for the other."""

from __future__ import annotations

__all__ = ["NetworkError"]


class NetworkError(ValueError):
    """A network, routing function or parameter that cannot be simulated as asked."""
