"""The block registry: every RTL block and the parameter sets it is built and checked at.

The Verilog generator, the co-simulation runner, the synthesis script and the tests all read
this one table, so adding a block is adding one :class:`Block` entry (plus its component in
``rtl/``, its golden model in ``models/`` and its testbench ``cosim/test_<name>.py``).
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version

from ._util import check_param, not_elaborated
from .chronos.bvn import N_RANGE, W_RANGE, BvnEngine
from .chronos.slot_endpoint import SlotEndpoint
from .chronos.slot_fabric import SlotFabric
from .chronos.slot_switch import SlotSwitch
from .chronos.wwfa import N_MAX, N_MIN, WavefrontArbiter
from .optics.deinterleaver import DeinterleaverController
from .optics.ocstrx import OCSTrxController
from .optics.wss import WSSController
from .railx.mesh import RouterMesh
from .railx.railx_mesh import RailXMesh
from .railx.router import PACKET_MAX, Router

__all__ = ["Block", "BLOCKS", "get_block", "VERSION"]

try:
    VERSION = version("aifabric")
except PackageNotFoundError:          # a source tree that was never installed
    VERSION = "0.0.0"


@dataclass(frozen=True)
class Block:
    """One RTL block.

    Attributes
    ----------
    name : str
        The block's name everywhere: ``rtl/<area>/<name>.py``, ``models/<system>/<name>.py``,
        ``cosim/test_<name>.py``.
    component : type
        The ``wiring.Component`` class; its keyword-only constructor arguments are the block's
        parameters.
    description : str
        One line for tables.
    params : tuple of dict
        Default parameter sets: Verilog is generated and co-simulated at each.
    synth_params : tuple of dict
        Parameter sets ``make synth`` reports.
    ranges : dict
        ``{name: (low, high)}`` of every integer parameter, inclusive; a bound that depends on
        other parameters is a function of the parameter set. :meth:`validate` checks these
        before building, ``aifabric blocks`` lists them; the component's own constructor
        checks the same bounds (``tests/test_catalog.py`` holds the two together).
    cosim_in : str or None
        For a block whose testbench is another block's (it is co-simulated as part of that
        block): that block's name. The regression runs only blocks with their own testbench.
    model : str or None
        The golden model's module where it is not ``models.<area>.<name>`` (the optics
        controllers' models live with the system that uses them).
    ci_params : tuple of dict or None
        The parameter sets ``make test`` co-simulates (None: all of ``params``), where the
        others add sizes but no case the CI set misses; ``make`` runs every set.
    build_opt : str or None
        gcc optimisation of the Verilated model's per-cycle C++ (``OPT_FAST``), where the
        runner's default (-O1) does not suit: a model of many MB compiles in half the time
        at -O0 and its co-simulation, start-up and Python testbench included, hardly slows.
    ci_transactions : tuple of (dict, int)
        Transaction budgets ``make test`` gives the co-simulation (``AIFABRIC_TRANSACTIONS``)
        instead of the testbench's default: a parameter set that has every item of a pair's
        dict gets the first such pair's count. ``make`` runs every testbench's default.
    formal : bool
        The block has a formal harness, ``cosim/formal/<name>.py`` (``make formal``).
    hierarchical : bool
        Co-simulate with Verilator's hierarchical build: each submodule of the generated
        Verilog (a system of identical routers has one) is Verilated and compiled once, where
        the flat build schedules and compiles every instance's logic apart. For systems of
        many instances of one block whose Verilog keeps the instances' module (the mesh's
        and RailX's ``convert_verilog``); a waveform build stays flat (it records every
        instance's signals).
    """

    name: str
    component: type
    description: str
    params: tuple
    synth_params: tuple
    ranges: Mapping
    cosim_in: str | None = None
    build_opt: str | None = None
    ci_params: tuple | None = None
    model: str | None = None
    ci_transactions: tuple = ()
    formal: bool = False
    hierarchical: bool = False

    @property
    def model_module(self) -> str:
        return self.model or f"aifabric.models.{self.area}.{self.name}"

    def ci_budget(self, params: Mapping) -> int | None:
        """The transaction budget ``make test`` co-simulates ``params`` with (None: the
        testbench's default)."""
        for match, count in self.ci_transactions:
            if all(params.get(k) == v for k, v in match.items()):
                return count
        return None

    @property
    def param_names(self) -> tuple[str, ...]:
        sig = inspect.signature(self.component.__init__)
        return tuple(p.name for p in sig.parameters.values() if p.kind is p.KEYWORD_ONLY)

    def instance_name(self, params: dict) -> str:
        """Verilog module (and file) name of one parameter set, e.g. ``wwfa_n8``."""
        return "_".join([self.name] + [f"{k}{params[k]}" for k in sorted(params)])

    def build(self, params: dict):
        """Instantiate the component; unknown parameter names raise TypeError naming them."""
        unknown = sorted(set(params) - set(self.param_names))
        if unknown:
            raise TypeError(f"{self.name}: unknown parameter {unknown[0]!r}; "
                            f"parameters are {', '.join(self.param_names)}")
        return self.component(**params)

    def header(self, params: dict) -> str:
        """The comment ``aifabric verilog`` puts on top of a generated file: the package
        version, the source revision, the block and its parameters."""
        from aifabric.paths import source_revision
        args = ", ".join(f"{k}={v}" for k, v in params.items()) or "none"
        return (f"// {self.instance_name(params)}: {self.description}\n"
                f"// Generated by aifabric {VERSION} (source {source_revision()}): block "
                f"{self.name}, parameters {args}.\n"
                f"// Do not edit: regenerate with `aifabric verilog --block {self.name}"
                + "".join(f" --param {k}={v}" for k, v in params.items()) + "`.\n")

    def range_of(self, name: str, params: Mapping) -> tuple[int, int] | tuple[None, None]:
        """``(low, high)`` of parameter ``name`` in the set ``params`` (its dependent bounds
        evaluated there); (None, None) for a parameter without a range (a name, a flag)."""
        bounds = self.ranges.get(name)
        if bounds is None:
            return None, None
        low, high = (b(params) if callable(b) else b for b in bounds)
        return low, high

    def describe(self) -> dict:
        """What ``aifabric blocks`` prints: name, area, description, each parameter with its
        range (at the first default set) and its default, and the default parameter sets."""
        base = dict(self.params[0]) if self.params else {}
        sig = inspect.signature(self.component.__init__).parameters
        defaults = {name: base.get(name, None if sig[name].default is inspect.Parameter.empty
                                   else sig[name].default) for name in self.param_names}
        out = []
        for name in self.param_names:
            low, high = self.range_of(name, defaults)
            out.append({"name": name, "low": low, "high": high, "default": defaults[name]})
        return {"name": self.name, "area": self.area, "description": self.description,
                "parameters": out, "params": [dict(p) for p in self.params]}

    def validate(self, params: dict):
        """Raise TypeError/ValueError if ``params`` are not allowed: an unknown name, a value
        outside :attr:`ranges` (the bounds that depend on others checked after those), then
        whatever else the component's constructor refuses (a lane count that is not a power of
        two, an unknown allocator). Returns the component it built to check them (not
        elaborated), so a caller that goes on to use it need not build it again."""
        unknown = sorted(set(params) - set(self.param_names))
        if unknown:
            raise TypeError(f"{self.name}: unknown parameter {unknown[0]!r}; "
                            f"parameters are {', '.join(self.param_names)}")
        sig = inspect.signature(self.component.__init__).parameters
        full = {name: params.get(name, sig[name].default) for name in self.param_names}
        full = {k: v for k, v in full.items() if v is not inspect.Parameter.empty}
        fixed = [n for n in self.ranges if not any(map(callable, self.ranges[n]))]
        for name in fixed + [n for n in self.ranges if n not in fixed]:
            if name in full:
                check_param(name, full[name], *self.range_of(name, full))
        return not_elaborated(self.build(params))

    def resolve(self, overrides: Mapping | None = None) -> dict:
        """The full parameter set a request stands for: the block's first default set with
        ``overrides`` changed, checked by building the component (names, types, ranges).

        The one place the command line, the Python API and the FuseSoC generator turn "these
        parameters" into a set: ``resolve({"ports": 6})`` of the router is its first default
        set at six ports. Raises TypeError (an unknown name, a wrong type) or ValueError (a
        value out of range), the message starting with the block's name.
        """
        return self.instance(overrides)[0]

    def instance(self, overrides: Mapping | None = None) -> tuple[dict, object]:
        """:meth:`resolve`, and the component it built to check the set: ``(params,
        component)``. A command that goes on to convert or inspect the component uses this one
        (it is built once per command, not once per step)."""
        if overrides is None:
            overrides = {}
        if not isinstance(overrides, Mapping):
            raise TypeError(f"{self.name}: parameters must be a mapping of name to value, "
                            f"not {type(overrides).__name__}")
        unknown = sorted(set(overrides) - set(self.param_names))
        if unknown:
            raise TypeError(f"{self.name}: unknown parameter {unknown[0]!r}; parameters are "
                            f"{', '.join(self.param_names)}")
        params = {**(self.params[0] if self.params else {}), **overrides}
        try:
            top = self.validate(params)
        except (TypeError, ValueError) as e:
            msg = str(e)
            if msg.startswith(self.name):
                raise
            raise type(e)(f"{self.name}: {msg}") from None
        return params, top

    def verilog(self, params: Mapping | None = None, name: str | None = None, *,
                top=None) -> str:
        """Lint-clean Verilog of one parameter set, module ``name`` (default
        :meth:`instance_name`). ``params`` may name only the parameters to change
        (:meth:`resolve`); with ``top``, the component :meth:`instance` built for them,
        ``params`` must be the full set it returned."""
        from .verilog import convert
        if top is None:
            params, top = self.instance(params)
        name = name or self.instance_name(params)
        if hasattr(top, "convert_verilog"):      # a system that instantiates one module often
            return top.convert_verilog(name=name)
        return convert(top, name=name)

    @property
    def area(self) -> str:
        """The RTL area (``rtl/<area>/``): chronos, railx, ..."""
        return self.component.__module__.split(".")[2]


def _timer_max(params):
    """The largest settle time a ``timer_bits`` counter holds."""
    return (1 << params["timer_bits"]) - 1


# the router's, which the meshes built of it share
_ROUTER_RANGES = {"ports": (5, 16), "vcs": (1, 8), "depth": (2, 256), "data": (8, 1024),
                  "dst_width": (1, 16), "packet": (1, PACKET_MAX)}
_STACK_RANGES = {"n": (2, 64), "depth": (2, 1024), "hold_bits": (1, 32)}

BLOCKS: dict[str, Block] = {b.name: b for b in [
    Block(
        name="wwfa",
        component=WavefrontArbiter,
        formal=True,
        ranges={"n": (N_MIN, N_MAX), "band": (0, N_MAX)},
        description="wrapped wave-front arbiter (Tamir & Chi 1993), N x N, pipelined in "
                    "diagonal bands",
        # N = 5 and 15: the rotation counters' field also holds values >= N (a wrap at 2^b
        # instead of N shows), beside the powers of two 8 and 64. N = 5: one band; N = 8: the
        # one-cycle arbiter (band 0); N = 15 in bands of 4 (the last band 3 steps); N = 64 in
        # eight bands of 8.
        params=({"n": 5}, {"n": 8, "band": 0}, {"n": 15, "band": 4}, {"n": 64}),
        # N = 16 at band 0: the one-cycle arbiter the pipelined one is measured against
        synth_params=({"n": 8}, {"n": 16}, {"n": 32}, {"n": 16, "band": 0}),
        # the pipelined N = 64's stage registers: its model compiles in three quarters of the
        # time at -O0, more than its run slows
        build_opt="-O0",
    ),
    Block(
        name="bvn",
        component=BvnEngine,
        # make test: the N = 64 engine checks every kind of frame (random, MoE, quantised MoE,
        # zero, full, bad) but stops drawing random and MoE matrices after this many steps (the
        # 100 quantised ones are always run); `make` runs all 400 matrices
        ci_transactions=(({"n": 64}, 40_000),),
        formal=True,
        ranges={"n": N_RANGE, "w": W_RANGE, "rows": (1, lambda p: p["n"])},
        description="BhaVaN-style BvN engine: N x N W-bit matrix -> (permutation, weight) steps",
        # N = 64 at W = 10: slot counts of a budget up to 1,023 slots (quantised MoE, §6/§8);
        # the unquantised W = 16 engine is built by `make bench` for its comparison.
        # N = 12 loads four rows per beat (the wide load, three beats), the others one. N = 6
        # and 12: destination fields that hold values >= N; W = 9: a width that is not a
        # power of two (the overflow boundary 2^9 in a 32-bit lane).
        params=({"n": 6, "w": 9}, {"n": 12, "w": 32, "rows": 4}, {"n": 64, "w": 10}),
        # N = 32 at W = 16 needs about 93-96k LUT4 against the LFE5U-85F's 83,640; N = 64 is
        # about four times that and is left out (Yosys alone would run for hours).
        synth_params=({"n": 8, "w": 16}, {"n": 16, "w": 16}, {"n": 32, "w": 16}, {"n": 8, "w": 10},
                      {"n": 16, "w": 10}, {"n": 32, "w": 10}),
        # N = 64: the CI-sized co-simulation (ports-only model) in 99 s at -O0 (build 31 s),
        # 104 s at -O1 (build 54 s, the run 18 s shorter)
        build_opt="-O0",
    ),
    Block(
        name="slot_switch",
        component=SlotSwitch,
        formal=True,
        ranges={**_STACK_RANGES, "d": (1, 512)},
        description="slot master, ping echo, stack sequencer and N x N scheduled crossbar",
        params=({"n": 8, "d": 32, "depth": 64, "hold_bits": 16},),
        synth_params=({"n": 8, "d": 32, "depth": 64, "hold_bits": 16},
                      {"n": 32, "d": 32, "depth": 256, "hold_bits": 16}),
        cosim_in="slot_fabric",
    ),
    Block(
        name="slot_endpoint",
        component=SlotEndpoint,
        formal=True,
        ranges={"d": (1, 512), "rtt_bits": (1, 16)},
        description="endpoint slot timer: start-up ping, send window, missed-sync flag",
        params=({"d": 32},),
        synth_params=({"d": 32},),
        cosim_in="slot_fabric",
    ),
    Block(
        name="slot_fabric",
        component=SlotFabric,
        # make test: every scenario, the two long ones (random runs, slots of thousands of
        # cycles) shortened to a fifth of their words (one long slot per configuration)
        ci_transactions=(({}, 20_000),),
        ranges={"n": (2, 16), "d": (1, 64), "depth": (2, 256), "hold_bits": (1, 16),
                "rtt_bits": (1, 16)},
        description="test fabric: slot_switch + N slot_endpoints over run-time fibre delays",
        # N = 3 and 5: destinations that do not fill their field (an output >= N can be sent);
        # depth 7 and 15: stack counters whose field holds values past the last entry; a
        # 7-bit round-trip counter at N = 3: the longest fibre's round trip (129) passes its
        # top (127), so an echo after the top is co-simulated (the others name their 16 bits:
        # a set takes what it leaves out from the first)
        params=({"n": 3, "d": 16, "depth": 7, "hold_bits": 8, "rtt_bits": 7},
                {"n": 5, "d": 16, "depth": 15, "hold_bits": 8, "rtt_bits": 16},
                {"n": 8, "d": 32, "depth": 64, "hold_bits": 8, "rtt_bits": 16}),
        synth_params=(),
    ),
    Block(
        name="router",
        component=Router,
        formal=True,
        # make test: random traffic 200 cycles short of its 15,000, which pays for the
        # directed first grants after a reset
        ci_transactions=(({}, 14_800),),
        ranges=_ROUTER_RANGES,
        description="RailX chip router: P ports, V VCs, credits, virtual cut-through, "
                    "lookahead routing tables loaded at run time",
        # 1,296+ chips need 11 destination bits; packets of up to 8 flits in 16-flit buffers.
        # Depths 7 and 15 beside 16: the buffer pointers wrap at depth and the counters are
        # as wide as depth needs, so a wrap at 2^bits or a counter one bit short shows at
        # one of them; packet 6 at depth 7 leaves a length (7) that the field holds but is
        # too long
        params=tuple({"ports": p, "vcs": v, "depth": d, "data": 64, "dst_width": 11,
                      "packet": n, "allocator": a}
                     for p, v, d, n, a in ((5, 2, 16, 8, "separable"),
                                           (5, 4, 7, 6, "separable"),
                                           (8, 3, 15, 8, "separable"),
                                           (6, 2, 16, 8, "wavefront"))),
        synth_params=tuple({"ports": p, "vcs": v, "depth": 16, "data": 64, "dst_width": 11,
                            "packet": 8, "allocator": "separable"}
                           for p, v in ((5, 2), (5, 4), (8, 3))),
        build_opt="-O0",       # builds in three quarters of the time
    ),
    Block(
        name="mesh",
        component=RouterMesh,
        ranges={"k": (2, 8), **_ROUTER_RANGES, "delay": (1, 16)},
        description="k x k mesh of routers (links of `delay` cycles), edge and rail ports "
                    "brought out",
        # a rail port per chip (brought out, tied off) and two-cycle links; the wave-front
        # allocator is co-simulated in the router's own bench; depth 15, not a power of two
        # (the router's own bench runs 16, 15 and 7)
        params=({"k": 4, "ports": 6, "vcs": 2, "depth": 15, "data": 64, "dst_width": 4,
                 "packet": 8, "delay": 2, "allocator": "separable"},),
        synth_params=(),
        build_opt="-O0",
        hierarchical=True,
    ),
    Block(
        name="railx_mesh",
        component=RailXMesh,
        # make test: every scenario at about a third of its length (12,000 of ~38,000 flits)
        # and 76 path packets of 240
        ci_transactions=(({}, 12_000),),
        ranges={"side": (3, 7), "n": (1, 4), "vcs": _ROUTER_RANGES["vcs"],
                "depth": _ROUTER_RANGES["depth"], "data": _ROUTER_RANGES["data"],
                "packet": _ROUTER_RANGES["packet"], "mesh_delay": (1, 16),
                "rail_delay": (1, 32)},
        description="RailX 2D-HyperX of side x side nodes of 2 x 2 chip routers: on-package "
                    "mesh links and optical rails of Table 5's delays",
        # 3 x 3 nodes, n = 1 (two rails per dimension: side - 1 = 2 rail rings), 36 chips;
        # Algorithm 1 needs three VCs (one per phase)
        params=({"side": 3, "n": 1, "vcs": 3, "depth": 8, "data": 48, "packet": 4,
                 "mesh_delay": 1, "rail_delay": 10, "allocator": "separable"},),
        synth_params=(),
        build_opt="-O0",
        hierarchical=True,
        model="aifabric.models.railx.netsim",
    ),
    Block(
        name="ocstrx",
        component=OCSTrxController,
        formal=True,
        ranges={"lanes": (2, 16), "groups": (1, 8), "code_bits": (1, 16), "timer_bits": (2, 32),
                "settle": (1, _timer_max)},
        description="InfiniteHBD OCS transceiver controller: path MZIs, N x N Benes matrix, "
                    "heater calibration, settle, link check, failover",
        # short timers for the regression (the random test sets settle/debounce/window at
        # run time); G = 3 leaves group numbers that do not exist below 2^g; N = 8 (the lower
        # Benes sub-network's element offset is invisible at N = 4) with T = 7 (timings drawn
        # up to 127: a counter cut to 6 bits wraps)
        params=({"lanes": 8, "groups": 2, "code_bits": 8, "timer_bits": 8, "settle": 5},
                {"lanes": 4, "groups": 3, "code_bits": 6, "timer_bits": 6, "settle": 3},
                {"lanes": 8, "groups": 3, "code_bits": 6, "timer_bits": 7, "settle": 3}),
        # 1 ms at 100 MHz = 100,000 cycles of settle (T = 20)
        synth_params=({"lanes": 8, "groups": 2, "code_bits": 12, "timer_bits": 20,
                       "settle": 100_000},),
        model="aifabric.models.infinitehbd.ocstrx",
    ),
    Block(
        name="wss",
        component=WSSController,
        formal=True,
        ranges={"ports": (2, 32), "wavelengths": (1, 128), "timer_bits": (2, 32),
                "settle": (1, _timer_max), "counter_bits": (1, 32)},
        description="Flex-SiPAC wavelength-selective switch controller: staged columns, "
                    "checked commit (crosstalk, own port, budgets), ring drive, settle",
        # r = 5: port numbers that do not exist fit the port field (RANGE errors); its
        # 5-bit commit counter wraps within the co-simulation (the other set's 16 bits
        # carry up to bit 12)
        params=({"ports": 4, "wavelengths": 8, "timer_bits": 6, "settle": 3},
                {"ports": 5, "wavelengths": 6, "timer_bits": 5, "settle": 2,
                 "counter_bits": 5}),
        # §6: r = 16, w = 60; 1 ms of settle at 100 MHz
        synth_params=({"ports": 16, "wavelengths": 60, "timer_bits": 20, "settle": 100_000},),
        model="aifabric.models.flexsipac.wss",
    ),
    Block(
        name="deinterleaver",
        component=DeinterleaverController,
        formal=True,
        ranges={"ports": (2, 4), "wavelengths": (1, 128), "timer_bits": (2, 32),
                "settle": (1, _timer_max)},
        description="Flex-SiPAC transceiver de-interleaver cascade controller: per-port "
                    "wavelength split -> unit MZIs, settle",
        # P = 3 with the paper's 60-line comb and the front interleaver (Flex-SiPAC's form
        # in the packet-level study: the uniform (20, 20, 20) too); P = 4 with an odd comb
        # (uneven halves), the chain alone
        params=({"ports": 3, "wavelengths": 60, "timer_bits": 5, "settle": 2,
                 "form": "chain_uniform"},
                {"ports": 4, "wavelengths": 13, "timer_bits": 4, "settle": 1, "form": "chain"}),
        synth_params=({"ports": 3, "wavelengths": 60, "timer_bits": 20, "settle": 100_000,
                       "form": "chain_uniform"},
                      {"ports": 4, "wavelengths": 60, "timer_bits": 20, "settle": 100_000,
                       "form": "chain_uniform"}),
        model="aifabric.models.flexsipac.transceiver",
    ),
]}


def get_block(name: str) -> Block:
    try:
        return BLOCKS[name]
    except KeyError:
        raise ValueError(f"unknown block {name!r}; blocks are {', '.join(BLOCKS)}") from None
