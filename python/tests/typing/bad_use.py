# Uses of loopdyn's API that mypy must refuse, one per line marked "error" (test_typing.py): proof
# that the stubs are read and say something.
import loopdyn

model = loopdyn.load("m.yaml")
count: str = model.nq  # error: an int
loopdyn.simulate(model, method=3)  # error: method is a str
model.assemble(tolerance="tight")  # error: a float
loopdyn.Analysis(model).mass_matrix(model.q0, "extra")  # error: one argument
loopdyn.Simulation(model).step("0.01")  # error: dt is a float
