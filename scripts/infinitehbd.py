"""InfiniteHBD from the command line: TP rings and their transceiver settings, GPU waste of
the HBD architectures over a fault trace, Table 7's bound and Table 6's costs.

    aifabric infinitehbd rings --nodes 12 --R 4 --K 2 --tp 16 --faulty 2,7 [--line]
                                        [--commands]
    aifabric infinitehbd waste --tp 32 [--halves split|adjacent]
                                        [--spatial independent|clustered] [--seed 1]
                                        [--generated | --trace trace.json [--servers 400]
                                         | --trace faults.csv --nodes 2448 --hours 8352]
    aifabric infinitehbd trace [--trace trace.json [--servers 400]]
    aifabric infinitehbd table7
    aifabric infinitehbd table6

``rings --commands`` also lists, per transceiver bundle, the OCS transceiver controller
commands (``rtl/optics/ocstrx.py``: mnemonic and command word) that apply the setting, with
the backups ``ocstrx.ring_commands`` derives from the faults and the rings.
``waste`` without ``--trace`` uses the released production trace (400 8-GPU servers, 348
days, shipped in ``models/infinitehbd/data``) placed on the 9,792-GPU line
(``faults.place_on_line``: ``--halves`` where the two 4-GPU halves of an 8-GPU node sit,
``--spatial`` which server sits next to which, ``--seed`` the placement);
``--generated`` uses the generator calibrated to that trace's statistics instead. A
``--trace`` ending in ``.json`` is a trace in the release's format (events per node UUID),
placed the same way; a CSV has the header ``node,start_h,end_h`` (4-GPU nodes, hours from
the trace start) and is used as it is. ``trace`` prints a JSON trace's statistics. Bad
input prints one line ``error: ...`` (a bad JSON event: the file and the event's index)
and exits with 2.
"""

from __future__ import annotations

from ._cli import Parser, UsageError, md_table, run_main


