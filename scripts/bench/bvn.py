"""bvn (build/bench/bvn.json): BvN decomposition time of "fast", "exact" and "wavefront" for
N = 16..256 on MoE matrices, one thread, against the paper's Table 2 (10x target for "fast")."""

from __future__ import annotations

from .._cli import BUILD, md_table, write_json
from ._common import machine

BVN_NS = (16, 32, 64, 128, 256)


def run(args) -> str:
    """BvN decomposition time per method and N on MoE matrices, one thread; 'exact' and
    'wavefront' are the same-run baselines of 'fast', the paper's Table 2 the reference."""
    from aifabric.models.chronos.experiments import TABLE2, table2
    print("bvn: decomposition time on MoE matrices, one thread...", flush=True)
    res = table2(args.bvn_n, count=args.bvn_matrices)
    rows, out = [], {"name": "bvn", "params": {"n": list(args.bvn_n),
                                                 "matrices": args.bvn_matrices},
                     "machine": machine(), "methods": {}}
    for method, per_n in res.items():
        out["methods"][method] = {str(n): r for n, r in per_n.items()}
    for n in args.bvn_n:
        fast = res["fast"][n]["seconds"]
        target = TABLE2["maximal"][n] / 10
        row = {"n": n, "fast_s": fast, "target_s": target, "meets_10x_target": fast <= target,
               "fast_vs_exact": res["exact"][n]["seconds"] / fast,
               "fast_vs_wavefront": res["wavefront"][n]["seconds"] / fast,
               "paper_maximal_s": TABLE2["maximal"][n], "paper_maximum_s": TABLE2["maximum"][n]}
        out.setdefault("summary", []).append(row)
        rows.append([str(n)] + [f"{res[m][n]['seconds'] * 1e3:.3f}" for m in
                                ("fast", "exact", "wavefront")]
                    + [f"{TABLE2['maximal'][n] * 1e3:g} / {TABLE2['maximum'][n] * 1e3:g}",
                       f"{target * 1e3:.3g} {'yes' if fast <= target else 'NO'}",
                       f"{row['fast_vs_exact']:.1f}x", f"{row['fast_vs_wavefront']:.1f}x",
                       " / ".join(f"{res[m][n]['permutations']:.0f}"
                                  for m in ("fast", "exact", "wavefront")),
                       " / ".join(f"{res[m][n]['makespan_over_lb']:.4f}"
                                  for m in ("fast", "exact", "wavefront"))])
    write_json(BUILD / "bench" / "bvn.json", out)
    return ("## BvN decomposition (ms per matrix, MoE traffic)\n\n"
            + md_table(["N", "fast", "exact", "wavefront", "paper maximal / maximum",
                        "10x target (fast)", "fast vs exact", "fast vs wavefront",
                        "permutations f/e/w", "makespan / LB f/e/w"], rows))
