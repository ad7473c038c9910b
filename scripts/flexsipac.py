"""Flex-SiPAC from the command line: topology counts, wavelength allocation of a job mapping
(as the hardware emits it: each CU's de-interleaver setting and wavelengths, each WSS's
configuration, checked jointly), a checked Flex-SiPCO all-reduce, one simulated JCT.

    aifabric flexsipac topology --r 16 --L 2
    aifabric flexsipac allocate --r 4 --L 2 --w 8 --jobs 8,4,4 [--collective sipco]
        [--exact] [--wss]
    aifabric flexsipac allreduce --r 4 --L 3 --jobs 32,16,16
    aifabric flexsipac simulate --r 8 --L 3 --jobs 64,64,64,64,64,64,64,64
        --fabric flex-sipac --algorithm sipco --message 1e6 [--setting netbench|credit]

Bad input prints one line ``error: ...`` and exits with 2.
"""

from __future__ import annotations

from ._cli import Parser, UsageError, run_main


def _jobs(text: str) -> list[int]:
    try:
        sizes = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UsageError(f"--jobs {text!r}: expected a comma list of job sizes") from None
    if not sizes:
        raise UsageError("--jobs: at least one job")
    return sizes


def cmd_topology(args) -> None:
    import networkx as nx
    from aifabric.models.flexsipac.topology import SiPAC
    s = SiPAC(args.r, args.L)
    print(f"{s}: N = {s.N:,} CUs, M = {s.M:,} WSSs, {s.L} ports per CU, {s.r - 1} direct "
          f"neighbours per level")
    if s.N <= 4096:
        print(f"built graph: diameter {nx.diameter(s.cu_graph())} CU hops")


def cmd_allocate(args) -> None:
    import numpy as np
    from aifabric.models.flexsipac import allocation, traffic
    from aifabric.models.flexsipac.topology import SiPAC
    topo = SiPAC(args.r, args.L)
    T = traffic.traffic_matrix(topo, _jobs(args.jobs), args.collective)
    lam = (allocation.exact if args.exact else allocation.heuristic)(topo, T, args.w)
    t = allocation.scale(T, args.w) * allocation.direct_mask(topo)
    print(f"{'exact' if args.exact else 'heuristic'} allocation on {topo}, w = {args.w} (eq 1 "
          f"by counts): {int(lam.sum())} wavelengths, eq 1 objective "
          f"{allocation.objective(lam, t):.3f}")
    # what the transceivers and WSSs emit: the heuristic within the cascade's splits (or
    # the exact optimum cut to them), coloured from each port's wavelengths
    a = allocation.realise(topo, lam, args.w) if args.exact else \
        allocation.allocate(topo, T, args.w)
    signals = allocation.check_joint(topo, a, args.w)
    lam = a["lam"]
    print(f"as the hardware emits it (de-interleaver chain per CU, WSSs): {signals} "
          f"wavelengths, eq 1 objective {allocation.objective(lam, t):.3f}")
    for x in range(topo.N):
        row = {int(y): int(lam[x, y]) for y in np.flatnonzero(lam[x])}
        print(f"  CU {x}: {row}")
    if args.wss:
        from aifabric.models.flexsipac import transceiver, wss
        for key, cfg in sorted(a["wss"].items()):
            print(f"WSS level {key[0]} #{key[1]}: " + ", ".join(
                f"in {i} lambda {lam_id} -> out {o}" for (i, lam_id), o in sorted(cfg.items())))
        checked = wss.check_assignment_configs(a, topo.r, args.w)
        cmds = len(wss.load_commands({}, topo.r, args.w))
        print(f"WSS controller (rtl/optics/wss.py): all {checked} configurations pass its "
              f"checks; each loads as {cmds - 1} LOAD_COLUMN commands and a COMMIT")
        if topo.L >= 2:
            rep = transceiver.joint_report(topo, a, args.w)
            print(f"de-interleaver cascades (rtl/optics/deinterleaver.py): {rep['served']} of "
                  f"{rep['cus']} CUs send every wavelength to the port of its level under "
                  f"one cascade setting")
            for x, modes in sorted(rep["settings"].items()):
                print(f"  CU {x}: modes {list(modes)}, split "
                      f"{list(transceiver.counts(modes, args.w))}")


