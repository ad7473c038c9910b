"""Wavelength allocation (Flex-SiPAC §3.C, eq 1): exact, the paper's heuristic, per-WSS
wavelength assignment by vertex colouring, and minimal-change reconfiguration.

Eq 1 as printed: min sum_ij (lambda_ij - t_ij)^2 subject to sum_j lambda_ij <= w (ingress),
sum_i lambda_ij <= w (egress), lambda_ii = 0, lambda_ij integer; the sums run 1..N where the
indices run 0..N-1, and no lambda >= 0 is stated. We solve it with the sums over 0..N-1 and
lambda_ij >= 0 (a negative wavelength count means nothing), and only on *direct* pairs
(CUs one WSS apart; other pairs get 0: a wavelength cannot reach them). The traffic is
scaled into wavelength units first (:func:`scale`): T x w / (its largest row or column sum),
CU's sending traffic fills its w wavelengths.

- :func:`exact`: the integer least squares as a MILP solved by HiGHS (scipy.optimize.milp):
  one binary per pair and value k = 0..w, objective sum (k - t)^2 -- exact, for small N.
- :func:`heuristic`: the paper's two steps. The continuous relaxation (its optimum is the
  scaled T itself, which is feasible), rounded to the nearest integers; rounding overshoot is
  repaired (the paper does not say how: we take back wavelengths, smallest rounding gain
  first, from any row or column over w); then CUs short of w wavelengths get more, one at a
  time, round-robin over pairs by decreasing weight t_ij - lambda_ij, as long as ingress and
  egress allow.
- :func:`assign_wavelengths`: every unit of lambda_ij is a signal on the WSS of the pair's
  level; signals conflict when they share a transmitter (one comb line goes to one port),
  a receiver (an output bus must not carry a wavelength twice: coherent crosstalk), and
  colours are wavelengths 0..w-1 (DSatur, networkx). The conflict graph is the line graph
  of a bipartite multigraph (transmitters x receivers), so w colours always suffice
  (Koenig); when DSatur needs more, Koenig's alternating-path colouring (:func:`_place`)
  colours it with w (peeling w perfect matchings off the graph padded to w-regular,
  :func:`_koenig`, gives the same guarantee and is kept for the tests). Returns each WSS's configuration
  ``{(input port, wavelength): output port}`` -- the WSS controller's input format.
  This colouring is eq 1's by counts: it ignores which wavelengths each CU's de-interleaver
  cascade can send to each port (with it, no cascade setting serves any CU of SiPAC(4, 3)
  at w = 60).
- :func:`allocate`: the allocation the hardware emits. Per job the cascade setting whose
  split is closest to the job's per-level demands (leaving every level it uses a
  wavelength), the heuristic with per-(CU, level) budgets (the port sets' sizes, for
  sending and receiving), and each level-l signal of CU x coloured from the wavelengths x's
  cascade sends to port l (a job's CUs share a setting, so each level of a job is a
  bipartite edge colouring from its own colour set: Koenig, never short). :func:`realise`
  does the same for a given allocation (dropping what does not fit); :func:`check_joint`
  checks a plan against eq 1, the colouring, every CU's cascade traced wavelength by
  wavelength, and every WSS through its controller's checks.
- :func:`reconfigure`: the next allocation's assignment keeping every signal that survives
  on its wavelength, filling new signals with wavelengths free at both ends (swapping an
  alternating path of two wavelengths when none is); counts the wavelengths retuned. With
  ``sets`` (the next plan's port sets) it stays inside what the cascades emit.
"""

from __future__ import annotations

import math

import numpy as np

from .topology import SiPAC
from .traffic import check_traffic

__all__ = ["scale", "direct_mask", "objective", "exact", "heuristic", "check_allocation",
           "assign_wavelengths", "check_assignment", "reconfigure", "allocate", "realise",
           "check_joint"]


def direct_mask(topo: SiPAC) -> np.ndarray:
    m = np.zeros((topo.N, topo.N), dtype=bool)
    for x in range(topo.N):
        for l in range(topo.L):
            m[x, topo.neighbours(x, l)] = True
    return m


