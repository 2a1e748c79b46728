"""The Python half of the binding's overhead (bench/run_python_overhead.sh): times
loopdyn.Method.accelerations(t, q, u) on models/fourbar_park_regular.yaml at its assembled initial
state, per method, and prints the Markdown table of docs/python.md beside the C++ times of
bench_python_overhead (its JSON, the first argument): median over repetitions, per call.

Then the cost of a force callback from Python (simulate(forces=f)): the same fixed-step run of
the four-bar with f returning zeros and without f, the difference per call of f.

Also shows where numpy arrays are not copied: q and u given as float64 arrays are read in place
(a list is converted first: the `q, u as lists` column costs the conversion), `out=` receives u'
without a new array, and a simulation's columns are views of one array.
"""
import json
import pathlib
import statistics
import sys
import timeit

import numpy as np

import loopdyn

MODEL = pathlib.Path(__file__).resolve().parent.parent / "models" / "fourbar_park_regular.yaml"
REPEAT, NUMBER = 15, 20000


def per_call_ns(statement):
    return 1e9 * statistics.median(t / NUMBER for t in timeit.repeat(statement, repeat=REPEAT, number=NUMBER))


def cpp_times(path):
    """{method: (median ns, check)} of bench_python_overhead's JSON."""
    runs = json.load(open(path))["benchmarks"]
    return {b["run_name"].split("/")[1]: (b["cpu_time"], b["check"]) for b in runs if b["aggregate_name"] == "median"}


def main(cpp_json):
    model = loopdyn.load(MODEL)
    state = model.assemble()
    q, u = state["q"], state["u"]
    cpp = cpp_times(cpp_json)
    print("| method | C++ [ns] | Python [ns] | difference [ns] | Python, out= [ns] | Python, q, u as lists [ns] | u'[0] C++ | u'[0] Python |")
    print("|---|---|---|---|---|---|---|---|")
    for name, (cpp_ns, check) in cpp.items():
        m = loopdyn.method(model, name)
        out = np.empty(model.nv)
        ql, ul = q.tolist(), u.tolist()
        plain = per_call_ns(lambda: m.accelerations(0.0, q, u))
        into = per_call_ns(lambda: m.accelerations(0.0, q, u, out=out))
        lists = per_call_ns(lambda: m.accelerations(0.0, ql, ul))
        udot0 = m.accelerations(0.0, q, u)[0]
        if abs(udot0 - check) > 1e-12 * max(1.0, abs(check)):
            sys.exit(f"{name}: u'[0] = {udot0!r} from Python, {check!r} from C++: not the same call")
        print(f"| {name} | {cpp_ns:.0f} | {plain:.0f} | {plain - cpp_ns:.0f} | {into:.0f} | {lists:.0f} | {check:.12g} | {udot0:.12g} |")
    r = loopdyn.simulate(model, t_end=0.1)
    views = all(np.shares_memory(r[c], r.data) for c in r.columns)
    print(f"\nsimulate: {len(r.columns)} columns, every one a view of result.data: {views}")
    callback_overhead(model)


def callback_overhead(model):
    """simulate(forces=f), f returning a preallocated zero array, against the same run without f:
    lagrange-dense, rk4 at dt = 1 ms over 2 s; median wall time of 7 runs each."""
    zeros, calls = np.zeros(model.nv), [0]

    def forces(t, q, u):
        calls[0] += 1
        return zeros

    settings = dict(method="lagrange-dense", integrator="rk4", dt=1e-3, t_end=2.0, output_dt=0.1)

    def wall(**extra):
        return statistics.median(timeit.repeat(lambda: loopdyn.simulate(model, **settings, **extra), repeat=7, number=1))

    without, with_f = wall(), wall(forces=forces)
    calls[0] = 0
    r = loopdyn.simulate(model, **settings, forces=forces)
    evaluations = r.stats["rhs_evaluations"]
    added = (with_f - without) * 1e6
    print("\n| run (lagrange-dense, rk4, dt = 1 ms, 2 s) | wall [ms] | calls of f | evaluations | added per call of f [µs] |")
    print("|---|---|---|---|---|")
    print(f"| without forces | {without * 1e3:.1f} | | {evaluations} | |")
    print(f"| forces=f (zeros) | {with_f * 1e3:.1f} | {calls[0]} | {evaluations} | {added / calls[0]:.2f} |")


if __name__ == "__main__":
    main(sys.argv[1])
