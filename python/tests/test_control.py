"""Control and analysis from Python: simulate(forces=...) against a closed form and against the
model's own controller element, its errors; loopdyn.Analysis against finite differences and
against the driven slider-crank's run (the drive's force comes from the run's multipliers, the
inverse dynamics from the analysis: two paths)."""
import math
import sys

import numpy as np
import pytest

import loopdyn
from conftest import SOURCE_DIR, model_path

BAR = open(SOURCE_DIR / "tests" / "models" / "bar.yaml").read()  # J = 0.35 kg m² about its pivot, no gravity
J = 0.35


def test_pd_controller_from_python_follows_the_closed_form():
    """A critically damped step to 1 rad from Python (kp = J w², kd = 2 J w): θ = 1 − (1 + w t) e^(−w t).
    dopri5's rtol 1e-8 on θ <= 1: 1e-7 asked."""
    w = 4.0
    kp, kd = J * w * w, 2 * J * w
    r = loopdyn.simulate(loopdyn.Model.parse(BAR), t_end=2.0, rtol=1e-10, atol=1e-12,
                         forces=lambda t, q, u: [kp * (1.0 - q[0]) - kd * u[0]])
    t = r["t"]
    np.testing.assert_allclose(r["q.pivot"], 1 - (1 + w * t) * np.exp(-w * t), atol=1e-7)
    assert "work" in r  # the callback's work is counted like any applied force's
    np.testing.assert_allclose(r["energy"] - r["work"], 0.0, atol=1e-7)


def test_a_callback_is_the_same_as_the_models_controller():
    """joint_pd on the five-bar's base joints (targets: sines) against the same law from Python."""
    model = loopdyn.load(model_path("fivebar_anderson.yaml"))
    left, right = (model.coordinate_names.index(f"u.{j}") - model.nq for j in ("base_left", "base_right"))
    q0 = model.q0

    def target(t):
        return q0[left] + 0.3 * math.sin(2 * t), q0[right] - 0.2 * math.sin(3 * t)

    def rate(t):
        return 0.6 * math.cos(2 * t), -0.6 * math.cos(3 * t)

    def control(t, q, u):
        tau = np.zeros(model.nv)
        (a, b), (da, db) = target(t), rate(t)
        tau[left] = 50 * (a - q[left]) + 5 * (da - u[left])
        tau[right] = 50 * (b - q[right]) + 5 * (db - u[right])
        return tau

    from_python = loopdyn.simulate(model, method="lagrange-dense", t_end=1.0, rtol=1e-10, atol=1e-12, forces=control)
    text = open(model_path("fivebar_anderson.yaml")).read()
    text += f"""
forces:
  - {{type: joint_pd, joint: base_left, stiffness: 50, damping: 5,
     target: {{sine: {{offset: {q0[left]!r}, amplitude: 0.3, frequency: {2 / (2 * math.pi)!r}}}}}}}
  - {{type: joint_pd, joint: base_right, stiffness: 50, damping: 5,
     target: {{sine: {{offset: {q0[right]!r}, amplitude: -0.2, frequency: {3 / (2 * math.pi)!r}}}}}}}
"""
    element = loopdyn.simulate(loopdyn.Model.parse(text), method="lagrange-dense", t_end=1.0, rtol=1e-10, atol=1e-12)
    for name in ("q.base_left", "q.base_right", "q.elbow_left"):
        np.testing.assert_allclose(from_python[name], element[name], atol=1e-8)


@pytest.mark.parametrize("callback, message", [
    (lambda t, q, u: [1.0, 2.0], r"forces callback at t = 0: returned shape \(2,\), expected an array of nv = 1"),
    (lambda t, q, u: None, r"returned None, expected an array of nv = 1"),
    (lambda t, q, u: "0.5", r"returned shape \(\), expected an array of nv = 1"),
    (lambda t, q, u: {"pivot": 1.0}, r"returned a dict, expected an array of nv = 1"),
    (lambda t, q, u: [math.nan if t > 0.25 else 0.0], r"forces callback at t = 0\.2[5-9][0-9]*: returned nan for u\.pivot"),
    # Taken as its real part with numpy's ComplexWarning before.
    (lambda t, q, u: np.array([1.0 + 2.0j]), r"returned complex values \(dtype complex128\), expected an array of nv = 1"),
])
def test_a_bad_callback_stops_the_run_with_its_rows(callback, message):
    with pytest.raises(loopdyn.RunError, match=message) as e:
        loopdyn.simulate(loopdyn.Model.parse(BAR), t_end=1.0, forces=callback)
    rows = e.value.result
    assert len(rows) >= 1 and rows["t"][-1] <= 0.3