def scale(T, w: int) -> np.ndarray:
    """Traffic in wavelength units: each CU's row scaled to its w wavelengths (the
    allocation is proportional to the traffic each CU sends)."""
    T = check_traffic(T)
    _w(w)
    rows = T.sum(axis=1, keepdims=True)
    return np.divide(T * w, rows, out=np.zeros_like(T), where=rows > 0)


def _w(w) -> int:
    if isinstance(w, bool) or not isinstance(w, (int, np.integer)) or w < 1:
        raise ValueError(f"w (wavelengths per transceiver) must be an int >= 1, not {w!r}")
    return int(w)


def objective(lam: np.ndarray, t: np.ndarray) -> float:
    return float(((lam - t) ** 2).sum())


def check_allocation(topo: SiPAC, lam: np.ndarray, w: int) -> None:
    """ValueError naming the first violated constraint of eq 1 (plus direct pairs only)."""
    lam = np.asarray(lam)
    if lam.shape != (topo.N, topo.N):
        raise ValueError(f"allocation must be {topo.N} x {topo.N}, not {lam.shape}")
    if (lam < 0).any() or np.any(lam != np.round(lam)):
        raise ValueError("allocation entries must be integers >= 0")
    if np.any(np.diag(lam)):
        raise ValueError("allocation diagonal must be 0")
    off = lam * ~direct_mask(topo)
    if off.any():
        i, j = np.argwhere(off)[0]
        raise ValueError(f"CUs {i} and {j} are not direct neighbours but get {lam[i, j]} "
                         f"wavelengths")
    for name, sums in (("ingress", lam.sum(axis=1)), ("egress", lam.sum(axis=0))):
        if (sums > w).any():
            i = int(np.argmax(sums > w))
            raise ValueError(f"{name} constraint: CU {i} has {int(sums[i])} wavelengths, more "
                             f"than w = {w}")


def exact(topo: SiPAC, T, w: int, *, time_limit: float = 60.0) -> np.ndarray:
    """Eq 1 solved exactly (see the module docstring)."""
    from scipy.optimize import Bounds, LinearConstraint, milp
    w = _w(w)
    t = scale(T, w)
    pairs = np.argwhere(direct_mask(topo))
    P, K = len(pairs), w + 1
    k = np.arange(K)
    c = np.concatenate([(k - t[i, j]) ** 2 for i, j in pairs])
    rows, lo, hi = [], [], []
    one = np.zeros((P, P * K))
    for p in range(P):
        one[p, p * K:(p + 1) * K] = 1
    rows.append(one)
    lo += [1] * P
    hi += [1] * P
    for axis in (0, 1):
        A = np.zeros((topo.N, P * K))
        for p, (i, j) in enumerate(pairs):
            A[(i, j)[axis], p * K:(p + 1) * K] = k
        rows.append(A)
        lo += [0] * topo.N
        hi += [w] * topo.N
    res = milp(c, constraints=LinearConstraint(np.vstack(rows), lo, hi),
               integrality=np.ones(P * K), bounds=Bounds(0, 1),
               options={"time_limit": time_limit})
    if res.x is None:
        raise ValueError(f"eq 1 has no solution within {time_limit} s ({res.message})")
    z = np.round(res.x).reshape(P, K)
    lam = np.zeros((topo.N, topo.N))
    for p, (i, j) in enumerate(pairs):
        lam[i, j] = k[np.argmax(z[p])]
    return lam


def heuristic(topo: SiPAC, T, w: int) -> np.ndarray:
    """The paper's rounding and round-robin fill (see the module docstring)."""
    w = _w(w)
    t = scale(T, w) * direct_mask(topo)
    lam = np.rint(t)
    # repair rounding overshoot: take back the least-needed rounded-up units first
    for axis in (1, 0):
        sums = lam.sum(axis=axis)
        for i in np.flatnonzero(sums > w):
            line = (lambda a: a[i, :]) if axis == 1 else (lambda a: a[:, i])
            while line(lam).sum() > w:
                gain = np.where(line(lam) > 0, line(lam) - line(t), -np.inf)
                j = int(np.argmax(gain))
                if axis == 1:
                    lam[i, j] -= 1
                else:
                    lam[j, i] -= 1
    # round-robin fill by decreasing weight while ingress and egress allow
    mask = direct_mask(topo) & (t > 0)
    while True:
        out_left = w - lam.sum(axis=1)
        in_left = w - lam.sum(axis=0)
        progress = False
        for i in np.flatnonzero(out_left > 0):
            weight = np.where(mask[i] & (in_left > 0), t[i] - lam[i], -np.inf)
            j = int(np.argmax(weight))
            if weight[j] == -np.inf or lam[i].sum() >= w:
                continue
            lam[i, j] += 1
            in_left[j] -= 1
            progress = True
        if not progress:
            return lam


