"""The ASIC estimate flow: each block's Verilog mapped onto a standard-cell library with
Yosys (``dfflibmap``, ``abc -liberty``) and timed by the project's own static timer over the
cells' NLDM tables (:mod:`.sta`).

The libraries (``lib/``, from ``../shared/data/liberty/``, licences in ``lib/``):

* ``sg13g2``: IHP SG13G2 standard cells, typical corner, 1.2 V, 25 °C (130 nm; Apache-2.0).
* ``asap7``: ASAP7 asap7sc7p5t RVT, TT (7 nm predictive; BSD-3-Clause).

The shipped files keep every cell's area, pins and timing tables and leave out the power and
CCS (current-source) groups, which a delay timer does not read and which are most of the
files' size; ASAP7's inverter/buffer and flip-flop files also leave out the cells Yosys does
not map onto (clock inverters, hold buffers, latches, clock gates, scan flip-flops).
:func:`ship` rewrites them from the originals.
"""

from __future__ import annotations

import gzip
import re
from dataclasses import dataclass
from pathlib import Path

LIB_DIR = Path(__file__).parent / "lib"
# nets of more sinks are timed through a tree of x4 buffers, each driving at most this many
MAX_FANOUT = 16
# How ABC maps onto the cells (``mapping``): "full" is its default script (fraig, dc2, then
# structural choices, ``&dch -f``, and ``&nf`` with the delay target); "fast" is the same
# without the choices, which take most of ABC's time on the BvN engine (docs/figures.md,
# *ASIC estimate*, compares the two).
MAPPINGS = {
    "full": None,       # Yosys' default script for -liberty with -D
    "fast": "strash; &get -n; &fraig -x; &put; scorr; dc2; strash; &get -n; &nf {D}; &put",
}


@dataclass(frozen=True)
class LibrarySpec:
    name: str
    process: str
    files: tuple            # shipped file names in lib/ (gzip); the first holds the flops
    dff: str                # the file dfflibmap reads
    inverter: str           # the inverter FO4 is computed from
    buffer: str             # the buffer of the timer's buffer trees on high-fanout nets
    licence: str

    def paths(self) -> list[Path]:
        return [LIB_DIR / f for f in self.files]


LIBRARIES = {
    "sg13g2": LibrarySpec("sg13g2", "IHP SG13G2 130 nm, typical, 1.2 V, 25 C",
                          ("sg13g2_stdcell_typ_1p20V_25C.lib.gz",),
                          "sg13g2_stdcell_typ_1p20V_25C.lib.gz", "sg13g2_inv_1", "sg13g2_buf_4",
                          "Apache-2.0"),
    "asap7": LibrarySpec("asap7", "ASAP7 7 nm predictive, RVT, TT, 0.7 V",
                         ("asap7_seq.lib.gz", "asap7_simple.lib.gz", "asap7_invbuf.lib.gz"),
                         "asap7_seq.lib.gz", "INVx1_ASAP7_75t_R",
                         "BUFx4_ASAP7_75t_R", "BSD-3-Clause"),
}

# Which cells of each original file are shipped (None: all).
_KEEP = {
    "sg13g2_stdcell_typ_1p20V_25C.lib.gz": None,
    "asap7_simple.lib.gz": None,
    "asap7_invbuf.lib.gz": lambda n: re.match(r"(INV|BUF)x", n) is not None,
    "asap7_seq.lib.gz": lambda n: re.match(r"DFF(H|ASRH)Q", n) is not None,
}


def ship(src: Path, dst: Path = LIB_DIR) -> None:
    """Write the shipped subsets of the Liberty files in ``src`` into ``dst``."""
    from .liberty import read_text, subset
    for name, keep in _KEEP.items():
        text = subset(read_text(Path(src) / name), keep or (lambda n: True))
        with gzip.GzipFile(dst / name, "wb", mtime=0) as f:
            f.write(text.encode())
