"""The slot test fabric (``rtl/chronos/slot_fabric.py``) as behaviour: one
:class:`~.slot_switch.SlotSwitch`, N :class:`~.slot_endpoint.SlotEndpoint` and fibres that
delay everything by d cycles each way (a value sent at t is seen at t + d; as in the RTL's
delay lines, a delay of 0 behaves as 1 and one above 64 as 64).

:meth:`SlotFabric.cycle` takes one cycle's inputs and returns that cycle's outputs, then
advances the clock.
"""

from __future__ import annotations

from collections import deque

from .slot_endpoint import SlotEndpoint
from .slot_switch import TAG_MOD, SlotSwitch, Word

__all__ = ["SlotFabric", "Fibre", "TAG_MOD", "Word"]


class Fibre:
    """A link of run-time delay: :meth:`push` this cycle's value, :meth:`seen` the one sent
    ``delay`` cycles ago (``idle`` before anything was sent)."""

    MAX = 64

    def __init__(self, idle) -> None:
        self.history = deque([idle] * self.MAX, maxlen=self.MAX)

    def seen(self, delay: int):
        return self.history[-min(max(1, delay), self.MAX)]

    def push(self, value) -> None:
        self.history.append(value)


class SlotFabric:
    def __init__(self, n: int, depth: int, rtt_bits: int = 16) -> None:
        self.n = n
        self.switch = SlotSwitch(n, depth)
        self.endpoints = [SlotEndpoint(rtt_bits) for _ in range(n)]
        self.down = [Fibre((False, 0, False)) for _ in range(n)]   # sync, slot tag, echo
        self.up = [Fibre((False, None)) for _ in range(n)]         # ping, word

    def cycle(self, *, period, guard, enable, start, delay, sync_drop, send, clear=False,
              beat=None, echo_drop=None) -> dict:
        """One clock cycle. ``start``, ``delay``, ``sync_drop``, ``send`` ((valid, data)),
        ``echo_drop`` (echoes cut on the fibre; default none): per endpoint; ``beat``: the
        schedule beat (perm, hold, last) taken this cycle."""
        n, sw = self.n, self.switch
        so = sw.outputs(period, guard, enable)
        down = [f.seen(d) for f, d in zip(self.down, delay)]
        up = [f.seen(d) for f, d in zip(self.up, delay)]
        eps = [dict(period=period, guard=guard, start=start[i], sync=down[i][0],
                    sync_slot=down[i][1]) for i in range(n)]
        eo = [ep.outputs(**kw) for ep, kw in zip(self.endpoints, eps)]
        out = dict(so)
        for key in ("window", "window_tag", "locked", "missed", "rtt", "rtt_error"):
            out[key] = [e[key] for e in eo]
        out["launch"] = [e["tx"] for e in eo]
        for i in range(n):
            self.down[i].push((so["sync"] and not sync_drop[i], so["sync_slot"],
                               so["echo"][i] and not (echo_drop and echo_drop[i])))
            self.up[i].push((eo[i]["ping"], eo[i]["tx"]))
        sw.edge(period=period, guard=guard, enable=enable, ping=[u[0] for u in up],
                rx=[u[1] for u in up], clear=clear, beat=beat)
        for i, ep in enumerate(self.endpoints):
            ep.edge(**eps[i], echo=down[i][2], send=send[i], clear=clear)
        return out

    def load(self, entries) -> None:
        """Load a whole stack at once (outside a co-simulation, where beats come one per
        cycle through :meth:`cycle`)."""
        self.switch.loader.load(entries)
