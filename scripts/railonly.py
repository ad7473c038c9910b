"""Rail-only from the command line: network counts and cost, collective times, the best
parallelisation of a GPT model, and the traffic summary of a run.

    aifabric railonly table2 [--hb 256]
    aifabric railonly network --gpus 32768 --radix 64 --hb 256
    aifabric railonly a2a --x 8 --y 16 --platform dgx-h100 [--bytes 1e6]
    aifabric railonly search --model gpt-1t --gpus 32768 --batch 4096 [--hb 256]
        [--platform dgx-gh200] [--hb-gbps 3600] [--nic-gbps 400] [--network rail-only]
        [--tp any|hb] [--zero 0|1] [--alpha-hb-us 1] [--alpha-nic-us 2] [--algo tree|ring]
        [--max-micro 8] [--recompute selective|full|none] [--placement snake|linear]
        [--efficiency 0.5]
    aifabric railonly sensitivity      # Figs 8-10 at every knob setting
    aifabric railonly fig7             # one calibrated efficiency vs the measured runs
    aifabric railonly traffic --model gpt-1t --gpus 3072 --batch 3072 --t 8 --p 64

Bad input prints one line ``error: ...`` and exits with 2.
"""

from __future__ import annotations

from ._cli import Parser, UsageError, md_table, run_main

GBPS = 1e9 / 8


def _models():
    from aifabric.models.common import iteration, specs
    from aifabric.models.railonly import collectives, network, traffic
    return collectives, iteration, network, specs, traffic


def cmd_table2(args) -> None:
    _, _, network, _, _ = _models()
    rows = network.table2(args.hb)
    print(md_table(["GPUs", "radix", "tiers SOTA/RO", "switches SOTA", "switches RO",
                    "transceivers SOTA", "transceivers RO", "cost saving", "power saving"],
                   [[f"{r['gpus']:,}", r["radix"], f"{r['sota_tiers']}/{r['railonly_tiers']}",
                     f"{r['sota_switches']:,}", f"{r['railonly_switches']:,}",
                     f"{r['sota_transceivers']:,}", f"{r['railonly_transceivers']:,}",
                     f"{100 * r['cost_saving']:.1f} %", f"{100 * r['power_saving']:.1f} %"]
                    for r in rows]), end="")


def cmd_network(args) -> None:
    _, _, network, _, _ = _models()
    r = network.savings(args.gpus, args.radix, args.hb)
    for k, v in r.items():
        print(f"{k:24} {v:,.3f}" if isinstance(v, float) else f"{k:24} {v:,}")


def cmd_a2a(args) -> None:
    collectives, _, _, specs, _ = _models()
    p = specs.get_platform(args.platform)
    opt = collectives.a2a_rail_optimized(args.bytes, args.x, args.y, p.C_F, p.C_S)
    only = collectives.a2a_rail_only(args.bytes, args.x, args.y, p.C_F, p.C_S)
    print(f"rail-optimized (eq 2) {opt * 1e6:12.3f} us")
    print(f"rail-only      (eq 3) {only * 1e6:12.3f} us")
    print(f"overhead              {100 * (only / opt - 1):12.2f} %   (C_S/C_F = "
          f"{100 * collectives.slowdown(p.C_F, p.C_S):.2f} %)")


def _knobs(args):
    _, iteration, _, _, _ = _models()
    d = iteration.DEFAULT
    return iteration.Knobs(
        tp=args.tp or d.tp, zero=d.zero if args.zero is None else args.zero,
        alpha_hb=d.alpha_hb if args.alpha_hb_us is None else args.alpha_hb_us * 1e-6,
        alpha_nic=d.alpha_nic if args.alpha_nic_us is None else args.alpha_nic_us * 1e-6,
        algo=args.algo or d.algo,
        max_micro=d.max_micro if args.max_micro is None else args.max_micro,
        recompute=args.recompute or d.recompute, placement=args.placement or d.placement)


