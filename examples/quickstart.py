"""loopdyn from Python (docs/python.md): a double pendulum built in code, a four-bar with its joint
reactions, the methods compared on it, and a plot of energy and residuals (quickstart.png, when
matplotlib is installed). Run by the test suite; after scripts/quickstart.sh: python3 examples/quickstart.py
"""
import pathlib
import time

import numpy as np

import loopdyn

MODELS = pathlib.Path(__file__).resolve().parent.parent / "models"

# 1. A double pendulum in code (as examples/quickstart.cpp): 1 kg, 1 m rods along -z. Items take
#    the model file's keys (docs/model-format.md) and get the file reader's checks.
rod = [1 / 12, 1 / 12, 1e-4]
mech = loopdyn.Mechanism("double_pendulum")
mech.add_body("upper", 1.0, com=[0, 0, -0.5], inertia=rod)
mech.add_body("lower", 1.0, com=[0, 0, -0.5], inertia=rod)
mech.add_joint("shoulder", "revolute", "ground", "upper", axis=[0, 1, 0])
mech.add_joint("elbow", "revolute", "upper", "lower", parent_frame={"xyz": [0, 0, -1]}, axis=[0, 1, 0], q=0.5)
pendulum = mech.build()
run = loopdyn.simulate(pendulum, method="tree", t_end=2.0)
energy = run["energy"]  # a view of one column of run.data
print(f"double pendulum: t = {run['t'][-1]:.2f}, elbow {run['q.elbow'][-1]:.6f} rad, "
      f"energy drift {energy[-1] - energy[0]:.3g} J")

# 2. A four-bar (Park et al., case II) with every joint's reaction, at one state and along a run.
fourbar = loopdyn.load(MODELS / "fourbar_park_regular.yaml")
print(f"four-bar: {fourbar.info()['dof_rank']} DOF, auto picks {fourbar.info()['default_method']['method']}")
state = fourbar.assemble()
method = loopdyn.method(fourbar, "lagrange-dense")
udot = method.accelerations(0.0, state["q"], state["u"])
print(f"  u' = {np.array2string(udot, precision=4)}, multipliers {np.array2string(method.multipliers, precision=4)}")
closure = method.reactions(0.0, state["q"], state["u"])["closure"]
print(f"  closure force at t = 0: ({closure[0]:.3f}, {closure[1]:.3f}) N")
run = loopdyn.simulate(fourbar, method="lagrange-dense", t_end=1.0, reactions=True)
force = np.hypot(run["reaction.closure.fx"], run["reaction.closure.fy"])
print(f"  largest closure force over 1 s: {force.max():.3f} N")

# 3. The methods compared on the four-bar: the same motion, different drift and cost (the spring
#    and the applied force do work: the energy changes alike in every method).
print(f"  {'method':<15}{'q.crank_pivot(1 s)':>20}{'energy change':>16}{'max |Phi|':>12}{'wall [ms]':>11}")
runs = {}
for name in loopdyn.method_names()[1:]:  # every method but tree (the four-bar has a loop)
    start = time.perf_counter()
    # srm runs with fixed steps only and stops where its own error passes the run's accuracy: at
    # its default dt = 1e-3 it does here by t = 0.73 s (RunWatchError says so); a quarter of it holds.
    dt = 2.5e-4 if name == "srm" else 1e-3
    runs[name] = r = loopdyn.simulate(fourbar, method=name, t_end=1.0, dt=dt)
    wall = 1e3 * (time.perf_counter() - start)
    print(f"  {name:<15}{r['q.crank_pivot'][-1]:>20.9f}{r['energy'][-1] - r['energy'][0]:>16.3g}"
          f"{r['residual.position'].max():>12.3g}{wall:>11.1f}")

# 4. Energy and position residual over time, when matplotlib is installed.
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("matplotlib not installed: no plot")
else:
    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(7, 6))
    for name, r in runs.items():
        top.plot(r["t"], r["energy"] - r["energy"][0], label=name)
        bottom.semilogy(r["t"], np.maximum(r["residual.position"], 1e-17), label=name)
    top.set_ylabel("energy change [J]")
    bottom.set_ylabel("max |Phi|")
    bottom.set_xlabel("t [s]")
    top.legend(fontsize="small")
    fig.savefig("quickstart.png", dpi=100)
    png = pathlib.Path("quickstart.png").read_bytes()  # its size, and its width and height from the header
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    print(f"wrote quickstart.png ({len(png)} bytes, {width} x {height} px)")
