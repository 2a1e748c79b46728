"""A five-bar parallel robot (models/fivebar_anderson.yaml: two legs from base pivots 0.6 m apart,
meeting at the end-effector) whose two base motors make the end-effector trace a circle, with
computed-torque control from Python: at every evaluation of the run the controller asks
loopdyn.Analysis for the motor torques that give the base joints the accelerations of a PD law on
their tracking error (inverse dynamics of the closed mechanism). The robot starts off the circle,
swinging as the file sets it; the error decays as e^(-w t) (1 + w t). Plots the path and the
torques (fivebar_computed_torque.png). Run by the test suite; after scripts/quickstart.sh:
python3 examples/fivebar_computed_torque.py
"""
import math
import pathlib

import matplotlib
import numpy as np

import loopdyn
from plot_file import save

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 (after the backend is chosen)

MODEL = pathlib.Path(__file__).resolve().parent.parent / "models" / "fivebar_anderson.yaml"
model = loopdyn.load(MODEL)
analysis = loopdyn.Analysis(model)
BASES = ["base_left", "base_right"]
left, right = (model.coordinate_names.index(f"u.{j}") - model.nq for j in BASES)

# The circle: centre (0.3, -0.7) m, radius 0.1 m, once every 2 s.
CENTRE, RADIUS, PERIOD = np.array([0.3, -0.7]), 0.1, 2.0


def target(t):
    a = 2 * math.pi * t / PERIOD
    return CENTRE + RADIUS * np.array([math.cos(a), math.sin(a)])


# Inverse kinematics of each leg in closed form (two bars from its base pivot to the end-effector,
# the elbow on the side it starts on): the base angle θ = atan2(P − B) ± acos((L1² + d² − L2²) / 2 L1 d).
LEGS = [(np.array([0.0, 0.0]), 0.4, 0.5), (np.array([0.6, 0.0]), 0.45, 0.45)]


def leg_angles(p, sign):
    out = []
    for (base, l1, l2), s in zip(LEGS, sign):
        d = p - base
        r = math.hypot(*d)
        out.append(math.atan2(d[1], d[0]) + s * math.acos((l1 * l1 + r * r - l2 * l2) / (2 * l1 * r)))
    return np.array(out)


start = model.q0[[left, right]]
here = analysis.marker_position(model.q0, "end_effector")[:2]
SIGN = [min((1, -1), key=lambda s: abs(leg_angles(here, [s, s])[k] - start[k])) for k in range(2)]
assert np.allclose(leg_angles(here, SIGN), start, atol=1e-9), "the elbows' branch of the model file"


def desired(t, h=1e-4):
    """θ_d, θ̇_d, θ̈_d of the base joints: the inverse kinematics and its central differences in time."""
    a, b, c = leg_angles(target(t - h), SIGN), leg_angles(target(t), SIGN), leg_angles(target(t + h), SIGN)
    return b, (c - a) / (2 * h), (c - 2 * b + a) / (h * h)


W = 20.0  # closed-loop bandwidth [rad/s]: critically damped, kp = w², kd = 2 w


def computed_torque(t, q, u):
    theta, rate = q[[left, right]], u[[left, right]]
    theta_d, rate_d, accel_d = desired(t)
    command = accel_d + 2 * W * (rate_d - rate) + W * W * (theta_d - theta)
    qc, uc, udc = analysis.complete_motion(t, BASES, theta, rate, command, q_guess=q)
    tau = np.zeros(model.nv)
    tau[[left, right]] = analysis.inverse_dynamics(t, qc, uc, udc, BASES).tau
    return tau


run = loopdyn.simulate(model, t_end=2 * PERIOD, output_dt=0.01, forces=computed_torque, rtol=1e-9, atol=1e-11)
t = run["t"]
path = np.c_[run["end_effector.x"], run["end_effector.y"]]
error = np.linalg.norm(path - np.array([target(s) for s in t]), axis=1)
second_lap = t >= PERIOD
torques = []
for k in range(len(t)):  # the controller's torques at the output rows
    q, u = run.data[k, 1:1 + model.nq], run.data[k, 1 + model.nq:1 + model.nq + model.nv]
    torques.append(computed_torque(t[k], q, u)[[left, right]])
torques = np.array(torques)
print(f"five-bar, computed torque at w = {W:g} rad/s: tracking error {error[0] * 1e3:.1f} mm at t = 0, "
      f"{error[t >= 0.5][0] * 1e3:.3f} mm at t = 0.5 s, at most {error[second_lap].max():.2e} m over the second lap")
print(f"  motor torques up to {np.abs(torques).max():.3f} N m; {run.stats['rhs_evaluations']} evaluations, "
      f"energy - work constant to {np.ptp(run['energy'] - run['work']):.1e} J")
if error[second_lap].max() > 1e-6:
    raise SystemExit("the end-effector does not follow the circle")

fig, (xy, tq) = plt.subplots(1, 2, figsize=(10, 4.5))
circle = np.array([target(s) for s in np.linspace(0, PERIOD, 200)])
xy.plot(circle[:, 0], circle[:, 1], "k--", label="desired circle")
xy.plot(path[:, 0], path[:, 1], label="end-effector")
xy.set_aspect("equal")
xy.set_xlabel("x [m]")
xy.set_ylabel("y [m]")
xy.legend(fontsize="small")
tq.plot(t, torques[:, 0], label="base_left")
tq.plot(t, torques[:, 1], label="base_right")
tq.set_xlabel("t [s]")
tq.set_ylabel("motor torque [N m]")
tq.legend(fontsize="small")
save(fig, "fivebar_computed_torque.png")
