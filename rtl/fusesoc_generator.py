"""FuseSoC generator: elaborate one aifabric block with the caller's parameters.

FuseSoC runs this file (the ``aifabric_verilog`` generator of ``rtl/generators.core``) with the
path of a YAML file holding the ``parameters`` of a core's ``generate`` section::

    generate:
      arbiter:
        generator: aifabric_verilog
        parameters: {block: wwfa, n: 32, module: arbiter32}

``block`` names a block of the registry (``aifabric blocks`` lists them with their
parameters and ranges), ``module`` the Verilog module (default: the block's name), and every
other key is a block parameter; parameters left out take the block's first default set. It
writes ``<module>.v`` (lint-clean; its header names the package version, the source revision
and the parameters) and the core that hands that file to FuseSoC. A bad parameter is one line
naming it on standard error and exit code 2.

``cocotb: true`` also writes ``<module>_cocotb.cpp`` for a simulation target that runs the
block's cocotb testbench on Verilator (edalize's ``sim`` flow with ``cocotb_module``; each
block core's ``sim`` target does this). Compiled into the simulation, it does what cocotb's
own runner does and edalize does not:

* before ``main``: names cocotb's Python entry points in ``GPI_USERS`` (unless set; cocotb 2
  exits at once without it), and passes the testbench the parameters this Verilog was
  generated with (``AIFABRIC_PARAMS``);
* at exit: if the results file (``$COCOTB_RESULTS_FILE``, default ``results.xml``) records
  a failed test, or was not written, the exit status is 1, so ``fusesoc run`` fails with the
  co-simulation (cocotb itself exits 0 either way).

The generator runs ``python3`` from ``PATH``, so aifabric must be importable there: activate
the environment aifabric is installed in (``source .venv/bin/activate``) before ``fusesoc``.

The cores themselves (``rtl/generators.core`` and one ``rtl/<area>/<block>.core`` per block)
are written from the registry (``make cores`` in a checkout; ``aifabric verilog --cores``
writes a set under the build directory); a test keeps the shipped ones current.
"""

import json
import sys
from pathlib import Path

from aifabric.rtl.toolchain import COCOTB_REWRITE

if __name__ == "__main__":        # run as a file: keep this folder's modules off the path
    _here = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _here]

GENERATOR = "aifabric_verilog"
GENERATOR_CORE = "aifabric:fusesoc:generators"

__all__ = ["GENERATOR", "GENERATOR_CORE", "generator_core", "block_core", "generate",
           "write_cores"]


def _yaml(value) -> str:
    return json.dumps(value)            # JSON scalars are YAML scalars


def generator_core(version: str) -> str:
    """``rtl/generators.core``: the core that registers the generator."""
    return (f"CAPI=2:\n"
            f"# Written by `aifabric verilog --cores`; the version is the package's.\n"
            f"name: {GENERATOR_CORE}:{version}\n"
            f"description: \"aifabric: generate any block's Verilog with your parameters\"\n"
            f"generators:\n"
            f"  {GENERATOR}:\n"
            f"    interpreter: python3\n"
            f"    command: fusesoc_generator.py\n"
            f"    description: \"Elaborate an aifabric block (Amaranth) to Verilog\"\n"
            f"    usage: |\n"
            f"      Parameters: block (a block of the registry: aifabric blocks), module (the\n"
            f"      Verilog module's name; default the block's name) and the block's own\n"
            f"      parameters (e.g. n: 32); any left out take the block's first default set.\n"
            f"      Writes <module>.v, whose header names the version, the parameters and the\n"
            f"      source revision. cocotb: true adds <module>_cocotb.cpp for a simulation\n"
            f"      target running the block's cocotb testbench on Verilator (edalize sim\n"
            f"      flow, cocotb_module). Needs python3 with aifabric importable on PATH\n"
            f"      (source .venv/bin/activate).\n")


def block_core(block, version: str) -> str:
    """``rtl/<area>/<block>.core``: the block at its first default parameter set through the
    generator. Targets: ``default`` (the Verilog for any flow; Yosys set up for the ECP5
    ``make synth`` uses), ``lint`` (Verilator ``-Wall``) and, for a block with a testbench of
    its own, ``sim`` (its cocotb testbench on Verilator, checked against the golden model)."""
    params = block.params[0]
    sim = block.cosim_in is None
    lines = ["CAPI=2:",
             "# Written by `aifabric verilog --cores` from the block registry.",
             f"name: aifabric:{block.area}:{block.name}:{version}",
             f"description: {_yaml(block.description)}",
             "filesets:",
             "  generator:",
             f"    depend: [\"{GENERATOR_CORE}\"]",
             "generate:"]
    for section, extra in [("verilog", [])] + ([("cocotb", ["      cocotb: true"])] if sim
                                               else []):
        lines += [f"  {section}:", f"    generator: {GENERATOR}", "    parameters:",
                  f"      block: {block.name}"]
        lines += [f"      {k}: {_yaml(params[k])}" for k in block.param_names if k in params]
        lines += extra

    def target(name, generate, *rest):
        return [f"  {name}:", "    filesets: [generator]", f"    generate: [{generate}]",
                f"    toplevel: {block.name}", *rest]

    lines += ["targets:",
              *target("default", "verilog", "    tools:", "      yosys:",
                      "        arch: ecp5"),
              *target("lint", "verilog", "    flow: lint", "    flow_options:",
                      "      tool: verilator", "      verilator_options: [-Wall]")]
    if sim:
        lines += target("sim", "cocotb", "    flow: sim", "    flow_options:",
                        "      tool: verilator",
                        f"      cocotb_module: aifabric.cosim.test_{block.name}",
                        *([f"      make_options: [OPT_FAST={block.build_opt}]"]
                          if block.build_opt else []))
    return "\n".join(lines) + "\n"


