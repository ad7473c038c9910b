"""Permutation stacks: the circuit-switch schedule of one training iteration (Chronos, §3, §5).

N accelerators are arranged as an n-D array, one axis per kind of parallelism
(:class:`ParallelSpec`; the first axis in ``order`` varies fastest in the rank number, as in
Megatron-LM's ``tp-cp-pp-dp`` order). Collectives run on logical rings along one axis; every
group along that axis runs the same call at the same time, so one ring step of one call is one
*global* permutation: ``perm[src] = dst`` (``-1`` = idle) carrying ``chunk`` bytes per transfer.

Ring algorithms, for a group of ``g`` ranks and a tensor of ``B`` bytes per rank
(``chunk = ceil(B / g)``): reduce-scatter and all-gather take ``g - 1`` steps, all-reduce
``2 (g - 1)`` (reduce-scatter then all-gather), each step every rank sends one chunk to its ring
successor; all-to-all takes ``g - 1`` steps, step ``k`` sends rank ``r``'s chunk for the rank
``k`` places ahead. Broadcast is a chain from the group's first rank, ``g - 1`` steps of the whole
tensor. Pipeline send/recv moves ``B`` bytes from every stage to the next (forward) or previous
(backward) stage in one step.

:func:`stack_from_genstack` builds the same stack from Genstack-style logs (Appendix A);
:func:`switch_local` splits a global permutation into the per-switch permutations of a two-tier
leaf/spine circuit fabric; :func:`check_stack` verifies a stack against its collectives.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = ["ParallelSpec", "Collective", "Slot", "PermutationStack", "COLLECTIVE_OPS",
           "DTYPE_BYTES", "generate_stack", "training_iteration", "check_stack",
           "stack_from_genstack", "LocalPermutations", "switch_local", "compose_local",
           "stack_switch_local"]

COLLECTIVE_OPS = ("all_reduce", "reduce_scatter", "all_gather", "all_to_all", "broadcast",
                  "send_recv")

DTYPE_BYTES = {"float64": 8, "double": 8, "float32": 4, "float": 4, "float16": 2, "half": 2,
               "bfloat16": 2, "int64": 8, "long": 8, "int32": 4, "int": 4, "int16": 2,
               "short": 2, "int8": 1, "uint8": 1, "bool": 1, "float8_e4m3fn": 1,
               "float8_e5m2": 1}


def _pos_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"'{name}' must be an int >= 1, not {value!r}")
    return int(value)


@dataclass(frozen=True)
class ParallelSpec:
    """Degrees of parallelism over ``n`` accelerators.

    ``degrees`` maps an axis name (e.g. ``"tp"``, ``"cp"``, ``"pp"``, ``"dp"``) to its degree,
    in array order: the first axis varies fastest in the rank number. The degrees must multiply
    to ``n``.
    """

    n: int
    degrees: tuple[tuple[str, int], ...]

    @classmethod
    def of(cls, n: int, order: Sequence[str] = ("tp", "cp", "pp", "dp"), **degrees: int
           ) -> "ParallelSpec":
        """``ParallelSpec.of(16, tp=4, dp=4)``; axes not given have degree 1."""
        order = tuple(order)
        unknown = set(degrees) - set(order)
        if unknown:
            raise ValueError(f"parallelism {sorted(unknown)} not in order {order}")
        return cls(n, tuple((name, degrees.get(name, 1)) for name in order))

    def __post_init__(self) -> None:
        _pos_int("n", self.n)
        names = [name for name, _ in self.degrees]
        if len(set(names)) != len(names) or not names:
            raise ValueError(f"parallelism axes must be distinct and non-empty, not {names}")
        for name, degree in self.degrees:
            if not isinstance(name, str) or not name:
                raise ValueError(f"parallelism axis names must be strings, not {name!r}")
            _pos_int(f"degree of {name}", degree)
        product = math.prod(d for _, d in self.degrees)
        if product != self.n:
            desc = " x ".join(f"{name}={d}" for name, d in self.degrees)
            raise ValueError(f"parallelism degrees {desc} = {product} do not match "
                             f"N = {self.n} accelerators")

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(d for _, d in self.degrees)

    def degree(self, axis: str) -> int:
        for name, d in self.degrees:
            if name == axis:
                return d
        raise ValueError(f"unknown parallelism axis {axis!r}; this spec has "
                         f"{', '.join(name for name, _ in self.degrees)}")

    def axis_index(self, axis: str) -> int:
        self.degree(axis)
        return [name for name, _ in self.degrees].index(axis)

    def coords(self) -> np.ndarray:
        """(N, axes) coordinates of every rank (first axis fastest)."""
        return np.stack(np.unravel_index(np.arange(self.n), self.shape[::-1])[::-1], axis=1)

    def groups(self, axis: str) -> np.ndarray:
        """(N / g, g) ranks of each group along ``axis``, in ring order."""
        k = self.axis_index(axis)
        grid = np.arange(self.n).reshape(self.shape[::-1])
        moved = np.moveaxis(grid, len(self.shape) - 1 - k, -1)
        return moved.reshape(-1, self.degree(axis))

    def shift(self, axis: str, k: int, wrap: bool = True) -> np.ndarray:
        """Permutation sending each rank to the rank ``k`` places further along ``axis``
        (cyclic when ``wrap``; otherwise ranks that would leave the axis are idle, -1)."""
        g = self.degree(axis)
        perm = np.full(self.n, -1, dtype=np.int64)
        for group in self.groups(axis):
            for idx, rank in enumerate(group):
                to = idx + k
                if wrap:
                    perm[rank] = group[to % g]
                elif 0 <= to < g:
                    perm[rank] = group[to]
        return perm


@dataclass(frozen=True)
class Collective:
    """One collective call along ``axis`` on a tensor of ``bytes`` per rank. ``direction`` is
    +1 (forward, to the next stage) or -1 (backward) for ``send_recv``."""

    op: str
    axis: str
    bytes: int
    direction: int = 1
    label: str = ""

    def __post_init__(self) -> None:
        if self.op not in COLLECTIVE_OPS:
            raise ValueError(f"unknown collective {self.op!r}; allowed: "
                             f"{', '.join(COLLECTIVE_OPS)}")
        _pos_int("bytes", self.bytes)
        if self.direction not in (1, -1):
            raise ValueError(f"'direction' must be +1 or -1, not {self.direction!r}")

    def steps(self, g: int) -> int:
        if g == 1:
            return 0
        return {"all_reduce": 2 * (g - 1), "send_recv": 1}.get(self.op, g - 1)

    def chunk(self, g: int) -> int:
        return self.bytes if self.op in ("broadcast", "send_recv") else -(-self.bytes // g)


@dataclass(frozen=True, eq=False)
class Slot:
    """One time slot: ``perm[src] = dst`` (-1 idle), each transfer ``bytes`` long."""

    perm: np.ndarray
    bytes: int
    call: int
    op: str
    step: int
    label: str = ""


@dataclass(eq=False)
class PermutationStack:
    """The slots of one iteration in order, over ``n`` endpoints."""

    n: int
    slots: list[Slot] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.slots)

    def __iter__(self):
        return iter(self.slots)

    @property
    def perms(self) -> np.ndarray:
        """(slots, N) array of the permutations."""
        if not self.slots:
            return np.empty((0, self.n), dtype=np.int64)
        return np.stack([s.perm for s in self.slots])

    @property
    def bytes(self) -> np.ndarray:
        return np.array([s.bytes for s in self.slots], dtype=np.int64)

    def total_bytes(self) -> int:
        """Bytes moved over the fabric: transfers x bytes, summed over slots."""
        return int(sum(int((s.perm >= 0).sum()) * s.bytes for s in self.slots))

    def unique(self) -> tuple[np.ndarray, np.ndarray]:
        """Distinct permutations (K, N) and, per slot, the index of its permutation."""
        perms = self.perms
        if len(perms) == 0:
            return perms, np.empty(0, dtype=np.int64)
        uniq, index = np.unique(perms, axis=0, return_inverse=True)
        return uniq, index.ravel()


def _ring_perm(spec: ParallelSpec, c: Collective, step: int) -> np.ndarray:
    g = spec.degree(c.axis)
    if c.op == "send_recv":
        return spec.shift(c.axis, c.direction, wrap=False)
    if c.op == "all_to_all":
        return spec.shift(c.axis, step + 1)
    if c.op == "broadcast":
        perm = np.full(spec.n, -1, dtype=np.int64)
        groups = spec.groups(c.axis)
        perm[groups[:, step]] = groups[:, step + 1]
        return perm
    return spec.shift(c.axis, 1) if g > 1 else np.full(spec.n, -1, dtype=np.int64)


def generate_stack(spec: ParallelSpec, collectives: Iterable[Collective]) -> PermutationStack:
    """The stack of global permutations for ``collectives`` run in order on ``spec``."""
    if not isinstance(spec, ParallelSpec):
        raise TypeError(f"'spec' must be a ParallelSpec, not {type(spec).__name__}")
    stack = PermutationStack(spec.n)
    cache: dict[tuple, np.ndarray] = {}
    for call, c in enumerate(collectives):
        if not isinstance(c, Collective):
            raise TypeError(f"collective {call} must be a Collective, not {type(c).__name__}")
        g = spec.degree(c.axis)
        for step in range(c.steps(g)):
            key = (c.op, c.axis, c.direction, step if c.op in ("all_to_all", "broadcast") else 0)
            if key not in cache:
                cache[key] = _ring_perm(spec, c, step)
                cache[key].setflags(write=False)
            stack.slots.append(Slot(cache[key], c.chunk(g), call, c.op, step, c.label))
    return stack


def training_iteration(spec: ParallelSpec, *, layers: int, params_per_layer: int,
                       hidden: int, seq_len: int, micro_batch: int = 1,
                       microbatches: int = 1, act_bytes: int = 2,
                       grad_bytes: int = 4) -> list[Collective]:
    """The collectives of one Megatron-style iteration (axes named tp, cp, pp, dp; any may be
    absent or 1): per microbatch and layer of a stage, two tensor-parallel all-reduces of the
    activations forward and two backward, a context-parallel all-gather of K and V forward and
    a reduce-scatter of their gradients backward; pipeline sends of the activations between
    stages forward and of their gradients backward; then, per layer, a data-parallel
    reduce-scatter of the fp32 gradients and an all-gather of the updated parameters
    (distributed optimizer)."""
    names = {name for name, _ in spec.degrees}
    deg = {a: (spec.degree(a) if a in names else 1) for a in ("tp", "cp", "pp", "dp")}
    for name, v in (("layers", layers), ("params_per_layer", params_per_layer),
                    ("hidden", hidden), ("seq_len", seq_len), ("micro_batch", micro_batch),
                    ("microbatches", microbatches), ("act_bytes", act_bytes),
                    ("grad_bytes", grad_bytes)):
        _pos_int(name, v)
    if layers % deg["pp"]:
        raise ValueError(f"'layers' ({layers}) must be a multiple of pp ({deg['pp']})")
    if seq_len % deg["cp"]:
        raise ValueError(f"'seq_len' ({seq_len}) must be a multiple of cp ({deg['cp']})")
    stage_layers = layers // deg["pp"]
    act = micro_batch * (seq_len // deg["cp"]) * hidden * act_bytes
    kv = 2 * act // deg["tp"]
    out: list[Collective] = []
    for direction, name in ((1, "fwd"), (-1, "bwd")):
        for mb in range(microbatches):
            for layer in range(stage_layers):
                if deg["cp"] > 1:
                    op = "all_gather" if direction == 1 else "reduce_scatter"
                    out.append(Collective(op, "cp", kv * deg["cp"],
                                          label=f"{name} mb{mb} layer{layer} cp kv"))
                if deg["tp"] > 1:
                    for k in range(2):
                        out.append(Collective("all_reduce", "tp", act,
                                              label=f"{name} mb{mb} layer{layer} tp{k}"))
            if deg["pp"] > 1:
                out.append(Collective("send_recv", "pp", act, direction,
                                      label=f"{name} mb{mb} pp"))
    if deg["dp"] > 1:
        shard = -(-params_per_layer // deg["tp"])
        for layer in range(stage_layers):
            out.append(Collective("reduce_scatter", "dp", shard * grad_bytes,
                                  label=f"layer{layer} dp grads"))
            out.append(Collective("all_gather", "dp", shard * act_bytes,
                                  label=f"layer{layer} dp params"))
    return out


def _check_perm(perm: np.ndarray, n: int, where: str) -> None:
    perm = np.asarray(perm)
    if perm.shape != (n,) or not np.issubdtype(perm.dtype, np.integer):
        raise ValueError(f"{where}: a permutation must be {n} integers, not {perm.shape} "
                         f"{perm.dtype}")
    active = perm[perm >= 0]
    if (perm < -1).any() or (active >= n).any():
        raise ValueError(f"{where}: destinations must be -1 or in 0..{n - 1}")
    if len(np.unique(active)) != len(active):
        raise ValueError(f"{where}: two sources send to the same destination")
    if (perm == np.arange(n)).any():
        raise ValueError(f"{where}: a source sends to itself")


def check_stack(stack: PermutationStack, spec: ParallelSpec,
                collectives: Sequence[Collective]) -> None:
    """Raise ValueError unless ``stack`` is exactly ``collectives`` on ``spec``: every slot a
    partial permutation; every ring step of every call present exactly once, in order, and
    delivering, for every group along the call's axis, each rank's chunk to the rank its
    algorithm names (recomputed here from rank coordinates); chunk sizes right."""
    coords = spec.coords()
    strides = np.cumprod((1,) + spec.shape[:-1])
    expected: list[tuple[int, int]] = []
    for call, c in enumerate(collectives):
        g = spec.degree(c.axis)
        expected += [(call, step) for step in range(c.steps(g))]
    got = [(s.call, s.step) for s in stack.slots]
    if got != expected:
        missing = sorted(set(expected) - set(got))
        extra = [x for x in got if got.count(x) > 1 or x not in expected]
        raise ValueError(f"stack slots do not match the collectives: "
                         f"missing {missing[:3]}, duplicated or unknown {extra[:3]}"
                         if missing or extra else "stack slots are out of order")
    for k, slot in enumerate(stack.slots):
        _check_perm(slot.perm, spec.n, f"slot {k}")
        c = collectives[slot.call]
        a = spec.axis_index(c.axis)
        g = spec.degree(c.axis)
        pos = coords[:, a]
        if c.op == "send_recv":
            to = pos + c.direction
            valid = (to >= 0) & (to < g)
        elif c.op == "broadcast":
            to = pos + 1
            valid = pos == slot.step
        else:
            shift = slot.step + 1 if c.op == "all_to_all" else 1
            to = (pos + shift) % g
            valid = np.ones(spec.n, dtype=bool)
        want = np.where(valid, np.arange(spec.n) + (to - pos) * strides[a], -1)
        if not np.array_equal(slot.perm, want):
            bad = int(np.flatnonzero(slot.perm != want)[0])
            raise ValueError(f"slot {k} (call {slot.call} {c.op} on {c.axis}, step "
                             f"{slot.step}): rank {bad} sends to {slot.perm[bad]}, expected "
                             f"{want[bad]}")
        if slot.bytes != c.chunk(g):
            raise ValueError(f"slot {k}: carries {slot.bytes} bytes, the {c.op} chunk is "
                             f"{c.chunk(g)}")


# --- Genstack logs ---------------------------------------------------------------------------

_LOG_OPS = {"all_reduce", "reduce_scatter", "all_gather", "all_to_all", "broadcast", "send",
            "recv", "barrier"}


def _load_log(log: object) -> list:
    source = "log"
    if isinstance(log, Path) or (isinstance(log, str) and log.lstrip()[:1] not in ("[", "{")):
        source = str(log)
        try:
            log = Path(log).read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise ValueError(f"{source}: not a Genstack log (not UTF-8 text: a binary "
                             f"file?)") from None
        except OSError as e:
            raise ValueError(f"cannot read Genstack log {source}: {e.strerror}") from None
    if isinstance(log, (str, bytes)):
        try:
            log = json.loads(log)
        except json.JSONDecodeError as e:
            raise ValueError(f"{source}:{e.lineno}: not valid JSON ({e.msg}, column "
                             f"{e.colno})") from None
    if not isinstance(log, list):
        raise ValueError(f"{source}: a Genstack log is a JSON list of events (or a list of "
                         f"per-rank lists), not {type(log).__name__}")
    if log and all(isinstance(x, list) for x in log):
        log = [e for per_rank in log for e in per_rank]
    return log


def _event(e: object, k: int) -> tuple[str, int, tuple[int, ...], int]:
    if not isinstance(e, dict):
        raise ValueError(f"event {k}: must be an object, not {type(e).__name__}")
    for key in ("op", "call_id", "ranks"):
        if key not in e:
            raise ValueError(f"event {k}: missing key '{key}'")
    op, call, ranks = e["op"], e["call_id"], e["ranks"]
    if op not in _LOG_OPS:
        raise ValueError(f"event {k} (call {call}): unknown op {op!r}; allowed: "
                         f"{', '.join(sorted(_LOG_OPS))}")
    if isinstance(call, bool) or not isinstance(call, int):
        raise ValueError(f"event {k}: 'call_id' must be an integer, not {call!r}")
    if not isinstance(ranks, list) or not ranks or any(
            isinstance(r, bool) or not isinstance(r, int) or r < 0 for r in ranks) \
            or len(set(ranks)) != len(ranks):
        raise ValueError(f"event {k} (call {call}): 'ranks' must be a list of distinct "
                         f"non-negative integers, not {ranks!r}")
    if op == "barrier":
        return op, call, tuple(ranks), 0
    shape, dtype = e.get("shape"), e.get("dtype")
    if not isinstance(shape, list) or any(isinstance(s, bool) or not isinstance(s, int)
                                          or s < 0 for s in shape):
        raise ValueError(f"event {k} (call {call}): 'shape' must be a list of non-negative "
                         f"integers, not {shape!r}")
    name = str(dtype).removeprefix("torch.")
    if name not in DTYPE_BYTES:
        raise ValueError(f"event {k} (call {call}): unknown dtype {dtype!r}; allowed: "
                         f"{', '.join(sorted(DTYPE_BYTES))}")
    if op in ("send", "recv") and len(ranks) != 2:
        raise ValueError(f"event {k} (call {call}): {op} needs ranks [src, dst], "
                         f"not {ranks!r}")
    return op, call, tuple(ranks), math.prod(shape) * DTYPE_BYTES[name]


def stack_from_genstack(log: object, n: int | None = None) -> PermutationStack:
    """Build the stack from a Genstack log: a JSON list (text, path, or parsed) of events
    ``{"op", "call_id", "ranks", "shape", "dtype", ...}``, or a list of per-rank lists.

    Each rank logs its own events; events of one ``call_id`` are the same call seen by every
    rank and by every group running it in parallel: identical ``ranks`` are merged, distinct
    ones are parallel groups (they must be disjoint and share op, group size and size).
    ``ranks`` is the ring order. ``shape`` is the tensor each rank holds; ``send``/``recv``
    events give ``ranks = [src, dst]``; ``barrier`` moves no data. Calls run in ``call_id``
    order. ``n`` defaults to the largest rank + 1."""
    events = [_event(e, k) for k, e in enumerate(_load_log(log))]
    top = max((max(r) for _, _, r, _ in events), default=-1) + 1
    if n is None:
        n = max(top, 1)
    n = _pos_int("n", n)
    if top > n:
        raise ValueError(f"log names rank {top - 1} but n = {n}")
    calls: dict[int, list] = {}
    for ev in events:
        calls.setdefault(ev[1], []).append(ev)
    stack = PermutationStack(n)
    for call in sorted(calls):
        evs = calls[call]
        ops = {"send_recv" if op in ("send", "recv") else op for op, *_ in evs}
        if len(ops) != 1:
            raise ValueError(f"call {call}: events disagree on the op ({sorted(ops)})")
        op = ops.pop()
        if op == "barrier":
            continue
        groups = sorted({r for _, _, r, _ in evs})
        sizes = {b for *_, b in evs}
        if len(sizes) != 1:
            raise ValueError(f"call {call}: events disagree on the tensor size "
                             f"({sorted(sizes)} bytes)")
        size = sizes.pop()
        if size == 0:
            continue
        seen: set[int] = set()
        for g in groups:
            if op == "send_recv":
                continue
            if seen & set(g):
                raise ValueError(f"call {call}: rank groups overlap ({groups})")
            seen |= set(g)
        if op == "send_recv":
            perm = np.full(n, -1, dtype=np.int64)
            for src, dst in groups:
                if perm[src] >= 0:
                    raise ValueError(f"call {call}: rank {src} sends twice")
                perm[src] = dst
            _check_perm(perm, n, f"call {call}")
            stack.slots.append(Slot(perm, size, call, op, 0))
            continue
        widths = {len(g) for g in groups}
        if len(widths) != 1:
            raise ValueError(f"call {call}: parallel groups differ in size ({sorted(widths)})")
        g = widths.pop()
        if g == 1:
            continue
        c = Collective(op, "ring", size)
        for step in range(c.steps(g)):
            perm = np.full(n, -1, dtype=np.int64)
            for ranks in groups:
                r = np.asarray(ranks)
                if op == "broadcast":
                    perm[r[step]] = r[step + 1]
                else:
                    shift = step + 1 if op == "all_to_all" else 1
                    perm[r] = np.roll(r, -shift)
            stack.slots.append(Slot(perm, c.chunk(g), call, op, step))
    return stack


# --- two-tier leaf/spine circuit fabric -----------------------------------------------------

@dataclass(frozen=True, eq=False)
class LocalPermutations:
    """Per-switch permutations for one slot of a leaf/spine circuit fabric.

    Leaf ``l`` has ports ``0..L-1`` down to accelerators ``l*L .. l*L+L-1`` and ports
    ``L..2L-1`` up to spines ``0..L-1``: ``leaf[l, p] = q`` connects its port p to port q (-1 idle).
    Spine ``s`` has one port per leaf: ``spine[s, a] = b`` connects leaf a to leaf b."""

    leaf: np.ndarray
    spine: np.ndarray

    @property
    def local_transfers(self) -> int:
        lsize = self.leaf.shape[1] // 2
        down = self.leaf[:, :lsize]
        return int(((down >= 0) & (down < lsize)).sum())


def switch_local(perm: object, leaf_size: int) -> LocalPermutations:
    """Split a global permutation over the accelerators into leaf and spine permutations:
    transfers within a leaf stay on it; the rest go up to a spine and down again. Spines are
    assigned by bipartite edge colouring (leaf-to-leaf demand has degree <= leaf size), so the
    non-blocking fabric carries every permutation in one slot."""
    lsize = _pos_int("leaf_size", leaf_size)
    p = np.asarray(perm)
    n = p.shape[0] if p.ndim == 1 else -1
    if n < 1 or n % lsize:
        raise ValueError(f"N = {n} accelerators must be a positive multiple of leaf_size "
                         f"{lsize}")
    _check_perm(p, n, "permutation")
    leaves = n // lsize
    leaf = np.full((leaves, 2 * lsize), -1, dtype=np.int64)
    spine = np.full((lsize, leaves), -1, dtype=np.int64)
    # Colour classes: up_col[a, c] / down_col[b, c] hold the transfer using spine c there.
    up = np.full((leaves, lsize), -1, dtype=np.int64)
    down = np.full((leaves, lsize), -1, dtype=np.int64)
    ends: dict[int, tuple[int, int]] = {}
    for src in np.flatnonzero(p >= 0):
        dst = int(p[src])
        a, b = int(src) // lsize, dst // lsize
        if a == b:
            leaf[a, src % lsize] = dst % lsize
            continue
        ends[int(src)] = (a, b)
        alpha = int(np.flatnonzero(up[a] < 0)[0])
        beta = int(np.flatnonzero(down[b] < 0)[0])
        if down[b, alpha] >= 0:
            # Swap colours alpha/beta along the alternating path from b (Konig's theorem).
            path, side, node, colour = [], "down", b, alpha
            while True:
                e = (down if side == "down" else up)[node, colour]
                if e < 0:
                    break
                path.append((int(e), colour))
                ea, eb = ends[int(e)]
                node, side = (ea, "up") if side == "down" else (eb, "down")
                colour = beta if colour == alpha else alpha
            for e, c in path:
                ea, eb = ends[e]
                up[ea, c] = down[eb, c] = -1
            for e, c in path:
                ea, eb = ends[e]
                other = beta if c == alpha else alpha
                up[ea, other] = down[eb, other] = e
        up[a, alpha] = down[b, alpha] = src
    for c in range(lsize):
        for a in range(leaves):
            src = up[a, c]
            if src < 0:
                continue
            dst = int(p[src])
            b = dst // lsize
            leaf[a, src % lsize] = lsize + c
            spine[c, a] = b
            leaf[b, lsize + c] = dst % lsize
    return LocalPermutations(leaf, spine)


def compose_local(local: LocalPermutations) -> np.ndarray:
    """Follow every circuit from each accelerator through leaf, spine and leaf: the global
    permutation the switch-local permutations implement (the inverse of
    :func:`switch_local`)."""
    leaves, ports = local.leaf.shape
    lsize = ports // 2
    perm = np.full(leaves * lsize, -1, dtype=np.int64)
    for a in range(leaves):
        for q in range(lsize):
            out = local.leaf[a, q]
            if out < 0:
                continue
            if out < lsize:
                perm[a * lsize + q] = a * lsize + out
                continue
            s = out - lsize
            b = local.spine[s, a]
            if b < 0 or local.leaf[b, lsize + s] < 0:
                continue
            perm[a * lsize + q] = b * lsize + local.leaf[b, lsize + s]
    return perm


def stack_switch_local(stack: PermutationStack, leaf_size: int) -> list[LocalPermutations]:
    """Per-switch permutations of every slot of ``stack`` (see :func:`switch_local`)."""
    if not isinstance(stack, PermutationStack):
        raise TypeError(f"'stack' must be a PermutationStack, not {type(stack).__name__}")
    return [switch_local(slot.perm, leaf_size) for slot in stack.slots]
