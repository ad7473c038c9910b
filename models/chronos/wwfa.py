"""The wrapped wave-front arbiter Chronos builds its BhaVaN engine on (§8): the behavioural
model lives in :mod:`models.common.wwfa`, shared with the network simulator's wave-front
switch allocator; this name stays for Chronos and the arbiter RTL's co-simulation."""

from aifabric.models.common.wwfa import (N_MAX, N_MIN, WavefrontArbiter, _check_n,  # noqa: F401
                                _check_requests, arbitrate_reference)

__all__ = ["WavefrontArbiter", "arbitrate_reference", "N_MIN", "N_MAX"]
