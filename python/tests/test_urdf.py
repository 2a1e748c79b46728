"""URDF through Python: loopdyn.load reads a .urdf with its <loop_joint> (C++ load_mechanism
dispatches on the extension), and the run is the YAML twin's, written from the same numbers."""
import numpy as np
import pytest

import loopdyn
from conftest import model_path


def test_urdf_robot_simulates_as_its_yaml_twin():
    urdf = loopdyn.load(model_path("robots/fourbar.urdf"))
    yaml = loopdyn.load(model_path("robots/fourbar.yaml"))
    a = loopdyn.simulate(urdf, method="lagrange-dense", t_end=0.5)
    b = loopdyn.simulate(yaml, method="lagrange-dense", t_end=0.5)
    assert a.columns == b.columns
    assert np.ptp(a["q.crank_pivot"]) > 0.1  # the crank swings under gravity
    # The two mechanisms differ by round-off in joint-frame rotations (urdfdom's quaternions), which
    # 500 RK4 steps of a smooth motion keep far below 1e-9.
    np.testing.assert_allclose(a.data, b.data, rtol=0, atol=1e-9)


def test_bad_urdf_is_a_model_error_with_its_line(tmp_path):
    bad = tmp_path / "bad.urdf"
    bad.write_text('<robot name="r">\n<link name="world"/>\n'
                   '<loop_joint name="c" type="ball"><parent link="world"/><child link="world"/></loop_joint>\n'
                   '</robot>\n')
    with pytest.raises(loopdyn.ModelError, match=r"bad.urdf:3: loop_joint 'c': unknown type 'ball'"):
        loopdyn.load(bad)
