"""The block registry: every RTL block and the parameter sets it is built and checked at.

The Verilog generator, the co-simulation runner, the synthesis script and the tests all read
this one table, so adding a block is adding one :class:`Block` entry (plus its component in
``rtl/``, its golden model in ``models/`` and its testbench ``cosim/test_<name>.py``).
"""

from __future__ import annotations

import inspect
import json
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version

from ._util import not_elaborated
from .chronos.bvn import BvnEngine
from .chronos.slot_endpoint import SlotEndpoint
from .chronos.slot_fabric import SlotFabric
from .chronos.slot_switch import SlotSwitch
from .chronos.wwfa import WavefrontArbiter
from .optics.deinterleaver import DeinterleaverController
from .optics.ocstrx import OCSTrxController
from .optics.wss import WSSController
from .railx.mesh import RouterMesh
from .railx.railx_mesh import RailXMesh
from .railx.router import Router

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
        at -O0 and its co-simulation, whose time goes to the Python testbench, hardly slows.
    """

    name: str
    component: type
    description: str
    params: tuple
    synth_params: tuple
    cosim_in: str | None = None
    build_opt: str | None = None
    ci_params: tuple | None = None
    model: str | None = None

    @property
    def model_module(self) -> str:
        return self.model or f"models.{self.area}.{self.name}"

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

    def validate(self, params: dict) -> None:
        """Raise the component's own TypeError/ValueError if ``params`` are not allowed."""
        not_elaborated(self.build(params))  # built only to validate

    def verilog(self, params: dict) -> str:
        """Lint-clean Verilog of one parameter set (module name :meth:`instance_name`)."""
        from .verilog import convert
        top, name = self.build(params), self.instance_name(params)
        if hasattr(top, "convert_verilog"):      # a system that instantiates one module often
            return top.convert_verilog(name=name)
        return convert(top, name=name)

    @property
    def area(self) -> str:
        """The RTL area (``rtl/<area>/``): chronos, railx, ..."""
        return self.component.__module__.split(".")[1]

    def vlnv(self, params: dict) -> str:
        """FuseSoC name of one parameter set: ``aifabric:<area>:<instance>:<version>``."""
        return f"aifabric:{self.area}:{self.instance_name(params)}:{VERSION}"

    def fusesoc_core(self, params: dict) -> str:
        """A FuseSoC core description (CAPI2) of the Verilog file :meth:`verilog` writes
        beside it: a ``default`` target (the file and its top module, for any flow) and a
        ``lint`` target (Verilator ``--lint-only -Wall``)."""
        name = self.instance_name(params)
        args = ", ".join(f"{k}={v}" for k, v in params.items())
        desc = json.dumps(f"{self.description} ({args})")
        return (f"CAPI=2:\n"
                f"# Written by aifabric's make verilog beside {name}.v.\n"
                f"name: {self.vlnv(params)}\n"
                f"description: {desc}\n"
                f"filesets:\n"
                f"  rtl:\n"
                f"    files:\n"
                f"      - {name}.v\n"
                f"    file_type: verilogSource\n"
                f"targets:\n"
                f"  default:\n"
                f"    filesets: [rtl]\n"
                f"    toplevel: {name}\n"
                f"  lint:\n"
                f"    flow: lint\n"
                f"    flow_options:\n"
                f"      tool: verilator\n"
                f"      verilator_options: [-Wall]\n"
                f"    filesets: [rtl]\n"
                f"    toplevel: {name}\n")


