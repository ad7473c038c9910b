"""Inputs for HPCC's ns-3 (github.com/alibaba-edu/High-Precision-Congestion-Control, the
simulator Chronos §8.1 used) from a §8.1 byte matrix and a :class:`~.roce.RoCE` setting, and
its completion time back: the cross-check of :mod:`.roce`'s engine on the same matrices.

:func:`write_inputs` writes, into one directory, ``topology.txt`` (``n`` hosts on one switch,
node ``n``; every link at ``link_bps`` with ``rtt_s / 4`` of delay), ``flow.txt`` (one flow per
non-zero entry, priority group 3, all starting at :data:`START_S` as ``run.py``'s traces do),
``trace.txt`` (no node traced) and ``config.txt`` (the keys ``simulation/scratch/third.cc``
reads, with ``run.py``'s values for everything a :class:`~.roce.RoCE` does not set: CC_MODE 1
(DCQCN, Mellanox), dynamic PFC, one ACK per packet at high priority, rate bound on). Run it as
``./waf --run 'scratch/third DIR/config.txt'`` in the ns-3 tree. :func:`completion_s` reads
the FCT file it writes (``sip dip sport dport size start_ns fct_ns standalone_ns`` per flow):
the last flow's end minus :data:`START_S`. ns-3 ends a flow when its last ACK is back, so its
completion is half a round trip (plus an ACK) later than :mod:`.roce`'s last byte received.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from .roce import RoCE

__all__ = ["START_S", "write_inputs", "completion_s", "config_text"]

START_S = 2.0                  # run.py's traces start their flows at 2 s
PRIORITY = 3                   # the data priority group of run.py's flow files


def _rate(bps: float) -> str:
    return f"{bps / 1e6:.10g}Mb/s"


def config_text(cfg: RoCE, n: int, directory: Path) -> str:
    """``config.txt`` for ``third.cc``: the DCQCN, ECN, PFC and buffer of ``cfg``; the
    marking thresholds as run.py gives them (KB, keyed by the link rate in bit/s)."""
    if cfg.pfc != "dynamic" or cfg.byte_counter_bytes or cfg.cnp_interval_s \
            or cfg.rate_on_first_cnp != 1 or cfg.clamp_target or not cfg.ack_bytes \
            or cfg.switch_ack_first:
        raise ValueError("HPCC's ns-3 has dynamic PFC, no byte counter, a CNP on every marked "
                         "packet, rate 1 x on the first CNP, no target clamp and ACKs queued "
                         "with data at the switch; this RoCE setting differs")
    bw = int(cfg.link_bps)
    d = Path(directory)
    keys = [
        ("ENABLE_QCN", 1 if cfg.ecn else 0), ("USE_DYNAMIC_PFC_THRESHOLD", 1),
        ("PACKET_PAYLOAD_SIZE", int(cfg.mtu)),
        ("TOPOLOGY_FILE", d / "topology.txt"), ("FLOW_FILE", d / "flow.txt"),
        ("TRACE_FILE", d / "trace.txt"), ("TRACE_OUTPUT_FILE", d / "mix.tr"),
        ("FCT_OUTPUT_FILE", d / "fct.txt"), ("PFC_OUTPUT_FILE", d / "pfc.txt"),
        ("SIMULATOR_STOP_TIME", f"{START_S + 2:.2f}"),
        ("CC_MODE", 1),
        ("ALPHA_RESUME_INTERVAL", f"{cfg.alpha_timer_s * 1e6:g}"),
        ("RATE_DECREASE_INTERVAL", f"{cfg.decrease_timer_s * 1e6:g}"),
        ("CLAMP_TARGET_RATE", 0), ("RP_TIMER", f"{cfg.increase_timer_s * 1e6:g}"),
        ("EWMA_GAIN", f"{cfg.g:.10g}"), ("FAST_RECOVERY_TIMES", int(cfg.fast_recovery)),
        ("RATE_AI", _rate(cfg.r_ai)), ("RATE_HAI", _rate(cfg.r_hai)),
        ("MIN_RATE", _rate(cfg.min_rate)), ("DCTCP_RATE_AI", "1000Mb/s"),
        ("ERROR_RATE_PER_LINK", "0.0000"), ("L2_CHUNK_SIZE", 4000), ("L2_ACK_INTERVAL", 1),
        ("L2_BACK_TO_ZERO", 0), ("HAS_WIN", 0), ("GLOBAL_T", 1), ("VAR_WIN", 0),
        ("FAST_REACT", 0), ("U_TARGET", 0.95), ("MI_THRESH", 0), ("INT_MULTI", 1),
        ("MULTI_RATE", 0), ("SAMPLE_FEEDBACK", 0), ("PINT_LOG_BASE", 1.01),
        ("PINT_PROB", 1.0), ("RATE_BOUND", 1), ("ACK_HIGH_PRIO", 1), ("LINK_DOWN", "0 0 0"),
        ("ENABLE_TRACE", 0),
        # whole KB (third.cc reads an integer and multiplies it by 1,000)
        ("KMAX_MAP", f"1 {bw} {round(cfg.k_max / 1e3)}"),
        ("KMIN_MAP", f"1 {bw} {round(cfg.k_min / 1e3)}"),
        ("PMAX_MAP", f"1 {bw} {cfg.p_max:.10g}"),
        ("BUFFER_SIZE", round(cfg.buffer_bytes / 2**20)),      # whole MiB
        ("QLEN_MON_FILE", d / "qlen.txt"),
        # after the stop time: no queue-length sampling
        ("QLEN_MON_START", int((START_S + 3) * 1e9)), ("QLEN_MON_END", int((START_S + 4) * 1e9)),
    ]
    return "".join(f"{k} {v}\n" for k, v in keys)


def write_inputs(demand, cfg: RoCE, directory) -> Path:
    """The four input files for ``demand`` (n x n bytes) at ``cfg`` in ``directory``; returns
    the config's path."""
    d = np.asarray(demand)
    if d.ndim != 2 or d.shape[0] != d.shape[1] or (d < 0).any():
        raise ValueError(f"'demand' must be a square matrix of byte counts >= 0, not shape "
                         f"{d.shape}")
    n = d.shape[0]
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    delay_ns = cfg.delay * 1e9
    links = [f"{h} {n} {cfg.link_bps / 1e9:g}Gbps {delay_ns:g}ns 0" for h in range(n)]
    (out / "topology.txt").write_text(f"{n + 1} 1 {n}\n{n}\n" + "\n".join(links) + "\n")
    src, dst = np.nonzero(d)
    flows = [f"{i} {j} {PRIORITY} 100 {int(d[i, j])} {START_S:.9f}" for i, j in zip(src, dst)]
    (out / "flow.txt").write_text(f"{len(flows)}\n" + "\n".join(flows) + "\n")
    (out / "trace.txt").write_text("0\n")
    path = out / "config.txt"
    path.write_text(config_text(cfg, n, out))
    return path


def completion_s(fct_path) -> float:
    """The all-to-all's completion in an ns-3 FCT file: the last flow's end (start + FCT, ns)
    minus :data:`START_S`."""
    ends = [int(f[5]) + int(f[6]) for f in
            (line.split() for line in Path(fct_path).read_text().splitlines()) if len(f) >= 7]
    if not ends:
        raise ValueError(f"{fct_path}: no flow in the FCT file")
    return max(ends) * 1e-9 - START_S


def main(argv=None) -> int:
    """Write ns-3 inputs for §8.1's test matrices: one directory per matrix."""
    from .sec81 import PRESETS, TEST_SEED, matrices
    p = argparse.ArgumentParser(description=main.__doc__)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--preset", choices=list(PRESETS), default="dcqcn")
    p.add_argument("--volume", type=float, default=1.0)
    p.add_argument("--matrices", type=int, default=3)
    a = p.parse_args(argv)
    if not (a.volume > 0 and a.matrices >= 1):
        print("error: --volume must be > 0 and --matrices >= 1", file=sys.stderr)
        return 2
    cfg = PRESETS[a.preset]()
    for k, d in enumerate(matrices(a.matrices, TEST_SEED, a.volume)):
        print(write_inputs(d, cfg, a.out / f"m{k}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
