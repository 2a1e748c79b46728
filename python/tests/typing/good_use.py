# Typed uses of loopdyn's API that mypy must accept with the package's stubs (test_typing.py).
import numpy as np
import numpy.typing as npt

import loopdyn

model: loopdyn.Model = loopdyn.load("models/fourbar_park_regular.yaml")
sizes: int = model.nq + model.nv
rcr: loopdyn.Method = loopdyn.method(model, "rcr")
udot: npt.NDArray[np.float64] = rcr.accelerations(0.0, model.q0, [0.0, 0.0, 0.0])
run: loopdyn.Result = loopdyn.simulate(model, t_end=0.1, forces=lambda t, q, u: np.zeros(3))
angle: float = float(run["q.crank_pivot"][-1])
sim: loopdyn.Simulation = loopdyn.Simulation(model).step(0.01, [0.0, 0.0, 0.0])
now: float = sim.t
jacobian: npt.NDArray[np.float64] = loopdyn.Analysis(model).loop_jacobian(model.q0)
forces = loopdyn.Analysis(model).inverse_dynamics(0.0, model.q0, model.u0, model.u0, ["crank_pivot"])
tau: npt.NDArray[np.float64] = forces.tau
mech: loopdyn.Mechanism = loopdyn.Mechanism("x").add_body("b", 1.0, com=[0, 0, 0.5])
try:
    loopdyn.simulate(model)
except loopdyn.RunWatchError as e:
    rows: loopdyn.Result = e.result
