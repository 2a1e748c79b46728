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


def test_convert_writes_the_yaml_twin_with_meshes_relative_to_it(tmp_path):
    # A URDF with a mesh, converted into another folder: the text loads as the same model, and the
    # file written keeps the mesh reachable from its own folder.
    robot = tmp_path / "robot"
    (robot / "meshes").mkdir(parents=True)
    (robot / "meshes" / "arm.stl").write_text("solid arm\nendsolid arm\n")
    (robot / "r.urdf").write_text(
        '<robot name="r"><link name="world"/>'
        '<link name="a"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/>'
        '</inertial><visual><geometry><mesh filename="meshes/arm.stl"/></geometry></visual></link>'
        '<joint name="j" type="continuous"><parent link="world"/><child link="a"/></joint></robot>\n')
    out = tmp_path / "out" / "r.yaml"
    out.parent.mkdir()
    text = loopdyn.convert(robot / "r.urdf", out)
    assert "file: " in text
    written = out.read_text()
    assert "file: ../robot/meshes/arm.stl" in written
    a, b = loopdyn.load(robot / "r.urdf"), loopdyn.load(out)
    assert (a.nq, a.nv, a.body_names) == (b.nq, b.nv, b.body_names)


def test_convert_of_a_bad_file_raises_and_writes_nothing(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\nbodies:\n  - {name: a, mass: -1}\n")
    out = tmp_path / "out.yaml"
    with pytest.raises(loopdyn.ModelError):
        loopdyn.convert(bad, out)
    assert not out.exists()
