"""Topologies and routing functions by name (as BookSim2 registers networks and routing
functions): the simulator core knows only its built-in mesh and torus; a system package
registers its own (RailX registers ``hyperx``, ``railx-torus``, ``dragonfly`` and its minimal
routing from its own package).

A sweep point names its topology; the spec's other keys are the builder's parameters. The
point also carries the *provider* (the module that registered the topology), so a worker
process, a fresh interpreter or a Dask worker imports that module before building the point:
the core never names a system, and a point is still self-contained.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable

__all__ = ["TopologyEntry", "register_topology", "register_routing", "topology", "routing",
           "topologies", "routings", "provider", "load_provider"]


@dataclass(frozen=True)
class TopologyEntry:
    """``build(**params) -> Network``; ``params``: the spec keys it accepts; ``provider``: the
    module that registered it; ``doc``: one line for listings."""

    name: str
    build: Callable
    params: frozenset
    provider: str
    doc: str = ""


_TOPOLOGIES: dict[str, TopologyEntry] = {}
_ROUTINGS: dict[str, Callable] = {}


def _check_name(name) -> str:
    if not isinstance(name, str) or not name:
        raise ValueError(f"a registered name must be a non-empty string, not {name!r}")
    return name


def register_topology(name: str, build: Callable, params, *, doc: str = "",
                      provider: str | None = None) -> None:
    """Register ``build`` under ``name`` (re-registering the same builder is a no-op; another
    builder under a taken name is refused)."""
    _check_name(name)
    entry = TopologyEntry(name, build, frozenset(params), provider or build.__module__, doc)
    old = _TOPOLOGIES.get(name)
    if old is not None and (old.build.__module__, old.build.__qualname__) != \
            (build.__module__, build.__qualname__):
        raise ValueError(f"topology {name!r} is already registered by {old.provider}")
    _TOPOLOGIES[name] = entry


def register_routing(name: str, compile_tables: Callable) -> None:
    """Register a routing-table compiler under ``name`` (its signature is the topology's
    business: a builder resolves it with :func:`routing`)."""
    _ROUTINGS[_check_name(name)] = compile_tables


def load_provider(module: str | None) -> None:
    """Import the module that registers a point's topology (a no-op if already imported)."""
    if module:
        importlib.import_module(module)


def topology(name: str, provider: str | None = None) -> TopologyEntry:
    """The entry registered as ``name`` (importing ``provider`` first if given)."""
    from .network import NetworkError
    if name not in _TOPOLOGIES and provider:
        try:
            load_provider(provider)
        except ImportError as e:
            raise NetworkError(f"topology {name!r}: cannot import its provider {provider!r} "
                               f"({e})") from None
    if name not in _TOPOLOGIES:
        raise NetworkError(f"unknown topology {name!r}; registered: {', '.join(topologies())}")
    return _TOPOLOGIES[name]


def routing(name: str) -> Callable:
    from .network import NetworkError
    if name not in _ROUTINGS:
        raise NetworkError(f"unknown routing {name!r}; registered: {', '.join(routings())}")
    return _ROUTINGS[name]


def topologies() -> tuple[str, ...]:
    return tuple(_TOPOLOGIES)


def routings() -> tuple[str, ...]:
    return tuple(_ROUTINGS)


def provider(name: str) -> str:
    """The module that registered topology ``name``."""
    return topology(name).provider