def cmd_search(args) -> None:
    _, iteration, _, specs, _ = _models()
    model, plat = specs.get_model(args.model), specs.get_platform(args.platform)
    if args.hb_gbps is not None:
        plat = plat.with_(C_F=args.hb_gbps * GBPS)
    if args.nic_gbps is not None:
        plat = plat.with_(C_S=args.nic_gbps * GBPS)
    if args.efficiency is not None:
        plat = plat.with_(efficiency=args.efficiency)
    knobs = _knobs(args)
    hb = args.hb or plat.hb
    res = iteration.search(model, plat, args.gpus, args.batch, hb=hb, knobs=knobs,
                           network=args.network if hb < args.gpus else "rail-optimized")
    s = res["strategy"]
    print(f"{model.name} on {args.gpus:,} x {plat.name} (HB {hb}, {args.network}), batch "
          f"{args.batch}: {res['count']:,} strategies fit")
    print(f"knobs: {knobs.describe()}; compute efficiency "
          f"{iteration.efficiency_of(plat, knobs):.3f}")
    print(f"best: t={s.t} p={s.p} d={s.d} b={s.b} v={s.v}; in HB t_h={s.t_h} p_h={s.p_h} "
          f"d_h={s.d_h}")
    for k, v in res["terms"].items():
        print(f"  {k:12} {v:12.4f}" + (" s" if k not in ("m",) else ""))
    print(f"HFU {100 * iteration.hfu(model, plat, args.gpus, args.batch, res['time']):.1f} %")


def iteration_defaults() -> str:
    _, iteration, _, _, _ = _models()
    return iteration.DEFAULT.describe()


def cmd_sensitivity(args) -> None:
    from aifabric.models.railonly import experiments as ex
    bands = ex.sweep_bands()
    print(f"defaults: {iteration_defaults()}")
    for rec in ex.sweep_records(bands):
        band = rec.note[rec.note.index("band"):]
        print(f"{rec.id:26} paper {rec.printed:>5} %  model {rec.model_value:5.1f} %  "
              f"({rec.status}); {band}")


def cmd_fig7(args) -> None:
    from aifabric.models.railonly import experiments as ex
    _, iteration, _, _, _ = _models()
    rows = ex.fig7()
    print(f"one compute efficiency {rows[0]['efficiency']:.3f} of peak, fitted on GPT-1T "
          f"with full recomputation ({iteration.CALIBRATION.time_full} s on 512 A100s)")
    for r in rows:
        print(f"{r['model']:9} measured HFU {100 * r['from_time']:5.1f} %  predicted "
              f"{100 * r['model_hfu']:5.1f} %  error {100 * r['error']:5.1f} %")


def cmd_traffic(args) -> None:
    _, _, _, specs, traffic = _models()
    mats = traffic.megatron_traffic(specs.get_model(args.model), args.gpus, args.batch, args.t,
                                    args.p, micro=args.micro, hb=args.hb)
    s = traffic.summary(mats, args.hb)
    print(f"total {s['total'] / 1e12:.2f} TB per iteration over {s['gpus']:,} GPUs")
    for k in mats:
        print(f"  {k}: {100 * s['share'][k]:6.2f} % of bytes, "
              f"{100 * s['pairs_with'][k]:.4f} % of pairs")
    print(f"pairs with no traffic {100 * s['no_traffic']:.3f} %; bytes inside HB domains "
          f"{100 * s['hb_share']:.2f} %, same rail {100 * s['rail_share']:.2f} %, other "
          f"{100 * s['other_share']:.2f} %")