def cmd_allreduce(args) -> None:
    import numpy as np
    from aifabric.models.flexsipac import sipco, traffic
    from aifabric.models.flexsipac.topology import SiPAC
    topo = SiPAC(args.r, args.L)
    rng = np.random.default_rng(1)
    for j, job in enumerate(traffic.job_blocks(topo, _jobs(args.jobs))):
        sch = sipco.sipco_schedule(topo, job, 1e6)
        data = {x: rng.random(64) for x in job}
        out = sipco.execute(topo, job, sch, data)
        ok = all(np.allclose(out[x], sum(data.values())) for x in job)
        print(f"job {j} ({len(job)} CUs): {len({t.step for t in sch})} steps, "
              f"{len(sch)} transfers, every CU holds the sum: {ok}")


def cmd_simulate(args) -> None:
    from aifabric.models.common import dctcp
    from aifabric.models.flexsipac.experiments import run_point
    setting, label = args.setting, args.setting
    if args.backpressure is not None:
        if args.setting != "netbench":
            raise UsageError("--backpressure applies to the netbench setting only")
        setting = dctcp.Setting(**{**dctcp.NETBENCH_SIPAC.__dict__,
                                   "backpressure": args.backpressure})
        label = f"netbench ({args.backpressure} per link)"
    jct = run_point(args.fabric, args.algorithm, _jobs(args.jobs), [args.message], args.r,
                    args.L, setting)
    print(f"{args.fabric} ({args.algorithm}), jobs {args.jobs}, {args.message:g} B, "
          f"{label} setting: JCT {jct * 1e6:.2f} us")


def main(argv=None) -> int:
    parser = Parser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    for name, help_ in (("topology", "counts of SiPAC(r, L)"),
                        ("allocate", "eq 1 allocation and WSS settings"),
                        ("allreduce", "Flex-SiPCO executed and checked"),
                        ("simulate", "one packet-level JCT")):
        p = sub.add_parser(name, help=help_)
        p.add_argument("--r", type=int, required=True,
                       help="Radix: computing units per SiPAC group (an integer >= 2).")
        p.add_argument("--L", type=int, required=True,
                       help="Levels of the BCube (N = r^L computing units).")
        if name != "topology":
            p.add_argument("--jobs", required=True,
                           help="Job sizes in computing units, a comma list (e.g. 8,4,4).")
        if name == "allocate":
            p.add_argument("--w", type=int, required=True,
                           help="Wavelengths per fibre.")
            p.add_argument("--collective", default="sipco",
                           help="The collective the allocation serves: sipco (Flex-SiPCO, "
                                "the default) or another name the allocator accepts.")
            p.add_argument("--exact", action="store_true",
                           help="Search for the exact allocation instead of the greedy one.")
            p.add_argument("--wss", action="store_true",
                           help="Also print every WSS configuration the allocation needs.")
        if name == "simulate":
            p.add_argument("--fabric", default="flex-sipac",
                           help="The fabric simulated (default flex-sipac).")
            p.add_argument("--algorithm", default="sipco",
                           help="The all-reduce algorithm (default sipco).")
            p.add_argument("--message", type=float, default=1e6,
                           help="All-reduce message size in bytes (default 1e6).")
            p.add_argument("--setting", default="netbench",
                           help="The transport: netbench (the authors' DCTCP setting, the "
                                "default) or credit (an ablation).")
            p.add_argument("--backpressure", default=None,
                           help="The netbench setting's lossless links: pause (a PFC-like "
                                "pause per link, the default) or credit (credit per link).")
    args = parser.parse_args(argv)
    if getattr(args, "message", 1) <= 0:
        raise UsageError(f"--message must be > 0, not {args.message!r}")
    try:
        {"topology": cmd_topology, "allocate": cmd_allocate, "allreduce": cmd_allreduce,
         "simulate": cmd_simulate}[args.cmd](args)
    except ValueError as e:
        raise UsageError(str(e)) from None
    return 0


if __name__ == "__main__":
    run_main(main)