def assign_wavelengths(topo: SiPAC, lam, w: int) -> dict:
    """Per-WSS wavelength configuration by DSatur colouring (see the module docstring).
    Returns ``{"wss": {(l, i): {(in_port, wavelength): out_port}}, "signals": {(src, dst,
    k): wavelength}}``. ValueError when the signals need more than w wavelengths."""
    import networkx as nx
    check_allocation(topo, lam, w)
    g = nx.Graph()
    by_src: dict = {}
    by_dst: dict = {}
    for i, j in np.argwhere(np.asarray(lam) > 0):
        for k in range(int(lam[i, j])):
            s = (int(i), int(j), k)
            g.add_node(s)
            by_src.setdefault(int(i), []).append(s)
            by_dst.setdefault(int(j), []).append(s)
    for group in list(by_src.values()) + list(by_dst.values()):
        g.add_edges_from((a, b) for n, a in enumerate(group) for b in group[n + 1:])
    colour = nx.greedy_color(g, strategy="DSATUR") if len(g) else {}
    method = "dsatur"
    if colour and max(colour.values()) >= w:
        colour, method = _koenig_paths(lam, w), "koenig"
    out = _config(topo, colour)
    out["method"] = method
    return out


def _koenig_paths(lam, w: int) -> dict:
    """Koenig's constructive edge colouring with w colours: each signal takes a colour free at
    both ends or swaps an alternating two-colour path (:func:`_place`); O(signals x path)."""
    colour: dict = {}
    at_tx: dict = {}
    at_rx: dict = {}
    for i, j in np.argwhere(np.asarray(lam) > 0):
        for k in range(int(lam[i, j])):
            _place((int(i), int(j), k), range(w), colour, at_tx, at_rx)
    return colour


def _koenig(lam, w: int) -> dict:
    """Edge colouring of the transmitter x receiver multigraph with w colours: pad to a
    w-regular bipartite multigraph, then take w perfect matchings (Hall: one always exists)."""
    import networkx as nx
    lam = np.asarray(lam).astype(int)
    n = lam.shape[0]
    mult = lam.copy()
    out_def = w - mult.sum(axis=1)
    in_def = w - mult.sum(axis=0)
    dummy = np.zeros_like(mult)
    i = j = 0
    while i < n and j < n:                      # pair deficits greedily (totals are equal)
        if out_def[i] == 0:
            i += 1
            continue
        if in_def[j] == 0:
            j += 1
            continue
        k = min(out_def[i], in_def[j])
        dummy[i, j] += k
        out_def[i] -= k
        in_def[j] -= k
    total = mult + dummy
    colour: dict = {}
    used = np.zeros_like(mult)
    for c in range(w):
        g = nx.Graph()
        g.add_nodes_from(("t", a) for a in range(n))
        g.add_nodes_from(("r", b) for b in range(n))
        g.add_edges_from((("t", a), ("r", b)) for a, b in np.argwhere(total > 0))
        match = nx.bipartite.hopcroft_karp_matching(g, top_nodes=[("t", a) for a in range(n)])
        for a in range(n):
            b = match[("t", a)][1]
            total[a, b] -= 1
            if used[a, b] < lam[a, b]:          # real and padding edges are interchangeable
                colour[(a, b, int(used[a, b]))] = c
                used[a, b] += 1
    return colour


def _config(topo: SiPAC, colour: dict) -> dict:
    wss: dict = {}
    for (i, j, _k), lam_id in colour.items():
        l = topo.level(i, j)
        cfg = wss.setdefault(topo.wss(i, l), {})
        cfg[(topo.port(i, l), int(lam_id))] = topo.port(j, l)
    return {"wss": wss, "signals": {s: int(c) for s, c in colour.items()}}


