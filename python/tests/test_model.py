"""Models from files, from code and from the generators; their description; ModelError."""
import json

import numpy as np
import pytest

import loopdyn
from conftest import model_path


@pytest.mark.parametrize("name", ["double_pendulum.yaml", "fourbar_park_regular.yaml", "double_wishbone.yaml",
                                  "geared_chain.yaml", "chain3d_all_joints.yaml"])
def test_info_has_the_keys_and_values_of_the_cli_json(cli, name):
    expected = json.loads(cli("info", model_path(name), "--json").stdout)
    assert loopdyn.load(model_path(name)).info() == expected


def test_info_names_the_default_method_and_why():
    info = loopdyn.load(model_path("fourbar_park_regular.yaml")).info()
    assert (info["nq"], info["nv"], info["dof_rank"]) == (3, 3, 1)
    assert info["default_method"]["method"] == "embedding"
    assert "aggregated body" in info["default_method"]["reason"]


def test_a_malformed_file_raises_model_error_with_the_cli_message(cli, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\nbodies:\n  - name: b\n    masss: 1.0\n")
    with pytest.raises(loopdyn.ModelError) as e:
        loopdyn.load(bad)
    assert str(e.value).startswith(f"{bad}:4: unknown key 'masss' in body 'b'")
    assert cli("info", bad, check=False).stderr == f"loopdyn: error: {e.value}\n"
    assert isinstance(e.value, ValueError)


def test_a_missing_file_raises_model_error():
    with pytest.raises(loopdyn.ModelError, match="cannot open model file '/no/such.yaml'"):
        loopdyn.load("/no/such.yaml")


def double_pendulum():
    """models/double_pendulum.yaml, item by item."""
    m = loopdyn.Mechanism("double_pendulum", gravity=[0.0, -9.81, 0.0])
    m.add_body("link1", 5.0, com=[1.0, 0, 0], inertia=[5.0, 5.0, 10.0])
    m.add_body("link2", 7.0, com=np.array([1.0, 0, 0]), inertia=[10.0, 10.0, 20.0])
    m.add_joint("shoulder", "revolute", "ground", "link1", axis=[0, 0, 1], q=0.524, u=0.0)
    m.add_joint("elbow", "revolute", "link1", "link2", parent_frame={"xyz": [2.0, 0, 0]}, axis=[0, 0, 1], q=0.261)
    m.add_marker("tip1", "link1", [2.0, 0, 0])
    m.add_marker("tip2", "link2", [2.0, 0, 0])
    m.add_force("body_torque", body="link1", torque=[0, 0, 10.0])
    m.add_force("body_force", body="link2", point=[2.0, 0, 0], force=[8.0, 7.0, 0])
    return m


def test_a_mechanism_built_in_code_is_the_model_file():
    built = double_pendulum().build()
    loaded = loopdyn.load(model_path("double_pendulum.yaml"))
    assert built.info() == loaded.info()
    q, u = np.array([0.3, -0.4]), np.array([1.0, 2.0])
    np.testing.assert_array_equal(loopdyn.method(built, "tree").accelerations(0.0, q, u),
                                  loopdyn.method(loaded, "tree").accelerations(0.0, q, u))
    assert "name: link2" in double_pendulum().to_yaml()


def test_visuals_pass_through_the_reader_with_its_checks():
    m = double_pendulum()
    m.add_body("shaft", 1.0, inertia=[1, 1, 1], visuals=[{"shape": "cylinder", "radius": 0.01, "length": 0.5}])
    assert "{shape: cylinder, radius: 0.01, length: 0.5}" in m.to_yaml()
    m.add_body("bad", 1.0, inertia=[1, 1, 1], visuals=[{"shape": "sphere", "radius": -1}])  # named below
    line = test_visuals_pass_through_the_reader_with_its_checks.__code__.co_firstlineno + 4
    with pytest.raises(loopdyn.ModelError, match=f"^{__file__}:{line}: 'radius' of visual #1 of body 'bad' must be positive"):
        m.to_yaml()


def test_a_mechanism_error_names_the_scripts_line_and_the_readers_problem():
    m = double_pendulum()
    m.add_body("b", 1.0, com=[0, 0])  # this line is named
    line = test_a_mechanism_error_names_the_scripts_line_and_the_readers_problem.__code__.co_firstlineno + 2
    with pytest.raises(loopdyn.ModelError) as e:
        m.build()
    assert str(e.value) == f"{__file__}:{line}: 'com' of body 'b' must have 3 numbers [x, y, z], got 2"


def test_a_semantic_error_of_model_build_names_the_scripts_line_too():
    m = loopdyn.Mechanism()
    m.add_body("b", 0.0, com=[0, 0, 0], inertia=[1, 1, 1])
    line = test_a_semantic_error_of_model_build_names_the_scripts_line_too.__code__.co_firstlineno + 2
    with pytest.raises(loopdyn.ModelError, match=f"^{__file__}:{line}: body 'b': mass must be positive, got 0"):
        m.build()


@pytest.mark.parametrize("generated, args", [
    (lambda: loopdyn.ladder(3, "comb"), ["ladder", "--cells", 3, "--layout", "comb"]),
    (lambda: loopdyn.spatial_ladder(2), ["spatial-ladder", "--cells", 2]),
    (lambda: loopdyn.chain(4), ["chain", "--bodies", 4]),
    (lambda: loopdyn.nfourbar(2), ["nfourbar", "--n", 2]),
    (lambda: loopdyn.square_chain(2), ["square-chain", "--squares", 2]),
])
def test_generators_give_the_cli_generated_model_and_state(cli, tmp_path, generated, args):
    path = tmp_path / "generated.yaml"
    cli("generate", *args, "--out", path)
    expected, model = loopdyn.load(path), generated()
    assert model.info() == expected.info()
    np.testing.assert_allclose(model.q0, expected.q0, rtol=0, atol=1e-15)
    np.testing.assert_allclose(model.u0, expected.u0, rtol=0, atol=1e-15)


def test_generator_arguments_are_checked():
    with pytest.raises(ValueError, match="cells must be at least 1, got 0"):
        loopdyn.ladder(0)
    with pytest.raises(ValueError, match="unknown ladder layout 'zigzag'"):
        loopdyn.ladder(2, "zigzag")
    # The library's bound (generators.hpp, kMostGenerated), refused at once rather than built.
    with pytest.raises(ValueError, match=r"cells must be at most 100000, got 1000000 \(a larger mechanism"):
        loopdyn.spatial_ladder(1000000)
    with pytest.raises(ValueError, match="rows x cols must be at most 100000, got 1000000"):
        loopdyn.square_net(1000, 1000, 0.0)


def test_assembly_closes_the_loops():
    model = loopdyn.load(model_path("fourbar_anderson.yaml"))
    a = model.assemble(q=model.q0 + 0.01)
    assert a["position_residual"] < 1e-12 and a["velocity_residual"] < 1e-10
    model.check_consistent(a["q"], a["u"])
    with pytest.raises(RuntimeError, match="assemble"):
        model.check_consistent(model.q0 + 0.01, model.u0)


def test_version_is_the_clis(cli):
    """loopdyn.__version__ and `loopdyn --version` come from one generated header."""
    assert loopdyn.__version__.startswith("0.1.0")
    assert cli("--version").stdout == f"loopdyn {loopdyn.__version__}\n"
