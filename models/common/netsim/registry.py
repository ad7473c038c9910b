"""Topologies, routing functions, routers, allocators and link models by name (as BookSim2
registers networks, routing functions, routers and allocators): the simulator core knows only
its built-in mesh and torus, the dimension-order routing, its three routers, three
allocators, three link models and two sources; a system package registers its own topologies and routings
(RailX registers ``hyperx``, ``railx-torus``, ``dragonfly`` and its minimal routing from its
own package). Each behaviour of the RailX authors' simulator that the ``vct`` router lacks is
a choice of its own (``perlink`` links, the ``age`` allocator, the ``open`` source), so each
can be switched off alone.

Every name a spec, a :class:`.sim.Simulator` or the command line takes is resolved here: an
unknown name is one :class:`.errors.NetworkError` line listing the registered ones, and a
kind's default is held once, by the entry registered with ``default=True``
(:func:`default`). Routers, allocators and link models are *choices*: an entry with the
``code`` the compiled kernel switches on and the ``fields`` the reference model reads (a
router's ``bypass``, ``credit``, ``cross`` and ``needs``, see :mod:`models.common.netsim`).

A sweep point names its topology; the spec's other keys are the builder's parameters. The
point also carries the *provider* (the module that registered the topology), so a worker
process, a fresh interpreter or a Dask worker imports that module before building the point:
the core never names a system, and a point is still self-contained.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable

from .errors import NetworkError

__all__ = ["TopologyEntry", "RoutingEntry", "Choice", "register_topology", "register_routing",
           "register_choice", "check_router", "topology", "routing", "topologies", "routings", "provider",
           "load_provider", "choice", "choices", "default", "KINDS"]

# the kinds of choice the simulator takes by name (spec key and CLI option of the same name)
KINDS = ("router", "allocator", "links", "source")


@dataclass(frozen=True)
class TopologyEntry:
    """``build(**params) -> Network``; ``params``: the spec keys it accepts; ``provider``: the
    module that registered it; ``doc``: one line for listings."""

    name: str
    build: Callable
    params: frozenset
    provider: str
    doc: str = ""


@dataclass(frozen=True)
class RoutingEntry:
    """``compile(...)``: the routing-table compiler (its signature is the topologies'
    business); ``topologies``: the topology names it compiles tables for; ``default``: the
    routing those topologies take when a spec names none."""

    name: str
    compile: Callable
    topologies: tuple
    doc: str = ""
    default: bool = False


@dataclass(frozen=True)
class Choice:
    """A router, switch allocator, link model or source: ``code`` is what the compiled kernel switches
    on, ``fields`` what the reference model reads."""

    kind: str
    name: str
    code: int
    doc: str
    default: bool = False
    fields: tuple = ()

    def __getattr__(self, key):
        for k, v in object.__getattribute__(self, "fields"):
            if k == key:
                return v
        raise AttributeError(key)


_TOPOLOGIES: dict[str, TopologyEntry] = {}
_ROUTINGS: dict[str, RoutingEntry] = {}
_CHOICES: dict[str, dict[str, Choice]] = {kind: {} for kind in KINDS}


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


def register_routing(name: str, compile_tables: Callable, *, topologies=(), doc: str = "",
                     default: bool = False) -> None:
    """Register a routing-table compiler under ``name`` for the topologies it serves (a
    builder resolves a spec's ``routing`` with :func:`routing`; ``default``: the one they take
    when the spec names none)."""
    _ROUTINGS[_check_name(name)] = RoutingEntry(name, compile_tables, tuple(topologies), doc,
                                                default)


def register_choice(kind: str, name: str, code: int, doc: str, *, default: bool = False,
                    **fields) -> None:
    """Register a router, allocator, link model or source (``kind``) under ``name``; one
    entry of a kind is its ``default``. A router's ``cross`` (cycles from a switch grant to
    the flit's crossing, 1 only for the registered router's rules) is 0 and its ``needs``
    (see :func:`check_router`) None unless given."""
    if kind not in _CHOICES:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
    _check_name(name)
    entries = _CHOICES[kind]
    if default and any(e.default for n, e in entries.items() if n != name):
        raise ValueError(f"{kind} {name!r}: the default {kind} is already "
                         f"{default_name(kind)!r}")
    if any(e.code == code for n, e in entries.items() if n != name):
        raise ValueError(f"{kind} {name!r}: kernel code {code} is taken")
    if kind == "router":
        fields = {"cross": 0, "needs": None, **fields}
    entries[name] = Choice(kind, name, int(code), doc, default, tuple(sorted(fields.items())))


def choice(kind: str, name: str | None) -> Choice:
    """The ``kind`` entry registered as ``name`` (None: the kind's default)."""
    entries = _CHOICES[kind]
    if name is None:
        name = default_name(kind)
    if not isinstance(name, str) or name not in entries:
        raise NetworkError(f"unknown {kind} {name!r}; registered: {', '.join(entries)}")
    return entries[name]


def choices(kind: str) -> tuple[str, ...]:
    return tuple(_CHOICES[kind])


def default_name(kind: str) -> str:
    for name, e in _CHOICES[kind].items():
        if e.default:
            return name
    raise LookupError(f"no default {kind} registered")


def default(kind: str) -> Choice:
    """The entry a kind takes when nothing names one."""
    return choice(kind, None)


def load_provider(module: str | None) -> None:
    """Import the module that registers a point's topology (a no-op if already imported)."""
    if module:
        importlib.import_module(module)


def topology(name: str, provider: str | None = None) -> TopologyEntry:
    """The entry registered as ``name`` (importing ``provider`` first if given)."""
    if name not in _TOPOLOGIES and provider:
        try:
            load_provider(provider)
        except ImportError as e:
            raise NetworkError(f"topology {name!r}: cannot import its provider {provider!r} "
                               f"({e})") from None
    if name not in _TOPOLOGIES:
        raise NetworkError(f"unknown topology {name!r}; registered: {', '.join(topologies())}")
    return _TOPOLOGIES[name]


def routing(name: str | None, topology_name: str | None = None) -> RoutingEntry:
    """The routing registered as ``name`` (None: ``topology_name``'s default); with
    ``topology_name``, one that compiles tables for that topology."""
    if name is None:
        for e in _ROUTINGS.values():
            if e.default and topology_name in e.topologies:
                return e
        raise NetworkError(f"no default routing for topology {topology_name!r}")
    if not isinstance(name, str) or name not in _ROUTINGS:
        raise NetworkError(f"unknown routing {name!r}; registered: {', '.join(routings())}")
    e = _ROUTINGS[name]
    if topology_name is not None and topology_name not in e.topologies:
        serve = [n for n, r in _ROUTINGS.items() if topology_name in r.topologies]
        raise NetworkError(f"routing {name!r} does not route a {topology_name}; for it: "
                           f"{', '.join(serve)}")
    return e


def topologies() -> tuple[str, ...]:
    return tuple(_TOPOLOGIES)


def routings(topology_name: str | None = None) -> tuple[str, ...]:
    return tuple(n for n, e in _ROUTINGS.items()
                 if topology_name is None or topology_name in e.topologies)


# -- the core's own choices -------------------------------------------------------------------
# (the semantics are pinned in the package docstring, :mod:`models.common.netsim`)

register_choice("router", "pipelined", 0,
                "input-queued VC router, VC allocation then switch allocation a cycle later, "
                "credits back after the link delay (the textbook router)",
                default=True, bypass=False, credit="link")
register_choice("router", "vct", 1,
                "ideal virtual cut-through router (RailX §6.1): route, VC and switch "
                "allocation and traversal in one cycle, credits back the next cycle",
                bypass=True, credit="next")
register_choice("router", "registered", 2,
                "the router RTL's: VC requests formed a cycle ahead, switch allocation "
                "speculating beside VC allocation, registered grants (a flit crosses the "
                "cycle after its grant)", bypass=False, credit="link", cross=1,
                needs=(1, ("separable", "wavefront"), ("shared",)))
register_choice("allocator", "separable", 0,
                "switch allocation: separable round robin, input first", default=True)
register_choice("allocator", "wavefront", 1,
                "switch allocation: the wrapped wave-front arbiter over input x output ports")
register_choice("allocator", "age", 2,
                "VC and switch allocation by age: the oldest packet (creation cycle, then tag) "
                "wins every output VC, input port and output port it asks for (CNSim)")
register_choice("links", "shared", 0,
                "a port of w lanes is one link shared flit by flit by every packet",
                default=True)
register_choice("links", "parallel", 1,
                "a port of w lanes is the network's links[r, p] parallel links of "
                "w / links lanes, each held by one packet from its head to its tail")
register_choice("links", "perlink", 2,
                "the parallel links, each with its own input buffer of V VCs downstream "
                "(links x V VCs per port, CNSim's); a head takes an empty VC of a free link, "
                "else one with room")
register_choice("source", "fifo", 0,
                "one FIFO per chip into the local port's VCs, packets in creation order",
                default=True)
register_choice("source", "open", 1,
                "no FIFO: each queued packet takes its own local VC (as many as a chip has "
                "output links, at most) and competes for its route on its own (CNSim's)")


def check_router(router: Choice, allocator: str, links: str, lanes: int) -> None:
    """Refuse, in one :class:`.errors.NetworkError` line naming the router and what it
    needs, a router whose ``needs`` (the most lanes a port may have, the allocators and the
    link models it is built for) the others break; ``lanes``: the widest port's."""
    if router.needs is None:
        return
    most, allocators, models = router.needs
    if lanes > most or allocator not in allocators or links not in models:
        raise NetworkError(f"router {router.name!r} needs ports of at most {most} lane, "
                           f"allocator {' or '.join(allocators)}, links "
                           f"{' or '.join(models)} (given {lanes} lane{'s' * (lanes != 1)}, "
                           f"{allocator}, {links})")


def provider(name: str) -> str:
    """The module that registered topology ``name``."""
    return topology(name).provider
