"""The HPCC ns-3 inputs written from a §8.1 matrix (models/chronos/ns3.py)."""

import numpy as np
import pytest

from aifabric.models.chronos.ns3 import completion_s, write_inputs
from aifabric.models.chronos.roce import hpcc_dcqcn, zhu_reaction_point


def test_inputs_for_a_two_host_matrix(tmp_path):
    d = np.array([[0, 5_000], [12_345, 0]])
    cfg = write_inputs(d, hpcc_dcqcn(), tmp_path)
    topo = (tmp_path / "topology.txt").read_text().splitlines()
    assert topo == ["3 1 2", "2", "0 2 800Gbps 250ns 0", "1 2 800Gbps 250ns 0"]
    flows = (tmp_path / "flow.txt").read_text().splitlines()
    assert flows == ["2", "0 1 3 100 5000 2.000000000", "1 0 3 100 12345 2.000000000"]
    conf = dict(line.split(" ", 1) for line in cfg.read_text().splitlines())
    # run.py --cc dcqcn at 800 Gb/s: 100 KB x 800/25 and 400 KB x 800/25, 16 MB x 800/50
    assert conf["KMIN_MAP"] == "1 800000000000 3200"
    assert conf["KMAX_MAP"] == "1 800000000000 12800"
    assert conf["BUFFER_SIZE"] == "256"
    assert (conf["RP_TIMER"], conf["RATE_AI"], conf["FAST_RECOVERY_TIMES"]) == \
        ("300", "160Mb/s", "1")


def test_a_setting_ns3_cannot_run_is_refused(tmp_path):
    with pytest.raises(ValueError, match="no byte counter"):
        write_inputs(np.ones((2, 2)), zhu_reaction_point(), tmp_path)


def test_completion_is_the_last_flow_end(tmp_path):
    f = tmp_path / "fct.txt"
    f.write_text("0b000001 0b000101 10000 100 5000 2000000000 1500 1000\n"
                 "0b000101 0b000001 10000 100 9000 2000000100 2400 2000\n")
    assert completion_s(f) == pytest.approx(2_500e-9)