def check_assignment(topo: SiPAC, lam, assignment: dict, w: int) -> None:
    """Every unit of lambda has a wavelength < w; no transmitter uses a wavelength twice; no
    output bus (receiver) carries a wavelength twice. AssertionError otherwise."""
    sig = assignment["signals"]
    lam = np.asarray(lam)
    for i, j in np.argwhere(lam > 0):
        for k in range(int(lam[i, j])):
            assert (i, j, k) in sig, f"signal {(i, j, k)} has no wavelength"
    tx, rx = set(), set()
    for (i, j, _k), c in sig.items():
        assert 0 <= c < w, f"wavelength {c} outside 0..{w - 1}"
        assert (i, c) not in tx, f"CU {i} transmits wavelength {c} twice"
        assert (j, c) not in rx, f"CU {j} receives wavelength {c} twice (coherent crosstalk)"
        tx.add((i, c))
        rx.add((j, c))


def reconfigure(topo: SiPAC, old: dict, new_lam, w: int, *,
                sets: dict | None = None) -> tuple[dict, int]:
    """Minimal-change assignment for ``new_lam`` from the ``old`` assignment: surviving
    signals keep their wavelengths; a new signal takes a wavelength free at both its
    transmitter and receiver (lowest first), and when none is, the alternating path of two
    wavelengths (a free at the transmitter, b at the receiver) is swapped to free one
    (bipartite edge colouring: it always succeeds within w). ``sets``: per CU per level the
    wavelengths its cascade sends there (:func:`allocate`'s ``sets``, one setting per job):
    a signal keeps its wavelength only if it is still in its sender's set, and new ones are
    coloured from it (the swap stays inside one job's level, whose colours no other level
    of the job uses). Returns (assignment, number of signals whose wavelength is new or
    changed)."""
    check_allocation(topo, new_lam, w)
    new_lam = np.asarray(new_lam)
    colour = {s: c for s, c in old["signals"].items() if s[2] < new_lam[s[0], s[1]]}
    changed: set = set()
    if sets is not None:
        colour = {s: c for s, c in colour.items() if c in sets[s[0]][topo.level(s[0], s[1])]}
    at_tx = {(s[0], c): s for s, c in colour.items()}
    at_rx = {(s[1], c): s for s, c in colour.items()}
    for i, j in np.argwhere(new_lam > 0):
        allowed = range(w) if sets is None else sets[int(i)][topo.level(int(i), int(j))]
        for k in range(int(new_lam[i, j])):
            sig = (int(i), int(j), k)
            if sig not in colour:
                changed |= _place(sig, allowed, colour, at_tx, at_rx)
    out = _config(topo, colour)
    if sets is not None:
        out.update(lam=new_lam, sets=sets)
    return out, len(changed)


# ------------------------------------------- allocations the transceiver can emit ---------

def _components(topo: SiPAC, target: np.ndarray) -> list[list[int]]:
    """CUs joined by a pair with target > 0 (a job's CUs under filtered traffic)."""
    parent = list(range(topo.N))

    def find(a):
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a
    for i, j in np.argwhere(target > 0):
        parent[find(int(i))] = find(int(j))
    groups: dict = {}
    for x in range(topo.N):
        groups.setdefault(find(x), []).append(x)
    return list(groups.values())


def _levels(topo: SiPAC) -> np.ndarray:
    lev = np.full((topo.N, topo.N), -1)
    for x in range(topo.N):
        for l in range(topo.L):
            lev[x, topo.neighbours(x, l)] = l
    return lev


def _level_sums(target: np.ndarray, lev: np.ndarray, L: int):
    tx = np.stack([(target * (lev == l)).sum(axis=1) for l in range(L)], axis=1)
    rx = np.stack([(target * (lev == l)).sum(axis=0) for l in range(L)], axis=1)
    return tx, rx


