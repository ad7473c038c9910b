"""Cycle-level network simulator: input-queued VC routers, credits, virtual cut-through.

The core (this package) knows no system: mesh and torus are built in; a system registers its
topologies and routing-table compilers by name (:mod:`.registry`; RailX's from its own
package), and a sweep resolves a spec's ``topology``, ``routing``, ``router``, ``allocator``
and ``links`` through the registry. The switch allocator's wave-front arbiter is the shared
model :mod:`models.common.wwfa`.

Three routers, each written twice: :mod:`.reference` (plain Python objects, the readable
definition) and :mod:`.kernel` (flat arrays under numba, the fast one); the tests hold them
equal event for event. The router RTL is held to the ``registered`` router's contract.

Routers (registered names)
==========================
- ``pipelined`` (the default): the contract below, the textbook input-queued router (ports
  of several lanes, every allocator and link model).
- ``vct``, the ideal virtual cut-through router of RailX §6.1 and A.6 (as the authors'
  simulator, CNSim, runs it in one stage): everything below except two rules.
  (1) *One cycle per router*: a head is routed, VC-allocated, switch-allocated and crosses
  the switch in the same cycle, the first cycle it is ready (written in t, crosses in
  t + 1), so a packet of L flits over H hops at zero load takes
  ``(H + 1) + H·d + ceil(L / k) - 1`` cycles. (2) *Credits come back the next cycle*: the
  slot a flit leaves in cycle t is a credit of the upstream router in t + 1, whatever the
  link's delay (CNSim releases a packet's buffer space when its tail leaves, with no delay;
  the pipelined router's credit crosses the link back, ``d`` cycles). A VC accepts a new
  head whenever it has room for the whole packet, so several packets queue in one VC one
  behind the other, and an output VC is held by a packet only while its flits cross (from
  its VC allocation to its tail's traversal), as in the pipelined router.

- ``registered``, the router RTL's (``rtl/railx/router.py``, whose docstring has the timing
  diagram): one lane per port, ``separable`` or ``wavefront`` allocation, ``shared`` links (a
  simulator or reference network of anything else is refused in one line naming what it
  needs). The contract below except three rules. (1) *VC requests a cycle ahead*: at the
  end of cycle c every input VC without an output VC whose front is a head written by c
  asks for port 0, or for the lowest VC of its range that was free, with credits for the
  whole packet, at the start of c (a credit arriving in c counts); in c + 1 each output VC
  still free grants one of its requesters (round robin), port 0 at once. (2) *Speculative
  switch allocation* beside it, one round: a requester asks for its route's port, and its
  grant is void (nothing moves) unless VC allocation is sure of it (port 0, or the only
  requester of a free output VC); a VC holding an output VC asks with a flit written before
  the cycle, without a credit check (VC allocation covered the packet); every grant moves
  the round-robin pointers. (3) *Registered grants*: a flit granted in s crosses in s + 1
  (written downstream in s + 1 + d, or ejected in s + 1, the cycle its switch event of
  port 0 is logged in; other switch events are logged in s), taking its output VC's credit
  then, and a tail frees the output VC from s + 2; the input slot's credit goes upstream
  as in ``pipelined`` (in s + d). So a head crosses a router in two cycles and a link in d
  (zero-load latency as ``pipelined``), an output VC idles two cycles between two packets
  (``pipelined``: one), and a credit arriving in t puts a waiting head into the next router
  in t + 2 + d.

Link models (registered names)
==============================
- ``shared`` (the default): a port of w lanes is one link; every packet on the port shares
  its w flits a cycle, flit by flit (the switch rounds below).
- ``parallel``: the port is ``Network.links[r, p]`` parallel links of w / links lanes (RailX:
  a chip-to-chip connection is n links of k lanes, the chip edge's n ports; rails and the
  mesh/torus: one link). A head needs a free link of its output port to be VC-allocated; the
  packet holds that link until its tail crosses and sends at most its lanes a cycle, so a
  packet never spreads over two links (a physical bundle of n ports, and CNSim's links, which
  one packet holds at a time).

- ``perlink``: the parallel links, each with its own input buffer downstream: a port holds
  links x V VCs, VC ``l * V + c`` being class c (the routing's VC c) of link l, each with
  ``buffer`` flits. A head asks for the first free VC of its classes on a free link that is
  empty (all its credits back), else the first free one with room for the packet (links in
  order; CNSim's ``System::vc_allocate``), and holds that link until its tail crosses.

Allocators (registered names)
=============================
- ``separable`` (the default) and ``wavefront``: round robin, see the switch rounds below.
- ``age``: VC allocation grants each output VC to the oldest requesting packet (creation
  cycle, then tag), and in every switch round each input port offers its oldest ready VC and
  each output grants the oldest offer (CNSim updates packets oldest first, and the first to
  claim a VC or link gets it).

Sources (registered names)
==========================
- ``fifo`` (the default): the source of the contract below.
- ``open``: no FIFO. The local port has as many VCs as a chip has output links (the most of
  any chip: every link can start a packet from the source in one cycle) and the source
  writes a packet only into an *empty* local VC, so each queued packet routes and allocates
  on its own and never waits behind another (CNSim's sources keep every packet in the
  simulated set and route each one every cycle; ours keeps at most that many at a time,
  the rest waiting in creation order). The injection width still limits the flits written
  per cycle.

Router
======
P ports (port 0 local, see :mod:`.network`), V virtual channels per input port, B flits of
buffer per VC. A packet is ``length`` flits; flit 0 is the head, the last the tail.

- **Virtual cut-through**: a head is allocated an output VC only when that VC is free (no
  other packet holds it) and its credit count (free downstream slots) is at least the
  packet's length, so a packet never blocks across two routers. The output VC stays held
  until the tail leaves.
- **Credits**: one per buffer slot. Sending a flit takes a credit of the output VC; the
  flit's slot, freed when it leaves the downstream buffer, returns as a credit after the
  link's delay. Invariants: 0 <= credits <= B.
- **Route computation**: ``route_port/route_vc_lo/route_vc_hi[router, row, dst]``
  (row = input VC, 0 at the local port). The head takes the lowest free VC of the range
  with room for the packet.
- **VC allocation** (heads only): each output VC grants one requesting input VC, round
  robin over requesters numbered p·V + v, starting after the last winner. A head routed to
  the local port (ejection) needs no VC and is allocated at once.
- **Switch allocation**, in rounds, as many as the router's widest port has lanes (a link
  of width k is k lanes; the local port's width is the injection width). In every round each
  port with a lane left wins at most one flit: separable, input first, each input port offers
  its first VC (round robin from after its last granted VC) that is allocated, has a flit
  ready and a credit, and whose output has a lane left; each output grants one offering input
  port (round robin from after its last granted port). A granted flit crosses at once, so the
  same VC can win again in the next round: a VC sends up to k flits a cycle on a k-wide
  path. ``allocator="wavefront"`` replaces each round's allocation by the wrapped wave-front
  arbiter (:mod:`models.common.wwfa`) over input x output ports (each request carrying the
  port's first ready VC towards that output, round robin), its priority diagonal advancing by
  one per round.
- **Source**: an unbounded FIFO queue per chip (see :mod:`.traffic`). Each cycle the source
  writes up to ``width[r, 0]`` flits into the local input port; a new packet starts on the
  next local VC (round robin) with room for all of it.

Pipeline (the contract)
=======================
Cycle t, every router, in this order: (1) credits due at t are added; (2) the source
writes; (3) VC allocation; (4) switch allocation and traversal. A flit written into a
buffer in cycle t (by a link or the source) is *ready* in cycle t + 1. A head is
VC-allocated in a cycle >= ready and switch-allocated in a later cycle; body flits are
switch-allocated once ready. A flit that traverses the switch in cycle t on a link of delay
d is written into the downstream buffer in cycle t + d (ready t + d + 1); the credit for the
slot it left returns upstream in cycle t + d' (d' the delay of the link it arrived on) and
can be used by that cycle's allocation. An output VC freed by a tail in cycle t can be
allocated in cycle t + 1. Ejection happens at switch traversal; a packet's latency is the
cycle its tail is ejected minus the cycle it was created (source queueing included).

Head flit over one hop, delay-1 links (the body follows one cycle apart)::

    cycle      t        t+1       t+2          t+3       t+4       t+5
    router A   written  VA        SA+ST  --link-->
    router B                               written   VA        SA+ST ...
    credit A<-B (slot left at t+2 returns to A's upstream at t+2+d)

So a packet of L flits over H router-to-router hops at zero load takes
``2(H + 1) + H·d + ceil(L / k) - 1`` cycles from creation to tail ejection (2 per router, d
per link, the rest to serialise the body k flits a cycle on k-wide links and injection).

The router RTL (``rtl/railx/router.py``) is held to this contract with the ``registered``
router's three rules, cycle for cycle (``cosim/test_router.py`` against
:class:`.reference.RouterModel`, ``cosim/test_mesh.py`` and ``cosim/test_railx_mesh.py``
against this simulator). Its outputs are registered: a flit granted in cycle s crosses in
s + 1 and is on the RTL's output in s + 2, the first cycle of the link's delay; its input
credit is high in s + 1.
Two things the RTL does not build: links of k > 1 lanes (every RTL port carries one flit a
cycle; the simulator's k-lane rounds model a wider on-package path), and a routing table that
changes under traffic (the RTL reads a head's route when the head arrives, the simulator when
it is allocated; equal while the table stands still).

Checks (``check=True``): credits never negative or above B, a VC's flits arrive whole
packets in order (head, body..., tail), flits conserved (injected = ejected + buffered)
every ``check_every`` cycles. Always on: the deadlock watchdog (no flit moves for
``watchdog`` cycles while flits are in the network) stops the run with the cycle and the
blocked channels.
"""

from .network import Network, NetworkError, check_deadlock_free, mesh, torus
from .registry import register_routing, register_topology
from .sim import DeadlockError, InvariantError, Result, Simulator, simulate
from .traffic import PATTERNS, Traffic, TrafficError, load_trace

__all__ = ["Network", "NetworkError", "mesh", "torus", "check_deadlock_free",
           "register_topology", "register_routing", "Simulator", "simulate", "Result",
           "DeadlockError", "InvariantError", "Traffic", "TrafficError", "PATTERNS",
           "load_trace"]