BLOCKS: dict[str, Block] = {b.name: b for b in [
    Block(
        name="wwfa",
        component=WavefrontArbiter,
        description="wrapped wave-front arbiter (Tamir & Chi 1993), N x N, registered grants",
        params=({"n": 4}, {"n": 8}, {"n": 16}, {"n": 64}),
        synth_params=({"n": 8}, {"n": 16}, {"n": 32}),
    ),
    Block(
        name="bvn",
        component=BvnEngine,
        description="BhaVaN-style BvN engine: N x N W-bit matrix -> (permutation, weight) steps",
        # N = 64 at W = 10: slot counts of a budget up to 1,023 slots (quantised MoE, §6/§8);
        # the unquantised W = 16 engine is built by `make bench` for its comparison.
        # N = 16 loads four rows per beat (the wide load), the others one.
        params=({"n": 8, "w": 8}, {"n": 16, "w": 32, "rows": 4}, {"n": 64, "w": 10}),
        # N = 32 at W = 16 needs about 93-96k LUT4 against the LFE5U-85F's 83,640; N = 64 is
        # about four times that and is left out (Yosys alone would run for hours).
        synth_params=({"n": 8, "w": 16}, {"n": 16, "w": 16}, {"n": 32, "w": 16},
                      {"n": 16, "w": 10}, {"n": 32, "w": 10}),
        # N = 64 (60 MB of C++): the CI-sized co-simulation in 370 s at -O0, 499 s at -O1
        # (its 60,000 steps: 126 s against 108 s)
        build_opt="-O0",
    ),
    Block(
        name="slot_switch",
        component=SlotSwitch,
        description="slot master, ping echo, stack sequencer and N x N scheduled crossbar",
        params=({"n": 8, "d": 32, "depth": 64, "hold_bits": 16},),
        synth_params=({"n": 8, "d": 32, "depth": 64, "hold_bits": 16},
                      {"n": 32, "d": 32, "depth": 256, "hold_bits": 16}),
        cosim_in="slot_fabric",
    ),
    Block(
        name="slot_endpoint",
        component=SlotEndpoint,
        description="endpoint slot timer: start-up ping, send window, missed-sync flag",
        params=({"d": 32},),
        synth_params=({"d": 32},),
        cosim_in="slot_fabric",
    ),
    Block(
        name="slot_fabric",
        component=SlotFabric,
        description="test fabric: slot_switch + N slot_endpoints over run-time fibre delays",
        # N = 3 and 5: destinations that do not fill their field (an output >= N can be sent)
        params=({"n": 3, "d": 16, "depth": 16, "hold_bits": 8},
                {"n": 5, "d": 16, "depth": 16, "hold_bits": 8},
                {"n": 8, "d": 32, "depth": 64, "hold_bits": 8}),
        synth_params=(),
    ),
    Block(
        name="router",
        component=Router,
        description="RailX chip router: P ports, V VCs, credits, virtual cut-through, "
                    "run-time routing table",
        # 1,296+ chips need 11 destination bits; packets of up to 8 flits in 16-flit buffers
        params=tuple({"ports": p, "vcs": v, "depth": 16, "data": 64, "dst_width": 11,
                      "packet": 8, "allocator": a}
                     for p, v, a in ((5, 2, "separable"), (5, 4, "separable"),
                                     (8, 3, "separable"), (6, 2, "wavefront"))),
        synth_params=tuple({"ports": p, "vcs": v, "depth": 16, "data": 64, "dst_width": 11,
                            "packet": 8, "allocator": "separable"}
                           for p, v in ((5, 2), (5, 4), (8, 3))),
        build_opt="-O0",       # builds in three quarters of the time; the bench is Python-bound
    ),
    Block(
        name="mesh",
        component=RouterMesh,
        description="k x k mesh of routers (links of `delay` cycles), edge and rail ports "
                    "brought out",
        # a rail port per chip (brought out, tied off) and two-cycle links; the wave-front
        # allocator is co-simulated in the router's own bench
        params=({"k": 4, "ports": 6, "vcs": 2, "depth": 16, "data": 64, "dst_width": 4,
                 "packet": 8, "delay": 2, "allocator": "separable"},),
        synth_params=(),
        build_opt="-O0",       # 5-8 MB of Verilog: 1.5 instead of 3 minutes to build
    ),
    Block(
        name="railx_mesh",
        component=RailXMesh,
        description="RailX 2D-HyperX of side x side nodes of 2 x 2 chip routers: on-package "
                    "mesh links and optical rails of Table 5's delays",
        # 3 x 3 nodes, n = 1 (two rails per dimension: side - 1 = 2 rail rings), 36 chips;
        # Algorithm 1 needs three VCs (one per phase)
        params=({"side": 3, "n": 1, "vcs": 3, "depth": 8, "data": 48, "packet": 4,
                 "mesh_delay": 1, "rail_delay": 10, "allocator": "separable"},),
        synth_params=(),
        build_opt="-O0",
        model="models.railx.netsim",
    ),
    Block(
        name="ocstrx",
        component=OCSTrxController,
        description="InfiniteHBD OCS transceiver controller: path MZIs, N x N Benes matrix, "
                    "heater calibration, settle, link check, failover",
        # short timers for the regression (the random test sets settle/debounce/window at
        # run time); G = 3 leaves group numbers that do not exist below 2^g
        params=({"lanes": 8, "groups": 2, "code_bits": 8, "timer_bits": 8, "settle": 5},
                {"lanes": 4, "groups": 3, "code_bits": 6, "timer_bits": 6, "settle": 3},
                {"lanes": 8, "groups": 3, "code_bits": 6, "timer_bits": 7, "settle": 3}),
        # 1 ms at 100 MHz = 100,000 cycles of settle (T = 20)
        synth_params=({"lanes": 8, "groups": 2, "code_bits": 12, "timer_bits": 20,
                       "settle": 100_000},),
        # N = 8 (the lower Benes sub-network's element offset is invisible at N = 4), G = 3
        # (group numbers that do not exist below 2^g), T = 7 (timings drawn up to 127: a
        # counter cut to 6 bits wraps)
        ci_params=({"lanes": 8, "groups": 3, "code_bits": 6, "timer_bits": 7, "settle": 3},),
        model="models.infinitehbd.ocstrx",
    ),
    Block(
        name="wss",
        component=WSSController,
        description="Flex-SiPAC wavelength-selective switch controller: staged columns, "
                    "checked commit (crosstalk, own port, budgets), ring drive, settle",
        # r = 5: port numbers that do not exist fit the port field (RANGE errors)
        params=({"ports": 4, "wavelengths": 8, "timer_bits": 6, "settle": 3},
                {"ports": 5, "wavelengths": 6, "timer_bits": 5, "settle": 2}),
        # §6: r = 16, w = 60; 1 ms of settle at 100 MHz
        synth_params=({"ports": 16, "wavelengths": 60, "timer_bits": 20, "settle": 100_000},),
        ci_params=({"ports": 5, "wavelengths": 6, "timer_bits": 5, "settle": 2},),
        model="models.flexsipac.wss",
    ),
    Block(
        name="deinterleaver",
        component=DeinterleaverController,
        description="Flex-SiPAC transceiver de-interleaver cascade controller: per-port "
                    "wavelength split -> unit MZIs, settle",
        # P = 3 with the paper's 60-line comb; P = 4 with an odd comb (uneven halves)
        params=({"ports": 3, "wavelengths": 60, "timer_bits": 5, "settle": 2},
                {"ports": 4, "wavelengths": 13, "timer_bits": 4, "settle": 1}),
        synth_params=({"ports": 3, "wavelengths": 60, "timer_bits": 20, "settle": 100_000},
                      {"ports": 4, "wavelengths": 60, "timer_bits": 20, "settle": 100_000}),
        model="models.flexsipac.transceiver",
    ),
]}


def get_block(name: str) -> Block:
    try:
        return BLOCKS[name]
    except KeyError:
        raise ValueError(f"unknown block {name!r}; blocks are {', '.join(BLOCKS)}") from None