def _settings(topo: SiPAC, target: np.ndarray, w: int, form: str, lev) -> dict:
    """Per CU the cascade setting: one per component (job), among the realisable splits
    that leave a wavelength on every level the job uses (else it would fall apart), the one
    whose busiest level finishes first (the least largest demand / wavelengths over its
    CUs' per-level send and receive demands: the level that bounds the job's time), ties
    broken by the least squares to the demands."""
    from . import transceiver
    table = transceiver.realisable(topo.L, w, form) if topo.L >= 2 else {(w,): ()}
    tx, rx = _level_sums(target, lev, topo.L)
    out = {}
    for comp in _components(topo, target):
        d = np.vstack([tx[comp], rx[comp]])
        used = d.max(axis=0) > 0            # every level the job uses keeps a wavelength
        fit = [s for s in table if all(v > 0 for v, u in zip(s, used) if u)] or list(table)
        def cost(s, d=d, used=used):
            v = np.array(s, dtype=float)
            load = max((float(d[:, l].max() / v[l]) if v[l] else math.inf)
                       for l in range(len(s)) if used[l]) if used.any() else 0.0
            return (round(load, 9), float(((d - v) ** 2).sum()))
        split = min(fit, key=cost)
        for x in comp:
            out[x] = tuple(table[split])
    return out


def _sets(topo: SiPAC, settings: dict, w: int, form: str) -> dict:
    from . import transceiver
    if topo.L < 2:
        return {x: (tuple(range(w)),) for x in settings}
    return {x: transceiver.port_sets(m, w, form) for x, m in settings.items()}


def _capped(target: np.ndarray, lev: np.ndarray, cap: np.ndarray,
            fill: bool = True) -> np.ndarray:
    """The paper's heuristic (round, repair, round-robin fill by decreasing weight) with the
    ingress and egress budgets taken per (CU, level): the wavelengths the CU's cascade sends
    to (and, for its receivers, the set its senders' cascades send to) that level."""
    L = cap.shape[1]
    lam = np.rint(target)
    for axis in (1, 0):                      # repair: tx (i, l) then rx (j, l) over budget
        for l in range(L):
            m = lev == l
            sums = (lam * m).sum(axis=axis)
            for i in np.flatnonzero(sums > cap[:, l]):
                while True:
                    line = lam[i, :] * m[i, :] if axis == 1 else lam[:, i] * m[:, i]
                    if line.sum() <= cap[i, l]:
                        break
                    tl = target[i, :] if axis == 1 else target[:, i]
                    gain = np.where(line > 0, line - tl, -np.inf)
                    j = int(np.argmax(gain))
                    if axis == 1:
                        lam[i, j] -= 1
                    else:
                        lam[j, i] -= 1
    want = target > 0
    rows = np.arange(lam.shape[0])
    while fill:
        progress = False
        for l in range(L):
            m = (lev == l) & want
            out_left = cap[:, l] - (lam * (lev == l)).sum(axis=1)
            in_left = cap[:, l] - (lam * (lev == l)).sum(axis=0)
            for i in rows[out_left > 0]:
                weight = np.where(m[i] & (in_left > 0), target[i] - lam[i], -np.inf)
                j = int(np.argmax(weight))
                if weight[j] == -np.inf:
                    continue
                lam[i, j] += 1
                in_left[j] -= 1
                progress = True
        if not progress:
            break
    return lam


def _place(sig, allowed, colour: dict, at_tx: dict, at_rx: dict) -> set:
    """Colour ``sig`` = (u, v, k) from ``allowed`` (u's and v's degrees within this colour
    class at most len(allowed)): a colour free at both ends, else the alternating path of
    two colours (a free at u, b free at v) from v is swapped (Koenig: bipartite, the path
    never reaches u). Returns the signals whose colour was set or changed."""
    u, v = sig[0], sig[1]

    def put(s, c):
        colour[s] = c
        at_tx[(s[0], c)] = s
        at_rx[(s[1], c)] = s
    free_u = [c for c in allowed if (u, c) not in at_tx]
    for c in free_u:
        if (v, c) not in at_rx:
            put(sig, c)
            return {sig}
    a = free_u[0]
    b = next(c for c in allowed if (v, c) not in at_rx)
    path, node, side, col = [], v, "rx", a
    while True:
        nxt = (at_rx if side == "rx" else at_tx).get((node, col))
        if nxt is None:
            break
        path.append(nxt)
        node, side = (nxt[0], "tx") if side == "rx" else (nxt[1], "rx")
        col = b if col == a else a
    for p in path:
        del at_tx[(p[0], colour[p])]
        del at_rx[(p[1], colour[p])]
    for p in path:
        put(p, b if colour[p] == a else a)
    put(sig, a)
    return set(path) | {sig}


