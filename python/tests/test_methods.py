"""Methods by name: accelerations, multipliers, reactions; bad arguments."""
import numpy as np
import pytest

import loopdyn
from conftest import model_path


@pytest.fixture(scope="module")
def fourbar():
    model = loopdyn.load(model_path("fourbar_park_regular.yaml"))
    a = model.assemble()
    return model, a["q"], a["u"] + 0.0


@pytest.fixture(scope="module")
def pendulum():
    return loopdyn.load(model_path("double_pendulum.yaml"))


def test_every_loop_method_gives_the_tree_accelerations_on_a_tree(pendulum):
    q, u = np.array([0.3, -0.7]), np.array([0.5, 1.5])
    reference = loopdyn.method(pendulum, "tree").accelerations(0.0, q, u)
    for name in ["lagrange-dense", "lagrange-on", "nullspace", "embedding"]:
        np.testing.assert_allclose(loopdyn.method(pendulum, name).accelerations(0.0, q, u), reference, rtol=1e-12, atol=1e-12)


def test_the_loop_methods_agree_on_the_fourbar(fourbar):
    model, q, u = fourbar
    u = model.assemble(q, np.array([1.0, 0.0, 0.0]))["u"]  # moving: velocity terms count
    reference = loopdyn.method(model, "lagrange-dense").accelerations(0.0, q, u)
    assert np.abs(reference).max() > 1.0
    for name in ["lagrange-on", "gcp", "nullspace", "rcr", "embedding"]:
        np.testing.assert_allclose(loopdyn.method(model, name).accelerations(0.0, q, u), reference, rtol=1e-8, atol=1e-8,
                                   err_msg=name)


def test_multipliers_and_reactions_balance(fourbar):
    model, q, u = fourbar
    m = loopdyn.method(model, "lagrange-dense")
    m.accelerations(0.0, q, u)
    lam = m.multipliers
    assert lam.shape == (2,) and np.all(np.isfinite(lam))
    r = m.reactions(0.0, q, u)
    assert list(r) == ["crank_pivot", "crank_pin", "rocker_pivot", "closure"]
    # The closure's planar force is the multipliers' (two kept rows): same magnitude.
    assert np.hypot(*r["closure"][:2]) == pytest.approx(np.hypot(*lam), rel=1e-9)


def test_out_receives_the_accelerations_without_a_new_array(fourbar):
    model, q, u = fourbar
    m = loopdyn.method(model, "embedding")
    out = np.empty(model.nv)
    assert m.accelerations(0.0, q, u, out=out) is out
    np.testing.assert_array_equal(out, m.accelerations(0.0, q, u))
    with pytest.raises(ValueError, match="out: expected a writable C-contiguous 1-D float64 array of nv = 3"):
        m.accelerations(0.0, q, u, out=np.empty(3, dtype=np.float32))


def test_lists_and_integer_arrays_are_converted(pendulum):
    m = loopdyn.method(pendulum, "tree")
    np.testing.assert_array_equal(m.accelerations(0, [0, 1], np.array([2, 3])),
                                  m.accelerations(0.0, np.array([0.0, 1.0]), np.array([2.0, 3.0])))


@pytest.mark.parametrize("q, u, message", [
    (np.zeros(3), np.zeros(2), r"q: expected a 1-D array of nq = 2 numbers, got shape \(3,\)"),
    (np.zeros((2, 1)), np.zeros(2), r"q: expected a 1-D array of nq = 2 numbers, got shape \(2, 1\)"),
    (np.zeros(2), np.array([0.0, np.nan]), r"u\[1\] is nan: every value must be finite"),
    (np.array([np.inf, 0.0]), np.zeros(2), r"q\[0\] is inf: every value must be finite"),
    ("text", np.zeros(2), r"q: expected a 1-D array of nq = 2 numbers"),
    (None, np.zeros(2), r"q: expected a 1-D array of nq = 2 numbers, got None$"),
    (np.zeros(2), np.array([1 + 2j, 0]), r"u: expected .*, got complex values \(dtype complex128\): they must be real"),
    ([0.0, 1j], np.zeros(2), r"q: expected .*, got complex values \(dtype complex128\)"),
])
def test_bad_arrays_are_rejected_with_the_argument_named(pendulum, q, u, message):
    with pytest.raises(ValueError, match=message):
        loopdyn.method(pendulum, "tree").accelerations(0.0, q, u)


def test_a_nan_time_is_rejected(pendulum):
    with pytest.raises(ValueError, match="t is nan"):
        loopdyn.method(pendulum, "tree").accelerations(float("nan"), np.zeros(2), np.zeros(2))


def test_an_unknown_method_is_a_model_error_naming_the_known_ones(pendulum):
    with pytest.raises(loopdyn.ModelError, match="unknown method 'lagrangian'.*lagrange-dense"):
        loopdyn.method(pendulum, "lagrangian")


def test_tree_on_a_model_with_loops_is_a_model_error(fourbar):
    with pytest.raises(loopdyn.ModelError, match="tree"):
        loopdyn.method(fourbar[0], "tree")


def test_an_unknown_option_is_a_type_error_listing_the_known_ones(pendulum):
    with pytest.raises(TypeError, match="method\\(\\): unknown option 'alpha' \\(known: on_singular, .*baumgarte_alpha"):
        loopdyn.method(pendulum, "lagrange-dense", alpha=1.0)


def test_auto_picks_the_default_method(fourbar, pendulum):
    assert loopdyn.method(fourbar[0]).name == fourbar[0].info()["default_method"]["method"]
    assert loopdyn.method(pendulum).name == "tree"
    assert loopdyn.method_names()[0] == "tree"


def test_an_option_of_the_wrong_kind_is_a_type_error(pendulum):
    with pytest.raises(TypeError, match="option 'baumgarte_alpha' expects a number, got str"):
        loopdyn.method(pendulum, "lagrange-dense", baumgarte_alpha="fast")
    with pytest.raises(ValueError, match="baumgarte_beta is nan"):
        loopdyn.method(pendulum, "lagrange-dense", baumgarte_beta=float("nan"))


def test_dca_agrees_with_the_lagrange_multiplier_method(fourbar):
    model, q, u = fourbar
    reference = loopdyn.method(model, "lagrange-dense").accelerations(0.0, q, u)
    np.testing.assert_allclose(loopdyn.method(model, "dca", threads=1).accelerations(0.0, q, u), reference, rtol=1e-6,
                               atol=1e-6)