def test_an_exception_in_the_callback_is_the_cause():
    def control(t, q, u):
        if t > 0.5:
            raise ZeroDivisionError("the controller's own bug")
        return [0.0]
    with pytest.raises(loopdyn.RunError, match=r"raised ZeroDivisionError: the controller's own bug") as e:
        loopdyn.simulate(loopdyn.Model.parse(BAR), t_end=1.0, forces=control)
    assert isinstance(e.value.__cause__, ZeroDivisionError)
    assert 0.0 < e.value.result["t"][-1] <= 0.5  # the rows the run passed before the step that called f at t > 0.5
    with pytest.raises(TypeError, match="forces: expected a function"):
        loopdyn.simulate(loopdyn.Model.parse(BAR), t_end=1.0, forces=[1.0])


def test_sys_exit_in_the_callback_exits():
    # sys.exit() in a controller is the program's wish to stop, not the run's failure (it was
    # reported as a RunError).
    def control(t, q, u):
        if t > 0.1:
            sys.exit(3)
        return [0.0]
    with pytest.raises(SystemExit) as e:
        loopdyn.simulate(loopdyn.Model.parse(BAR), t_end=1.0, forces=control)
    assert e.value.code == 3


def test_the_callbacks_arrays_are_read_only():
    def control(t, q, u):
        q[0] = 1.0
        return [0.0]
    with pytest.raises(loopdyn.RunError, match="raised ValueError: assignment destination is read-only"):
        loopdyn.simulate(loopdyn.Model.parse(BAR), t_end=0.1, forces=control)


def test_jacobians_are_the_derivatives_of_the_poses():
    """Central differences (h = 1e-6) of the marker and of the frame's pose along u: 1e-8."""
    model = loopdyn.load(model_path("iftomm_a04_bricard.yaml"))  # spatial, revolute joints: q + h u moves q
    assert model.nq == model.nv
    a = loopdyn.Analysis(model)
    rng = np.random.default_rng(3)
    q, u = model.q0 + 0.1 * rng.standard_normal(model.nq), rng.standard_normal(model.nv)
    body = model.body_names[1]
    h = 1e-6
    plus, minus, here = a.body_pose(q + h * u, body), a.body_pose(q - h * u, body), a.body_pose(q, body)
    dR = (plus[:3, :3] - minus[:3, :3]) / (2 * h) @ here[:3, :3].T
    omega = np.array([dR[2, 1] - dR[1, 2], dR[0, 2] - dR[2, 0], dR[1, 0] - dR[0, 1]]) / 2
    v = (plus[:3, 3] - minus[:3, 3]) / (2 * h)
    np.testing.assert_allclose(a.frame_jacobian(q, body, axes="world") @ u, np.r_[omega, v], atol=1e-8)
    np.testing.assert_allclose(a.frame_jacobian(q, body) @ u, np.r_[here[:3, :3].T @ omega, here[:3, :3].T @ v],
                               atol=1e-8)
    assert a.mass_matrix(q).shape == (model.nv, model.nv)
    G, N = a.loop_jacobian(q), a.loop_null_space(model.assemble()["q"])
    assert G.shape[1] == model.nv and N.shape == (model.nv, 1)
    with pytest.raises(ValueError, match="unknown body 'nose'"):
        a.body_pose(q, "nose")
    with pytest.raises(ValueError, match="frame: expected a 4x4 homogeneous matrix"):
        a.frame_jacobian(q, body, frame=np.eye(3))


