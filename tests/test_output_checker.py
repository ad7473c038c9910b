"""The router and mesh testbenches' output rules (``cosim.noc.OutputChecker``), on flit
streams written by hand: a well-formed stream passes; each broken rule fails with its own
message, naming the cycle, the port, the VC, the packet and the flit."""

import pytest

from aifabric.cosim.noc import OutputChecker, Payload

PAY = Payload(dst_width=4, packet=8)


def flit(pid, seq, length, vc=0, dst=3):
    """(head, tail, vc, data) of flit ``seq`` of packet ``pid``."""
    return (seq == 0, seq == length - 1, vc, PAY.data(pid, seq, dst, length))


def run(stream, interleave=False):
    chk = OutputChecker("port 2", PAY, interleave=interleave)
    for cycle, f in enumerate(stream):
        chk.check(cycle, f)
    return chk


def test_well_formed_streams_pass():
    # two VCs interleaved, each contiguous; a one-flit packet
    chk = run([flit(1, 0, 3, vc=0), flit(2, 0, 2, vc=1), flit(1, 1, 3, vc=0),
               flit(2, 1, 2, vc=1), flit(1, 2, 3, vc=0), flit(5, 0, 1, vc=1)])
    assert chk.flits == 6 and chk.open == {}
    # on an ejection port packets may interleave on one VC, each in sequence
    chk = run([flit(1, 0, 2), flit(2, 0, 2), flit(2, 1, 2), flit(1, 1, 2)], interleave=True)
    assert chk.open == {}
    chk = run([flit(1, 0, 3), flit(1, 1, 3)])
    assert chk.open == {0: (1, 2)}          # still open: its tail has not come


@pytest.mark.parametrize("stream,interleave,message", [
    ([flit(1, 0, 2), flit(1, 1, 2), flit(1, 1, 2)], True,
     "cycle 2, port 2 VC 0: packet 1 flit 1 arrived twice"),
    ([(True, False, 0, PAY.data(1, 1, 3, 3))], False,
     "cycle 0, port 2 VC 0: packet 1 flit 1: head flag on a body flit"),
    ([flit(1, 0, 3), flit(2, 0, 3)], False,
     "cycle 1, port 2 VC 0: packet 2 flit 0: a head while packet (1, 1) is still open"),
    ([flit(1, 1, 3)], False,
     "cycle 0, port 2 VC 0: packet 1 flit 1: a body flit with no open packet"),
    ([flit(1, 0, 4), flit(1, 2, 4)], False,
     "cycle 1, port 2 VC 0: packet 1 flit 2: expected (1, 1)"),
    # on a VC (no interleaving) another packet's body flit breaks the first's run
    ([flit(1, 0, 3), flit(2, 1, 3)], False,
     "cycle 1, port 2 VC 0: packet 2 flit 1: expected (1, 1)"),
    ([flit(1, 0, 3, vc=1), flit(1, 1, 3, vc=0)], False,
     "cycle 1, port 2 VC 0: packet 1 flit 1: a body flit with no open packet"),
])
def test_each_broken_rule_fails_with_its_message(stream, interleave, message):
    with pytest.raises(AssertionError) as err:
        run(stream, interleave)
    assert str(err.value) == message


@pytest.mark.parametrize("dst_width,data_bits", [(4, 64), (11, 64), (4, 67)])
def test_payload_round_trips_and_every_data_bit_takes_both_values(dst_width, data_bits):
    """Packet numbers are small and sequential and packets a few flits long: stored plainly,
    the upper bits of those fields (and every bit above them) would never be 1, and a
    datapath bit stuck at 0 there would pass every co-simulation."""
    pay = Payload(dst_width, 8, data_bits)
    ones, zeros = 0, 0
    for pid in [*range(200), (1 << 24) - 1]:
        for seq in range(4):
            word = pay.data(pid, seq, 3, 4)
            assert pay.ident(word) == (pid, seq)
            assert word < 1 << data_bits
            ones |= word
            zeros |= ~word
    full = (1 << data_bits) - 1
    assert ones & full == full and zeros & full == full
    # the head fields stay where the routers read them
    assert pay.head(pay.data(77, 0, 3, 4)) == (3, 4)


@pytest.mark.parametrize("dst_width,packet,data_bits", [(4, 8, 64), (11, 8, 0), (6, 4, 48),
                                                       (5, 3, 200)])
def test_packet_words_are_the_flits_data(dst_width, packet, data_bits):
    """The per-packet shortcut gives each flit's ``data`` (heads, bodies, the fill above)."""
    pay = Payload(dst_width, packet, data_bits)
    for pid in [0, 1, 2, 77, 1 << 20, (1 << 24) - 1, 1 << 30]:
        for length in range(1, packet + 1):
            dst = pid % (1 << dst_width)
            assert pay.packet_words(pid, dst, length) == \
                [pay.data(pid, s, dst, length) for s in range(length)]
