"""view(): the viewer's page of a run, from a Result or from the CLI's CSV."""
import base64
import json
import re

import numpy as np
import pytest

import loopdyn
from conftest import model_path


def page_data(path):
    """The JSON block of a page."""
    text = open(path, encoding="utf-8").read()
    start = text.index('id="loopdyn-data">') + len('id="loopdyn-data">')
    return json.loads(text[start:text.index("</script>", start)])


def floats(b64):
    return np.frombuffer(base64.b64decode(b64), dtype="<f4")


# The page's marker positions come from the viewer's kinematics of each row's q; the run's marker
# columns from the simulator's output: they agree to float32's 7 digits (1e-6 on metres of order 1).
def test_the_page_of_a_result_has_its_times_and_its_markers(tmp_path):
    model = model_path("fourbar_park_regular.yaml")
    run = loopdyn.simulate(loopdyn.load(model), t_end=0.5)
    out = loopdyn.view(model, run, tmp_path / "run.html", plot=["u.crank_pivot"])
    data = page_data(out)
    assert data["times"] == list(run["t"])
    markers = floats(data["marker_positions"]).reshape(len(run), len(data["markers"]), 3)
    for j, m in enumerate(data["markers"]):
        expected = np.column_stack([run[m["name"] + "." + a] for a in "xyz"])
        np.testing.assert_allclose(markers[:, j, :], expected, atol=1e-6)
    assert [p["name"] for p in data["plots"]] == ["energy", "residual.position", "residual.velocity", "u.crank_pivot"]
    # One text is the CLI's comma-separated --plot (it was split into its characters).
    out = loopdyn.view(model, run, tmp_path / "text.html", plot="u.crank_pivot, q.crank_pivot")
    assert [p["name"] for p in page_data(out)["plots"]][3:] == ["u.crank_pivot", "q.crank_pivot"]


def test_the_page_of_a_csv_is_the_page_of_the_same_result(cli, tmp_path):
    model = model_path("double_pendulum.yaml")
    cli("simulate", model, "--t-end", 0.2, "--out", tmp_path / "run.csv")
    loopdyn.view(model, tmp_path / "run.csv", tmp_path / "csv.html")
    run = loopdyn.simulate(loopdyn.load(model), t_end=0.2)
    loopdyn.view(model, run, tmp_path / "result.html")
    from_csv, from_result = page_data(tmp_path / "csv.html"), page_data(tmp_path / "result.html")
    # The CSV holds 15 digits of q: the poses agree to float32 (1e-6 on the 2 m links).
    np.testing.assert_allclose(floats(from_csv["poses"]), floats(from_result["poses"]), atol=1e-6)


def test_a_run_of_another_model_or_an_unknown_column_is_refused(tmp_path):
    run = loopdyn.simulate(loopdyn.load(model_path("double_pendulum.yaml")), t_end=0.05)
    with pytest.raises(loopdyn.ModelError, match="no column 'q.crank_pivot'"):
        loopdyn.view(model_path("fourbar_park_regular.yaml"), run, tmp_path / "x.html")
    with pytest.raises(loopdyn.ModelError, match=r"no column 'enrgy' to plot \(near: 'energy'\)"):
        loopdyn.view(model_path("double_pendulum.yaml"), run, tmp_path / "x.html", plot=["enrgy"])
    with pytest.raises(loopdyn.ModelError, match="cannot open CSV file"):
        loopdyn.view(model_path("double_pendulum.yaml"), tmp_path / "missing.csv", tmp_path / "x.html")


# A mesh file that cannot be read (a URDF's, not found) does not stop the page: a wire cube, and the
# page's note as a warning naming the file, as the CLI's stderr note.
def test_a_mesh_that_cannot_be_read_is_a_warning_and_a_wire_cube(tmp_path):
    urdf = tmp_path / "arm.urdf"
    urdf.write_text("""<robot name="arm"><link name="world"/>
<link name="a"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>
<visual><geometry><mesh filename="meshes/a.stl"/></geometry></visual></link>
<joint name="j" type="continuous"><parent link="world"/><child link="a"/></joint></robot>
""")
    with pytest.warns(UserWarning, match="not found: kept as written"):
        model = loopdyn.load(urdf)
    run = loopdyn.simulate(model, t_end=0.05)
    with pytest.warns(UserWarning, match=re.escape(f"arm.urdf:2: body 'a': cannot read mesh file '{tmp_path}/meshes/a.stl'")):
        out = loopdyn.view(urdf, run, tmp_path / "arm.html")
    data = page_data(out)
    assert data["bodies"][0]["shapes"][0]["mesh"] == -1 and "cannot read mesh file" in data["notes"][0]
