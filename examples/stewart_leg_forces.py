"""The leg forces of a Stewart-Gough platform (models/robots/stewart.yaml: six UPS legs, an 8 kg
platform) for a prescribed platform motion: a heave of 5 cm and a twist of 0.2 rad about the
vertical, both at 1 Hz. The platform's free joint is given; loopdyn.Analysis completes the legs'
motion (complete_motion) and finds the six prismatic forces that produce it (inverse_dynamics:
six actuators on six degrees of freedom, one solution). Checked here by running the platform
forward with those forces held at one instant; plotted (stewart_leg_forces.png). Run by the test
suite; after scripts/quickstart.sh: python3 examples/stewart_leg_forces.py
"""
import math
import pathlib

import matplotlib
import numpy as np

import loopdyn
from plot_file import save

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 (after the backend is chosen)

MODEL = pathlib.Path(__file__).resolve().parent.parent / "models" / "robots" / "stewart.yaml"
model = loopdyn.load(MODEL)
analysis = loopdyn.Analysis(model)
LEGS = [f"slide{k}" for k in range(6)]
HEAVE, TWIST, F = 0.05, 0.2, 1.0  # [m], [rad], [Hz]
w = 2 * math.pi * F


def platform(t):
    """The free joint's q = [x, y, z, w, qx, qy, qz] and u, u̇ = [v; ω] in the platform's axes (the
    model-format's layout): heave z = HEAVE sin(w t), twist ψ = TWIST sin(w t) about z, whose axis
    the twist keeps, so that v = (0, 0, ż) and ω = (0, 0, ψ̇) in the platform's axes too."""
    z, dz, ddz = HEAVE * math.sin(w * t), HEAVE * w * math.cos(w * t), -HEAVE * w * w * math.sin(w * t)
    psi, dpsi, ddpsi = TWIST * math.sin(w * t), TWIST * w * math.cos(w * t), -TWIST * w * w * math.sin(w * t)
    q = [0.0, 0.0, z, math.cos(psi / 2), 0.0, 0.0, math.sin(psi / 2)]
    return q, [0.0, 0.0, dz, 0.0, 0.0, dpsi], [0.0, 0.0, ddz, 0.0, 0.0, ddpsi]


times = np.linspace(0.0, 1.0 / F, 101)
forces, guess = [], model.q0
for t in times:
    q, u, udot = analysis.complete_motion(t, ["platform_free"], *platform(t), q_guess=guess)
    result = analysis.inverse_dynamics(t, q, u, udot, LEGS)
    forces.append(result.tau)
    guess = q
forces = np.array(forces)
print(f"Stewart platform, heave {HEAVE * 100:g} cm and twist {TWIST:g} rad at {F:g} Hz: "
      f"{result.dof} degrees of freedom, {result.rank} driven by the legs")
print(f"  leg forces from {forces.min():.1f} to {forces.max():.1f} N; at t = 0 "
      f"{np.array2string(forces[0], precision=2)} N")

# Forward dynamics with the forces at t = 0.3 s held, over one step of 10 µs: the platform's
# accelerations (u(h) − u(0)) / h are the prescribed ones, to O(h) (the pistons' damping, 200 N s/m
# on 0.6 kg, changes their accelerations at a rate of ~1e2 per second: 1e-3 of them over h).
t, h = 0.3, 1e-5
q, u, udot = analysis.complete_motion(t, ["platform_free"], *platform(t))
tau = analysis.inverse_dynamics(t, q, u, udot, LEGS).tau
names = model.coordinate_names
legs = [names.index(f"u.{name}") - model.nq for name in LEGS]
free = [names.index(f"u.platform_free.{k}") - model.nq for k in range(6)]


def held(t_, q_, u_):
    out = np.zeros(model.nv)
    out[legs] = tau
    return out


step = loopdyn.simulate(model, method="lagrange-dense", q0=q, u0=u, assemble=False, t_end=h, output_dt=h,
                        forces=held, integrator="rk4", dt=h)
reached = (step.data[-1, 1 + model.nq:][free] - u[free]) / h
asked = np.array(platform(t)[2])
print(f"  forward check at t = {t:g} s: platform accelerations {np.array2string(reached, precision=4)} "
      f"against {np.array2string(asked, precision=4)} asked")
if np.abs(reached - asked).max() > 1e-2 * np.abs(asked).max():
    raise SystemExit("the leg forces do not produce the prescribed motion")

fig, ax = plt.subplots(figsize=(7, 4))
for k, name in enumerate(LEGS):
    ax.plot(times, forces[:, k], label=name)
ax.set_xlabel("t [s]")
ax.set_ylabel("leg force [N]")
ax.legend(fontsize="small", ncol=3)
save(fig, "stewart_leg_forces.png")