def main(argv=None) -> int:
    parser = Parser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("table2", help="Table II rebuilt")
    p.add_argument("--hb", type=int, default=256, help="GPUs per HB domain (default 256).")
    p = sub.add_parser("network", help="one Rail-optimized vs Rail-only comparison")
    p.add_argument("--gpus", type=int, required=True, help="GPUs in the cluster.")
    p.add_argument("--radix", type=int, required=True, help="Switch radix in ports.")
    p.add_argument("--hb", type=int, default=8, help="GPUs per HB domain (default 8).")
    p = sub.add_parser("a2a", help="all-to-all time, eq 2 vs eq 3")
    p.add_argument("--x", type=int, required=True, help="GPUs per HB domain")
    p.add_argument("--y", type=int, required=True, help="HB domains")
    p.add_argument("--bytes", type=float, default=1e6, help="bytes per GPU pair")
    p.add_argument("--platform", default="dgx-h100",
                   help="The platform whose bandwidths are used (default dgx-h100).")
    p = sub.add_parser("search", help="best parallelisation (eq 6-11)")
    p.add_argument("--model", required=True, help="The model, e.g. gpt-1t.")
    p.add_argument("--gpus", type=int, required=True, help="GPUs in the cluster.")
    p.add_argument("--batch", type=int, required=True, help="Global batch size in sequences.")
    p.add_argument("--hb", type=int, help="GPUs per HB domain (default: the platform's).")
    p.add_argument("--platform", default="dgx-gh200",
                   help="The platform whose bandwidths are used (default dgx-gh200).")
    p.add_argument("--hb-gbps", type=float,
                   help="HB-domain bandwidth per GPU in Gb/s (default: the platform's).")
    p.add_argument("--nic-gbps", type=float,
                   help="NIC bandwidth per GPU in Gb/s (default: the platform's).")
    p.add_argument("--network", choices=("rail-only", "rail-optimized"), default="rail-only",
                   help="The network between HB domains (default rail-only).")
    p.add_argument("--tp", choices=("any", "hb"), help="TP across HB domains or inside only")
    p.add_argument("--zero", type=int, choices=(0, 1), help="optimizer-state sharding")
    p.add_argument("--alpha-hb-us", type=float, help="latency per HB collective step (us)")
    p.add_argument("--alpha-nic-us", type=float, help="latency per NIC collective step (us)")
    p.add_argument("--algo", choices=("tree", "ring"), help="collective latency schedule")
    p.add_argument("--max-micro", type=int, help="largest micro-batch searched")
    p.add_argument("--recompute", choices=("selective", "full", "none"),
                   help="Activation recomputation (default: the search's).")
    p.add_argument("--placement", choices=("snake", "linear"), help="pipeline stage order")
    p.add_argument("--efficiency", type=float,
                   help="compute efficiency (default: the one calibrated on GPT-1T)")
    sub.add_parser("sensitivity", help="Figs 8-10 records with their band over the knobs")
    sub.add_parser("fig7", help="Fig 7: one calibrated efficiency vs the measured HFUs")
    p = sub.add_parser("traffic", help="traffic summary of a Megatron run")
    p.add_argument("--model", required=True, help="The model, e.g. gpt-1t.")
    for name, what in (("gpus", "GPUs in the run."), ("batch", "Global batch size in sequences."),
                       ("t", "Tensor-parallel degree."), ("p", "Pipeline-parallel degree.")):
        p.add_argument(f"--{name}", type=int, required=True, help=what)
    p.add_argument("--micro", type=int, default=1, help="Micro-batch size in sequences (default 1).")
    p.add_argument("--hb", type=int, default=8, help="GPUs per HB domain (default 8).")
    args = parser.parse_args(argv)
    for name in ("hb_gbps", "nic_gbps", "bytes"):
        v = getattr(args, name, None)
        if v is not None and not v > 0:
            raise UsageError(f"--{name.replace('_', '-')} must be > 0, not {v!r}")
    for name in ("alpha_hb_us", "alpha_nic_us"):
        v = getattr(args, name, None)
        if v is not None and not 0 <= v < 1e6:
            raise UsageError(f"--{name.replace('_', '-')} must be >= 0 (microseconds), "
                             f"not {v!r}")
    try:
        {"table2": cmd_table2, "network": cmd_network, "a2a": cmd_a2a, "search": cmd_search,
         "traffic": cmd_traffic, "sensitivity": cmd_sensitivity,
         "fig7": cmd_fig7}[args.cmd](args)
    except ValueError as e:
        raise UsageError(str(e)) from None
    return 0


if __name__ == "__main__":
    run_main(main)