def test_inverse_dynamics_is_the_driven_runs_motor_torque():
    """The slider-crank at 100 rpm: the drive's column of the run (its multiplier) against the crank
    torque the analysis of the undriven model finds for the same motion; 1e-8 of the largest torque
    (the run's rtol)."""
    driven = loopdyn.load(model_path("slider_crank_driven.yaml"))
    r = loopdyn.simulate(driven, method="lagrange-dense", t_end=0.3, output_dt=0.05, rtol=1e-10, atol=1e-12)
    text = open(model_path("slider_crank_driven.yaml")).read()
    free = loopdyn.Model.parse(text[:text.index("drives:")] + text[text.index("markers:"):])
    a = loopdyn.Analysis(free)
    w = 2 * math.pi * 100 / 60
    torques = []
    for k, (t, theta) in enumerate(zip(r["t"], r["q.crank_pivot"])):
        q, u, udot = a.complete_motion(t, ["crank_pivot"], [theta], [w], [0.0], q_guess=r.data[k, 1:1 + free.nq])
        result = a.inverse_dynamics(t, q, u, udot, ["crank_pivot"])
        assert result.names == ["u.crank_pivot"] and not result.least_norm
        torques.append(result["crank_pivot"])
    scale = np.abs(r["drive.crank_pivot"]).max()
    np.testing.assert_allclose(torques, r["drive.crank_pivot"], atol=1e-8 * scale)
    with pytest.raises(RuntimeError, match="under-actuated"):
        a.inverse_dynamics(0.0, q, u, udot, [])


def test_simulation_steps_with_held_torques():
    """+1 N m for 0.5 s, then -1 N m for 0.5 s, in steps of 0.1 s: θ(1) = 0.25 / J, θ̇(1) = 0 (dopri5
    integrates each piece's quadratic exactly); energy - work stays 0 (the held torque's work)."""
    sim = loopdyn.Simulation(loopdyn.Model.parse(BAR))
    for k in range(10):
        sim.step(0.1, [1.0 if k < 5 else -1.0])
    t, q, u = sim.state
    assert t == pytest.approx(1.0, abs=1e-15) and sim.method == "tree"
    assert q[0] == pytest.approx(0.25 / J, abs=1e-12) and u[0] == pytest.approx(0.0, abs=1e-12)
    r = sim.result()
    assert r["t"][-1] == pytest.approx(1.0) and len(r) == 101
    np.testing.assert_allclose(r["energy"] - r["work"], 0.0, atol=1e-12)


def test_a_stepped_pd_loop_settles_on_its_target():
    """A 1 kHz PD loop from Python, torque held between samples: at kp = J w², kd = 2 J w with
    w = 4 rad/s (w dt = 0.004, far inside the sampled loop's stability) the bar settles on 1 rad."""
    sim = loopdyn.Simulation(loopdyn.Model.parse(BAR), output_dt=0.1)
    w = 4.0
    for _ in range(3000):
        _, q, u = sim.state
        sim.step(1e-3, [J * w * w * (1.0 - q[0]) - 2 * J * w * u[0]])
    assert sim.q[0] == pytest.approx(1.0, abs=1e-3)


def test_simulation_refuses_bad_steps_and_stays_stopped():
    sim = loopdyn.Simulation(loopdyn.Model.parse(BAR))
    with pytest.raises(ValueError, match="dt must be finite and > 0"):
        sim.step(0.0)
    with pytest.raises(ValueError, match="tau: expected a 1-D array of nv = 1"):
        sim.step(0.1, [1.0, 2.0])
    ending = loopdyn.Model.parse(BAR + """
forces:
  - {type: joint_force, joint: pivot, value: 1.0, profile: {table: [[0, 0], [0.15, 1]]}}
""")
    sim = loopdyn.Simulation(ending)
    sim.step(0.1)
    with pytest.raises(loopdyn.RunError, match="its profile: t = ") as e:
        sim.step(0.1)
    assert e.value.result["t"][-1] <= 0.15
    with pytest.raises(loopdyn.RunError, match="the simulation stopped"):
        sim.step(0.1)