def _ints(text: str, what: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UsageError(f"--{what} {text!r}: expected a comma list of integers") from None


def cmd_rings(args) -> None:
    from aifabric.models.infinitehbd.topology import HBD, build_rings, verify
    hbd = HBD(args.nodes, args.R, args.K, ring=not args.line)
    faulty = _ints(args.faulty, "faulty") if args.faulty else []
    rings = build_rings(hbd, faulty, args.tp)
    verify(hbd, rings, faulty)
    print(f"{len(rings)} TP-{args.tp} rings on {args.nodes} nodes of {args.R} GPUs "
          f"(K = {args.K}, {'line' if args.line else 'ring'}), faulty {faulty or 'none'}; "
          f"every ring verified on the link graph")
    commands = None
    if args.commands:
        from aifabric.models.infinitehbd.ocstrx import ring_commands
        commands = ring_commands(hbd, rings, lanes=8, groups=2)
    for i, r in enumerate(rings):
        cfg = " ".join(f"{side}{n}={path}" for (side, n), path in sorted(
            r.config.items(), key=lambda kv: (kv[0][1], kv[0][0])))
        print(f"ring {i}: nodes {list(r.nodes)}  transceivers {cfg}")
        if commands is not None:
            _print_commands(r, commands)


def _print_commands(ring, commands) -> None:
    from aifabric.cosim.codec import ocs_command
    lanes = 8                    # an 8 x 112G transceiver (§7): two GPUs' SerDes halves
    for key in sorted(ring.config, key=lambda k: (k[1], k[0])):
        side, n = key
        for bundle, c in commands[key]:
            if c.op == 1:
                who = "every group" if c.every else f"group {c.group}"
                text = f"SET_PATH {who} path {c.path} backup {c.backup}"
            else:
                text = f"LOAD_PERM {list(c.perm)}"
            word = ocs_command(c.op, lanes=lanes, groups=2, group=c.group, path=c.path,
                               backup=c.backup, perm=c.perm, states=c.states, every=c.every,
                               mask=c.mask)
            print(f"    {side}{n} bundle {bundle}: {text}  ({word:#x})")


def _json_trace(args):
    from aifabric.models.infinitehbd import faults
    if args.trace:
        return faults.read_trace_json(args.trace, servers=args.servers)
    return faults.production_trace()


def cmd_waste(args) -> None:
    from aifabric.models.infinitehbd import experiments as ex, faults, waste
    if args.trace and not args.trace.endswith(".json"):
        if args.nodes is None or args.hours is None:
            raise UsageError("--trace needs --nodes and --hours")
        trace = faults.read_trace_csv(args.trace, nodes=args.nodes, hours=args.hours, R=4)
        where = "CSV trace"
    elif args.generated:
        if args.trace:
            raise UsageError("--generated and --trace exclude each other")
        trace = ex.cluster_trace(args.seed, halves=args.halves, source="generated")[1]
        where = "generated trace calibrated to the released one"
    else:
        t8 = _json_trace(args)
        trace = faults.place_on_line(t8, ex.GPUS // 8, halves=args.halves,
                                     spatial=args.spatial, seed=args.seed)[1]
        where = (f"{t8.nodes} traced servers on {ex.GPUS // 8:,} positions, halves "
                 f"{args.halves}, neighbours {args.spatial}, seed {args.seed}")
    states = trace.states()
    rows = []
    for arch in waste.ARCHS:
        w = waste.waste(arch, states, args.tp, 4)
        rows.append([arch, f"{100 * w.mean():.3f} %", f"{100 * w.max():.3f} %"])
    print(f"{trace.nodes:,} nodes x 4 GPUs, {trace.hours:,.0f} h, {len(trace.events):,} faults, "
          f"TP-{args.tp} ({where})")
    print(md_table(["architecture", "mean waste", "worst"], rows), end="")


def cmd_trace(args) -> None:
    from aifabric.models.infinitehbd import faults
    t = _json_trace(args)
    st = faults.trace_stats(t)
    print(md_table(["servers", "with faults", "faults", "days", "mean faulty ratio",
                    "p99 faulty ratio", "mean fault duration"],
                   [[t.nodes, len(t.ids), len(t.events), f"{t.hours / 24:.1f}",
                     f"{100 * st['mean']:.2f} %", f"{100 * st['p99']:.2f} %",
                     f"{st['mean_duration_h']:.1f} h"]]), end="")


def cmd_table7(args) -> None:
    from aifabric.models.infinitehbd import bound
    t = bound.table7()
    print(md_table(["R", "K = 2", "K = 3", "K = 4"],
                   [[R] + [f"{100 * t[(R, K)]:.4g} %" for K in (2, 3, 4)] for R in (4, 8)]),
          end="")


def cmd_table6(args) -> None:
    from aifabric.models.infinitehbd import cost
    print(md_table(["system", "$ / GPU", "W / GPU", "$ / GPU GB/s", "W / GPU GB/s"],
                   [[k, f"{v['cost']:,.2f}", f"{v['watts']:.2f}", f"{v['cost_per_gbps']:.2f}",
                     f"{v['watts_per_gbps']:.2f}"] for k, v in cost.table6().items()]), end="")


def main(argv=None) -> int:
    parser = Parser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("rings", help="TP rings and transceiver settings")
    p.add_argument("--nodes", type=int, required=True, help="Nodes in the HBD.")
    p.add_argument("--R", type=int, default=4, help="GPUs per node (default 4).")
    p.add_argument("--K", type=int, default=2,
                   help="Hops a transceiver bundle reaches: a K-hop ring (default 2).")
    p.add_argument("--tp", type=int, required=True, help="GPUs per TP group (ring).")
    p.add_argument("--faulty", default="",
                   help="Faulty nodes, a comma list of node indices (default none).")
    p.add_argument("--line", action="store_true",
                   help="Nodes on a line instead of a ring (no wrap-around links).")
    p.add_argument("--commands", action="store_true",
                   help="Also list the OCS transceiver controller commands of every "
                        "setting.")
    p = sub.add_parser("waste", help="GPU waste of every architecture over a trace")
    p.add_argument("--tp", type=int, required=True, help="GPUs per TP group.")
    p.add_argument("--trace", help="A fault trace: a .json file in the release's format or a "
                                    "CSV (node,start_h,end_h); default the released one.")
    p.add_argument("--servers", type=int, default=400,
                   help="Servers of a JSON trace (default 400, the release's).")
    p.add_argument("--nodes", type=int, help="4-GPU nodes of a CSV trace.")
    p.add_argument("--hours", type=float, help="Length of a CSV trace in hours.")
    p.add_argument("--halves", choices=("split", "adjacent"), default="split",
                   help="Where the two 4-GPU halves of an 8-GPU server sit on the line "
                        "(default split).")
    p.add_argument("--spatial", choices=("independent", "clustered"), default="independent",
                   help="Which server sits next to which (default independent).")
    p.add_argument("--seed", type=int, default=1, help="Seed of the placement (default 1).")
    p.add_argument("--generated", action="store_true",
                   help="Use the generator calibrated to the released trace.")
    p = sub.add_parser("trace", help="statistics of a JSON trace (default: the released one)")
    p.add_argument("--trace", help="A .json trace in the release's format (default the "
                                    "released one).")
    p.add_argument("--servers", type=int, default=400,
                   help="Servers of the trace (default 400, the release's).")
    sub.add_parser("table7", help="Appendix C's waste bound")
    sub.add_parser("table6", help="interconnect cost and power from Table 8's parts")
    args = parser.parse_args(argv)
    try:
        {"rings": cmd_rings, "waste": cmd_waste, "trace": cmd_trace, "table7": cmd_table7,
         "table6": cmd_table6}[args.cmd](args)
    except ValueError as e:
        raise UsageError(str(e)) from None
    return 0


if __name__ == "__main__":
    run_main(main)
