"""Independent runs of one experiment in worker processes.

An experiment whose points do not depend on each other (Chronos' matrices, Flex-SiPAC's
Fig 7-8 points) maps a module-level function over them with :func:`pmap`. The answer
depends only on the points, never on the number of processes: each point carries its own
seed. ``$AIFABRIC_JOBS`` sets the number of processes (default: one per core)."""

from __future__ import annotations

import os
import sys
from concurrent.futures import ProcessPoolExecutor, as_completed

JOBS_ENV = "AIFABRIC_JOBS"


def workers(count: int) -> int:
    """Processes for ``count`` independent runs: ``$AIFABRIC_JOBS`` if set (a positive
    integer, else ValueError naming it), else one per core; never more than ``count``."""
    text = os.environ.get(JOBS_ENV, "").strip()
    if text:
        try:
            jobs = int(text, 10)
        except ValueError:
            jobs = 0
        if jobs < 1:
            raise ValueError(f"{JOBS_ENV} must be a positive integer, not {text!r}")
    else:
        jobs = os.cpu_count() or 1
    return max(1, min(jobs, count))


def progress_bar(items, desc: str, progress: bool, total: int | None = None):
    """``items`` under a tqdm bar on stderr (hidden when ``progress`` is false or stderr is
    not a terminal)."""
    from tqdm import tqdm
    return tqdm(items, desc=desc, total=total, disable=None if progress else True,
                file=sys.stderr)


def pmap(fn, items, desc: str = "", progress: bool = True, warm=None) -> list:
    """``[fn(x) for x in items]``, in :func:`workers` processes (``fn`` and the items must
    pickle), in the order of ``items``. An error in one run is raised here and the runs not
    yet started are cancelled.

    ``warm``: called here, before the processes start, when there are several: a tiny run
    that compiles ``fn``'s numba engine once. On a cold cache every process would otherwise
    compile the same engine at once (up to a minute and a half of CPU each); a process forked
    after it has the compiled code."""
    items = list(items)
    n = workers(len(items))
    if n <= 1:
        return [fn(x) for x in progress_bar(items, desc, progress)]
    if warm is not None:
        warm()
    out: list = [None] * len(items)
    pool = ProcessPoolExecutor(n)
    try:
        futures = {pool.submit(fn, x): k for k, x in enumerate(items)}
        for fut in progress_bar(as_completed(futures), desc, progress, len(items)):
            out[futures[fut]] = fut.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return out