def _plan(topo: SiPAC, target: np.ndarray, w: int, form: str, settings: dict | None,
          fixed_sets: tuple | None = None, fill: bool = True) -> dict:
    lev = _levels(topo)
    target = np.asarray(target, dtype=float) * (lev >= 0)
    if fixed_sets is not None:
        settings = {x: None for x in range(topo.N)}
        sets = {x: fixed_sets for x in range(topo.N)}
    else:
        settings = settings or _settings(topo, target, w, form, lev)
        sets = _sets(topo, settings, w, form)
    cap = np.array([[len(sets[x][l]) for l in range(topo.L)] for x in range(topo.N)])
    lam = _capped(target, lev, cap, fill)
    colour: dict = {}
    at_tx: dict = {}
    at_rx: dict = {}
    for i, j in np.argwhere(lam > 0):
        allowed = sets[int(i)][lev[i, j]]
        for k in range(int(lam[i, j])):
            _place((int(i), int(j), k), allowed, colour, at_tx, at_rx)
    out = _config(topo, colour)
    out.update(lam=lam, settings=settings, sets=sets, form=form, method="cascade")
    return out


def allocate(topo: SiPAC, T, w: int, *, form: str = "chain") -> dict:
    """An allocation the comb transceivers and the WSSs can realise, and its configuration:
    per job (component of the traffic) the cascade setting whose split is closest to the
    job's per-level demands, the paper's heuristic with each CU's per-level budgets (its
    cascade's port sets), and every level-l signal of CU x coloured from the wavelengths x's
    cascade sends to port l. Returns the assignment (``wss``, ``signals``) with ``lam``,
    ``settings`` (per CU the units' modes), ``sets`` (per CU per port its wavelengths)."""
    w = _w(w)
    return _plan(topo, scale(T, w) * direct_mask(topo), w, form, None)


def realise(topo: SiPAC, lam, w: int, *, form: str = "chain", settings: dict | None = None,
            fixed_sets: tuple | None = None) -> dict:
    """The largest part of a given allocation (eq 1's exact optimum, the static SiPAC's) the
    hardware emits: as :func:`allocate` with ``lam`` as the target, so wavelengths beyond a
    CU's per-level budget are dropped (``dropped``). ``fixed_sets``: a transceiver without a
    cascade (the static SiPAC's fixed split: the same port sets at every CU)."""
    w = _w(w)
    check_allocation(topo, lam, w)
    out = _plan(topo, np.asarray(lam, dtype=float), w, form, settings, fixed_sets,
                fill=False)
    out["dropped"] = int(np.asarray(lam).sum() - out["lam"].sum())
    return out


def check_joint(topo: SiPAC, plan: dict, w: int) -> int:
    """Every signal of a plan is one the hardware emits: eq 1's constraints, the colouring's
    (a transmitter and a receiver use a wavelength once), each level-l signal of CU x on a
    wavelength x's transceiver sends to port l (its cascade setting traced wavelength by
    wavelength, :func:`transceiver.trace`), and every WSS configuration through the WSS
    controller's checks. Returns the number of signals; ValueError naming the first
    violation."""
    from . import transceiver, wss
    lam = plan["lam"]
    check_allocation(topo, lam, w)
    try:
        check_assignment(topo, lam, plan, w)
    except AssertionError as e:
        raise ValueError(str(e)) from None
    port = {}
    for x in range(topo.N):
        m = plan["settings"].get(x)
        if m is None:                       # fixed transceiver: its port sets
            port[x] = {c: l for l, s in enumerate(plan["sets"][x]) for c in s}
        else:
            port[x] = dict(enumerate(transceiver.trace(m, w, plan["form"]))) \
                if topo.L >= 2 else {c: 0 for c in range(w)}
    for (i, j, k), c in plan["signals"].items():
        if k >= lam[i, j]:
            raise ValueError(f"signal {(i, j, k)} is beyond lambda_{i}{j} = {lam[i, j]:g}")
        l = topo.level(i, j)
        if port[i].get(c) != l:
            raise ValueError(f"CU {i} sends wavelength {c} to CU {j} at level {l}, but its "
                             f"cascade sends wavelength {c} to port {port[i].get(c)}")
    wss.check_assignment_configs(plan, topo.r, w)
    return len(plan["signals"])
