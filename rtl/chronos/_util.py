"""Small netlist helpers shared by the Chronos blocks."""

from amaranth.hdl import Cat, Const, Signal

__all__ = ["check_param", "or_tree", "eq_const"]


def check_param(name, value, low, high):
    """TypeError/ValueError naming the parameter, its value and the allowed range."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"Parameter '{name}' must be an int in {low}..{high}, not {value!r}")
    if not low <= value <= high:
        raise ValueError(f"Parameter '{name}' must be in {low}..{high}, not {value!r}")


def or_tree(m, values, width):
    """OR-reduce ``values`` as a balanced tree of named ``width``-bit Signals (one operation
    per Signal keeps the netlist a DAG of small gates)."""
    values = list(values)
    while len(values) > 1:
        nxt = []
        for k in range(0, len(values) - 1, 2):
            s = Signal(width)
            m.d.comb += s.eq(values[k] | values[k + 1])
            nxt.append(s)
        if len(values) % 2:
            nxt.append(values[-1])
        values = nxt
    return values[0]


def eq_const(x, k):
    """``x == k`` for a constant ``k`` as an AND of literal bits: the Verilog has no
    narrowed constant (which Verilator's -Wall flags as a width mismatch)."""
    if k >> len(x):
        return Const(0, 1)
    return Cat(*[x[b] if k >> b & 1 else ~x[b] for b in range(len(x))]).all()
