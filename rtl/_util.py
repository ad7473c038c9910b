"""Helpers shared by every RTL block: parameter checks, the "built but never elaborated"
marker, and small netlist builders."""

from amaranth.hdl import Cat, Const, Signal

__all__ = ["check_param", "check_params", "not_elaborated", "or_tree", "eq_const", "ge_const",
           "two_or_more"]


def check_param(name, value, low, high):
    """TypeError/ValueError naming the parameter, its value and the allowed range."""
    # bool is an int subclass; a True/False count is always a mistake.
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"Parameter '{name}' must be an int in {low}..{high}, not {value!r}")
    if not low <= value <= high:
        raise ValueError(f"Parameter '{name}' must be in {low}..{high}, not {value!r}")


def not_elaborated(component):
    """Mark ``component`` as built on purpose without being elaborated, and return it.

    Amaranth warns (``UnusedElaboratable``, an error under ``-W error``) when an
    ``Elaboratable`` is garbage-collected without ever being elaborated. A component that is
    only inspected (its signature, its parameter checks) or whose constructor raised half-way
    is not a forgotten design. Amaranth 0.5 has no public switch for that warning other than
    filtering it globally, which would also hide real mistakes; its ``MustUse`` base class reads
    one private attribute. This function is the one place that sets it.
    """
    component._MustUse__silence = True
    return component


def check_params(component, checks):
    """Run :func:`check_param` on each ``(name, value, low, high)``; on failure mark the
    half-built ``component`` with :func:`not_elaborated` and re-raise."""
    try:
        for check in checks:
            check_param(*check)
    except (TypeError, ValueError):
        not_elaborated(component)
        raise


def or_tree(m, values, width):
    """OR-reduce ``values`` as a balanced tree of ``width``-bit Signals (one operation per
    Signal keeps the netlist a DAG of small gates), named ``_or_tree``: internal, so a
    waveform does not show them (:func:`aifabric.rtl.verilog.hide_unnamed`)."""
    values = list(values)
    while len(values) > 1:
        nxt = []
        for k in range(0, len(values) - 1, 2):
            s = Signal(width, name="_or_tree")
            m.d.comb += s.eq(values[k] | values[k + 1])
            nxt.append(s)
        if len(values) % 2:
            nxt.append(values[-1])
        values = nxt
    return values[0]


def two_or_more(m, bits):
    """1 when at least two of the 1-bit ``bits`` are high: a balanced tree of (any, several)
    pairs, log-depth."""
    level = [(b, Const(0, 1)) for b in bits]
    while len(level) > 1:
        nxt = []
        for k in range(0, len(level) - 1, 2):
            (a1, s1), (a2, s2) = level[k], level[k + 1]
            a, s = Signal(name="_any"), Signal(name="_several")
            m.d.comb += [a.eq(a1 | a2), s.eq(s1 | s2 | (a1 & a2))]
            nxt.append((a, s))
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return level[0][1]


def eq_const(x, k):
    """``x == k`` for a constant ``k`` as an AND of literal bits: the Verilog has no
    narrowed constant (which Verilator's -Wall flags as a width mismatch)."""
    if k >> len(x):
        return Const(0, 1)
    return Cat(*[x[b] if k >> b & 1 else ~x[b] for b in range(len(x))]).all()


def ge_const(x, k):
    """``x >= k`` for a constant ``k`` as bit logic from the least significant bit up (no
    narrowed constant in the Verilog): with k's bit i set, x must have it and be >= on the
    lower bits; with it clear, x having it is enough."""
    if k <= 0:
        return Const(1, 1)
    if k >> len(x):
        return Const(0, 1)
    ge = Const(1, 1)
    for i in range(len(x)):
        ge = (x[i] & ge) if k >> i & 1 else (x[i] | ge)
    return ge
