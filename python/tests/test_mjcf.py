"""MJCF files through loopdyn.load: the importer's notes as warnings, and a run that matches the CLI's."""
import warnings

import numpy as np
import pytest

import loopdyn
from conftest import model_path, read_csv


def test_mjcf_loads_with_its_notes_as_warnings_and_simulates_as_the_cli(cli, tmp_path):
    path = model_path("robots/fourbar.xml")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the robot file collides nothing: no note expected
        model = loopdyn.load(path)
    assert (model.nq, model.nv) == (3, 3)
    out = tmp_path / "run.csv"
    cli("simulate", path, "--t-end", 0.3, "--out", out)
    header, rows = read_csv(out)
    r = loopdyn.simulate(model, t_end=0.3)
    assert r.columns == header
    np.testing.assert_allclose(r.data, rows, rtol=1e-8, atol=1e-9)


def test_mjcf_notes_are_user_warnings():
    with pytest.warns(UserWarning, match="contacts are not modelled"):
        model = loopdyn.load(model_path("mjcf/slider_crank_passive.xml"))
    assert model.nv == 3


def test_a_refused_mjcf_file_is_a_model_error(tmp_path):
    bad = tmp_path / "bad.xml"
    bad.write_text('<mujoco>\n<worldbody>\n<body>\n<joint name="elbow" armature="1"/>\n<geom size="1"/>\n</body>\n'
                   '</worldbody>\n</mujoco>\n')
    with pytest.raises(loopdyn.ModelError, match=r"bad\.xml:4: joint 'elbow' \(hinge\): armature"):
        loopdyn.load(bad)
