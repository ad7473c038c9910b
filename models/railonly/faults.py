"""HB-domain failure policies of a Rail-only cluster (§IV-C), simulated over a GPU fault trace.

A job uses ``job_domains`` HB domains of ``hb`` GPUs; the cluster has ``spare_domains`` more.
GPUs fail independently: each alternates exponential up times (mean ``mtbf`` hours) and
exponential repairs (mean ``mttr`` hours). Policies when a GPU of a job's HB domain fails:

- ``"migrate"``: the job moves the whole HB domain's work to a healthy idle domain; a domain
  with any failed GPU is unusable. Capacity kept = min(job domains, healthy domains) / job
  domains.
- ``"optical"``: optical switches between GPUs and rail switches let an idle GPU of the same
  HB domain take the failed GPU's place (and its rail port). Each domain keeps ``spares``
  GPUs idle for that (the job uses hb - spares per domain); a domain is usable while at most
  ``spares`` of its GPUs are down; unusable domains are replaced as with migration.
- ``"none"``: no spare domains and no spare GPUs: the job runs only on its own fully healthy
  domains.

Capacity is the job's usable GPUs over its nominal GPUs, sampled every ``step`` hours; all
policies see the same trace.
"""

from __future__ import annotations

import numpy as np

__all__ = ["fault_trace", "capacity", "POLICIES"]

POLICIES = ("none", "migrate", "optical")


def fault_trace(gpus: int, hours: float, *, mtbf: float, mttr: float, step: float = 1.0,
                seed: int = 0) -> np.ndarray:
    """Boolean array [samples, gpus]: True where the GPU is down at that sample time.
    The steady-state fault ratio is mttr / (mtbf + mttr)."""
    for name, v in (("hours", hours), ("mtbf", mtbf), ("mttr", mttr), ("step", step)):
        if not v > 0:
            raise ValueError(f"{name} must be > 0, not {v!r}")
    if isinstance(gpus, bool) or not isinstance(gpus, int) or gpus < 1:
        raise ValueError(f"gpus must be an int >= 1, not {gpus!r}")
    rng = np.random.default_rng(seed)
    times = np.arange(0.0, hours, step)
    down = np.zeros((len(times), gpus), dtype=bool)
    ratio = mttr / (mtbf + mttr)
    for g in range(gpus):
        now = 0.0
        up = rng.random() >= ratio   # start in the steady state
        while now < hours:
            dur = rng.exponential(mtbf if up else mttr)
            if not up:
                down[(times >= now) & (times < now + dur), g] = True
            now += dur
            up = not up
    return down


def capacity(down: np.ndarray, hb: int, job_domains: int, *, policy: str,
             spare_domains: int = 0, spares: int = 0) -> np.ndarray:
    """Fraction of the job's nominal GPUs usable at each sample of ``down`` (from
    :func:`fault_trace` over ``(job_domains + spare_domains) * hb`` GPUs)."""
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {', '.join(POLICIES)}, not {policy!r}")
    domains = job_domains + (spare_domains if policy != "none" else 0)
    if down.shape[1] < domains * hb:
        raise ValueError(f"trace has {down.shape[1]} GPUs; the cluster needs "
                         f"{domains * hb}")
    if not 0 <= spares < hb:
        raise ValueError(f"spares must be in [0, {hb}), not {spares!r}")
    failed = down[:, :domains * hb].reshape(len(down), domains, hb).sum(axis=2)
    allowed = spares if policy == "optical" else 0
    usable = (failed <= allowed).sum(axis=1)
    return np.minimum(usable, job_domains) / job_domains
