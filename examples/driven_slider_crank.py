"""A slider-crank whose crank a motor turns at 100 rpm (models/slider_crank_driven.yaml, a drive):
the motor torque the run reports (column drive.crank_pivot) against Lagrange's equation in closed
form, and the torque the motor needs to speed the crank up, from the inverse dynamics of the same
mechanism without its drive. Plots both (driven_slider_crank.png). Run by the test suite; after
scripts/quickstart.sh: python3 examples/driven_slider_crank.py
"""
import math
import pathlib

import matplotlib
import numpy as np

import loopdyn
from plot_file import save

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 (after the backend is chosen)

MODEL = pathlib.Path(__file__).resolve().parent.parent / "models" / "slider_crank_driven.yaml"
W = 2 * math.pi * 100 / 60  # 100 rpm [rad/s]

# 1. One revolution of the driven mechanism: the crank follows the drive, the run gives its torque.
driven = loopdyn.load(MODEL)
run = loopdyn.simulate(driven, t_end=2 * math.pi / W, output_dt=0.002, rtol=1e-10, atol=1e-12)
theta, motor = run["q.crank_pivot"], run["drive.crank_pivot"]


# 2. The closed form of the file's comment: crank r = 0.1 m (1 kg), rod L = 0.3 m (2 kg), slider
#    0.5 kg, gravity along -y. Lagrange's equation of the one-degree-of-freedom mechanism gives the
#    crank torque τ = M(θ) α + ½ M'(θ) ω² + V'(θ) (generalized mass M, potential V, speed ω, α = ω̇).
def generalized_mass(th, r=0.1, L=0.3, m1=1.0, m2=2.0, m3=0.5):
    s, c = math.sin(th), math.cos(th)
    D = math.sqrt(L * L - r * r * s * s)
    dxB, dphi = -r * s - r * r * s * c / D, -r * c / D
    gx, gy = (-r * s + dxB) / 2, r * c / 2
    return m1 * r * r / 3 + m2 * (gx * gx + gy * gy) + m2 * L * L / 12 * dphi * dphi + m3 * dxB * dxB


def potential(th, r=0.1, m1=1.0, m2=2.0, g=9.81):
    return g * (m1 + m2) * r / 2 * math.sin(th)


def derivative(f, x, h=1e-3):  # five-point central difference, error ~1e-13 here
    return (8 * (f(x + h) - f(x - h)) - (f(x + 2 * h) - f(x - 2 * h))) / (12 * h)


def crank_torque(th, w, alpha=0.0):
    return generalized_mass(th) * alpha + 0.5 * w * w * derivative(generalized_mass, th) + derivative(potential, th)


closed = np.array([crank_torque(th, W) for th in theta])
worst = np.abs(motor - closed).max()
peak = np.abs(motor).argmax()
work = np.trapz(motor * W, run["t"])  # a conservative mechanism at constant speed: zero over a revolution
print(f"driven slider-crank at 100 rpm: peak motor torque {motor[peak]:.4f} N m at {math.degrees(theta[peak]) % 360:.1f} deg, "
      f"motor work over the revolution {work:.1e} J")
print(f"  the run against the closed form: largest difference {worst:.2e} N m")
if worst > 1e-6 * np.abs(closed).max():
    raise SystemExit("the run's motor torque is not the closed form's")

# 3. The same mechanism without its drive: the crank torque that accelerates it from 100 rpm at
#    50 rad/s², from inverse dynamics (Analysis), against the closed form again.
text = MODEL.read_text()
free = loopdyn.Model.parse(text[:text.index("drives:")] + text[text.index("markers:"):], "slider_crank (no drive)")
analysis = loopdyn.Analysis(free)
alpha = 50.0
needed, q = [], free.q0
for th in theta:  # each instant's assembly starts from the previous one's (the same branch)
    q, u, udot = analysis.complete_motion(0.0, ["crank_pivot"], [th], [W], [alpha], q_guess=q)
    needed.append(analysis.inverse_dynamics(0.0, q, u, udot, ["crank_pivot"])["crank_pivot"])
needed = np.array(needed)
worst = np.abs(needed - [crank_torque(th, W, alpha) for th in theta]).max()
print(f"  accelerating at {alpha:g} rad/s^2 needs up to {np.abs(needed).max():.4f} N m "
      f"(inverse dynamics against the closed form: {worst:.2e} N m)")
if worst > 1e-8 * np.abs(needed).max():
    raise SystemExit("inverse dynamics is not the closed form")

fig, ax = plt.subplots(figsize=(7, 4))
degrees = np.degrees(theta)
ax.plot(degrees, motor, label="run at 100 rpm (drive.crank_pivot)")
ax.plot(degrees[::20], closed[::20], "k.", label="closed form")
ax.plot(degrees, needed, label=f"inverse dynamics, accelerating at {alpha:g} rad/s²")
ax.set_xlabel("crank angle [deg]")
ax.set_ylabel("motor torque [N m]")
ax.legend(fontsize="small")
save(fig, "driven_slider_crank.png")
