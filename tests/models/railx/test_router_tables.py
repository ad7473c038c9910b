"""Routing tables for the router RTL, from the simulator's networks: every entry follows
the simulator's route, and entries the RTL would refuse raise a ValueError naming them."""

import pytest

from aifabric.models.common.netsim import mesh
from aifabric.models.railx import RailX, hyperx_2d
from aifabric.models.railx.netsim import railx
from aifabric.models.railx.router import check_table, table_entries


@pytest.mark.parametrize("make", [lambda: mesh(4, vcs=2),
                                  lambda: railx(hyperx_2d(RailX(2, 1, 8)), vcs=3)])
def test_entries_are_the_simulators_routes(make):
    net = make()
    for r in range(net.routers):
        entries = table_entries(net, r)
        assert len({(row, dst) for row, dst, *_ in entries}) == len(entries)
        for row, dst, port, lo, hi in entries:
            assert port == net.route_port[r, row, dst]
            if port:
                assert (lo, hi) == (net.route_vc_lo[r, row, dst], net.route_vc_hi[r, row, dst])
    # every destination is reachable from every local port (row 0)
    assert all({dst for row, dst, *_ in table_entries(net, r) if row == 0} ==
               set(range(net.routers)) for r in range(net.routers))


@pytest.mark.parametrize("entry,message", [
    ((0, 3, 5, 0, 0), r"table entry 0 \(row 0, destination 3\): port 5 does not exist "
                      r"\(ports 0\.\.4\)"),
    ((2, 3, 1, 0, 0), r"row 2 is not an input VC \(0\.\.1\)"),
    ((0, 3, 1, 1, 2), r"VC range 1\.\.2 is not within 0\.\.1"),
    ((0, 3, 1, 1, 0), r"VC range 1\.\.0 is not within 0\.\.1"),
    ((0, 16, 1, 0, 0), r"destination does not fit 4 bits"),
    ((0, 3, 1), r"expected \(row, destination, port, lowest VC, highest VC\)"),
])
def test_bad_entries_are_refused_by_name(entry, message):
    with pytest.raises(ValueError, match=message):
        check_table([entry], ports=5, vcs=2, dst_width=4)


def test_a_mesh_table_does_not_fit_a_smaller_router():
    with pytest.raises(ValueError, match=r"port 4 does not exist \(ports 0\.\.3\)"):
        table_entries(mesh(3, vcs=1), 4, ports=4)      # the centre router uses all four