def core_text(vlnv: str, module: str, cocotb: bool = False) -> str:
    """The core the generator hands back: its Verilog file (and the simulation's C++)."""
    files = [f"      - {module}.v: {{file_type: verilogSource}}"]
    if cocotb:
        files.append(f"      - {module}_cocotb.cpp: {{file_type: cppSource}}")
    return "\n".join(["CAPI=2:", f"name: {vlnv}", "filesets:", "  rtl:", "    files:",
                      *files, "targets:", "  default:", "    filesets: [rtl]"]) + "\n"


def _c_string(text: str) -> str:
    # JSON's escapes are C's; an escaped '?' keeps a '??/' from being read as a trigraph
    return json.dumps(text, ensure_ascii=False).replace("?", "\\?")


def cocotb_cpp(params: dict) -> str:
    """``<module>_cocotb.cpp``: what cocotb's runner sets up and edalize's ``sim`` flow does
    not (see the module's docstring)."""
    try:
        import cocotb_tools.config
        import find_libpython
    except ImportError as e:
        raise ValueError(f"cocotb: true needs cocotb in the generator's Python ({e})") from None
    libpython = find_libpython.find_libpython()
    if libpython is None:
        raise ValueError("cocotb: true: no libpython found for cocotb to embed")
    users = f"{libpython};{cocotb_tools.config.pygpi_entry_point()}"
    return f"""\
// Written by aifabric's FuseSoC generator for a cocotb simulation on Verilator.
// Before main(): cocotb's entry points (GPI_USERS, unless set) and the parameters the
// Verilog was generated with (AIFABRIC_PARAMS); a stale results file is removed.
// At exit: a failed test, or no results at all, makes the exit status 1.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

namespace {{

const char *results_file() {{
    const char *name = std::getenv("COCOTB_RESULTS_FILE");
    return name && *name ? name : "results.xml";
}}

void check_results() {{
    std::ifstream in(results_file());
    std::stringstream text;
    text << in.rdbuf();
    const std::string xml = text.str();
    const char *why = nullptr;
    if (!in || xml.find("<testcase") == std::string::npos)
        why = "no test ran to completion";
    else if (xml.find("<failure") != std::string::npos || xml.find("<error") != std::string::npos)
        why = "a test failed";
    if (why) {{
        std::fflush(nullptr);
        std::fprintf(stderr, "aifabric: %s (see %s)\\n", why, results_file());
        _exit(1);
    }}
}}

const int installed = [] {{
    setenv("GPI_USERS", {_c_string(users)}, 0);
    setenv("AIFABRIC_PARAMS", {_c_string(json.dumps(params))}, 1);
    setenv({_c_string(COCOTB_REWRITE[0])}, {_c_string(COCOTB_REWRITE[1])}, 0);
    std::remove(results_file());
    std::atexit(check_results);
    return 0;
}}();

}}  // namespace
"""


def generate(config: dict, vlnv: str, out: Path) -> Path:
    """Write ``<module>.v`` and the generated core into ``out``; return the Verilog path."""
    from aifabric.rtl.catalog import get_block

    config = dict(config or {})
    if "block" not in config:
        raise ValueError("parameter 'block' is required (a block of the registry: "
                         "aifabric blocks)")
    block = get_block(str(config.pop("block")))
    module = str(config.pop("module", block.name))
    cocotb = config.pop("cocotb", False)
    if not isinstance(cocotb, bool):
        raise ValueError(f"parameter 'cocotb' must be true or false, not {cocotb!r}")
    if cocotb and block.cosim_in:
        raise ValueError(f"{block.name} has no testbench of its own (cocotb: true): it is "
                         f"co-simulated inside {block.cosim_in}; simulate that block instead")
    params, top = block.instance(config)         # TypeError/ValueError name the parameter
    verilog = out / f"{module}.v"
    verilog.write_text(block.header(params) + block.verilog(params, name=module, top=top))
    if cocotb:
        (out / f"{module}_cocotb.cpp").write_text(cocotb_cpp(params))
    (out / (vlnv.split(":")[2] + ".core")).write_text(core_text(vlnv, module, cocotb))
    return verilog


def write_cores(root: Path) -> list[Path]:
    """(Re)write ``generators.core``, the generator script it runs and every block's core
    under ``root``; return the paths written or already current. The package ships the same
    cores in its own folder; ``aifabric verilog --cores`` writes a copy under the build
    directory (never into an installed package), and ``make cores`` refreshes the checkout's."""
    import shutil

    from aifabric.rtl.catalog import BLOCKS, VERSION
    root = Path(root)
    files = {root / "generators.core": generator_core(VERSION)}
    for block in BLOCKS.values():
        files[root / block.area / f"{block.name}.core"] = block_core(block, VERSION)
    for path, text in files.items():
        if not path.is_file() or path.read_text() != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    script, here = root / Path(__file__).name, Path(__file__).resolve()
    if not script.exists() or not script.resolve().samefile(here):
        if not script.is_file() or script.read_bytes() != here.read_bytes():
            shutil.copyfile(here, script)
    return [*files, script]


def main(argv=None) -> int:
    import yaml
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: fusesoc_generator.py INPUT.yml (FuseSoC's generator input)",
              file=sys.stderr)
        return 2
    try:
        data = yaml.safe_load(Path(argv[0]).read_text())
        generate(data.get("parameters"), data["vlnv"], Path.cwd())
    except (TypeError, ValueError, KeyError, OSError, yaml.YAMLError) as e:
        print(f"error: {GENERATOR}: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
