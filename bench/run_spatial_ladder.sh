#!/usr/bin/env bash
# Builds bench_spatial_ladder (Release, in build-bench/; LOOPDYN_BENCH_BUILD names another build
# directory, LOOPDYN_BENCH_JOBS the parallel compile jobs), runs it with 10 repetitions of at least
# 0.05 s each (as bench/run_loops.sh, for the same reason: short batches on a shared 2-core
# machine) and prints the markdown tables of docs/performance.md ("Loop formulations on the spatial
# ladder"): median CPU time per forward-dynamics call with m, n and the check value, then per
# method the log-log exponent of time against L fitted on L >= 8 and the local exponent of the last
# doubling, then the ratios to `rcr` at each L (where both ran), then the machine description.
# Also writes docs/spatial-ladder-scaling.svg, the log-log plot of the first table. Python 3
# standard library only (bench/bench_report.py).
#
# Fails (exit 1, message on stderr, no table) unless every method's check value (α̈ of post0_top)
# equals lagrange-dense's at the same L to 1e-8 relative, where both ran, and the closed-form α̈ of
# the equivalent 2-dof pendulum (counter `pendulum`, generators.hpp) at every L (`tree` runs
# the open tree with the loops removed: its check value is its own). Every method runs
# L = 1..1024; the O(n³) ones with 3 repetitions from L = 512 on (bench/bench_spatial_ladder.cpp).
# LOOPDYN_SPATIAL_MAX_CELLS (default 1024) caps L, e.g. for a quick check of the script.
#
#   bench/run_spatial_ladder.sh                                   # everything
#   bench/run_spatial_ladder.sh --benchmark_filter='^(tree|rcr)/' # extra arguments go to bench_spatial_ladder
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

python3 - "$root" "$@" <<'EOF'
import os, sys

root = sys.argv[1]
sys.path.insert(0, os.path.join(root, "bench"))
from bench_report import (build_and_run, close, cv_text, exit_on_errors, exponent_rows, load, loglog_svg,
                          machine_line, markdown_table, slope, time_in)

REPETITIONS, MIN_TIME = 10, 0.05
FIT_FROM = 8        # smallest L in the log-log fit
REL_TOL = 1e-8
REFERENCE = "lagrange-dense"
RATIOS = [("lagrange-dense", "rcr"), ("lagrange-on", "rcr"), ("nullspace", "rcr"), ("rcr", "tree")]

data, rows, order = load(build_and_run(root, "bench_spatial_ladder", REPETITIONS, MIN_TIME, sys.argv[2:]))

def key(name):  # "<method>/spatial-ladder/<L>", with "/repeats:3" where the repetitions were set
    method, _, cells = name.split("/")[:3]
    return method, int(cells)

medians = {key(name): rows[name]["median"] for name in order}
errors = []
for (method, cells), med in medians.items():
    ref = medians.get((REFERENCE, cells))
    if method != "tree" and ref is not None and not close(med["check"], ref["check"], REL_TOL):
        errors.append(f"{method}/spatial-ladder/{cells}: check {med['check']:.12g} differs from "
                      f"{REFERENCE}: {ref['check']:.12g}")
for (method, cells), med in medians.items():
    if method != "tree" and not close(med["check"], med["pendulum"], REL_TOL):
        errors.append(f"{method}/spatial-ladder/{cells}: check {med['check']:.12g} differs from the pendulum's "
                      f"{med['pendulum']:.12g}")
exit_on_errors("run_spatial_ladder.sh", errors, REL_TOL)

series, table = {}, []  # series: method -> [(L, µs)]
for name in order:
    (method, cells), med = key(name), rows[name]["median"]
    cpu = time_in(med, "cpu_time", "us")
    series.setdefault(method, []).append((cells, cpu))
    table.append([f"`{method}`", cells, int(med["m"]), int(med["n"]), f"{cpu:.3g}", cv_text(rows[name]),
                  f"{med['check']:.10g}"])
print("\n".join(markdown_table([("method", False), ("L", True), ("m", True), ("n", True),
                                ("CPU µs/call (median)", True), ("CV (CPU)", True), ("check", True)], table)))

print()
print("\n".join(markdown_table(
    [("method", False), (f"fitted exponent p, time ∝ L^p (least squares on log-log, L = {FIT_FROM}..max)", True),
     ("local exponent, last doubling", True)],
    exponent_rows({f"`{m}`": pts for m, pts in series.items()}, FIT_FROM))))

times = {(m, L): t for m, pts in series.items() for L, t in pts}
ratio_rows = []
for L in sorted({L for _, L in times}):
    cells = [f"{times[(a, L)] / times[(b, L)]:.3g}" if (a, L) in times and (b, L) in times else "–"
             for a, b in RATIOS]
    if any(c != "–" for c in cells):
        ratio_rows.append([L] + cells)
print()
if ratio_rows:
    print("\n".join(markdown_table([("L", True)] + [(f"`{a}` / `{b}`", True) for a, b in RATIOS], ratio_rows)))
else:
    print("No ratio table: no `rcr` benchmark ran (make_formulation does not know `rcr` yet).")

# Issue 6's targets, from the tables above.
LAGRANGE = ["lagrange-on", "lagrange-dense", "nullspace"]
if "rcr" in series:
    fit = [(x, y) for x, y in series["rcr"] if x >= FIT_FROM]
    target_rows = [["`rcr` exponent close to 1", f"{slope(fit):.2f} (L = {fit[0][0]}..{fit[-1][0]})"]]
    slowest = min(((times[(m, L)] / times[("rcr", L)], m, L) for m in LAGRANGE for (mm, L) in times
                   if mm == m and L >= 2 and ("rcr", L) in times), default=None)
    if slowest:
        target_rows.append(["`rcr` faster than every Lagrange formulation from L = 2 on",
                            f"smallest ratio {slowest[0]:.2f} (`{slowest[1]}`, L = {slowest[2]})"])
    if ("lagrange-dense", 64) in times and ("rcr", 64) in times:
        target_rows.append(["`rcr` ≥ 10x faster than `lagrange-dense` at L = 64",
                            f"{times[('lagrange-dense', 64)] / times[('rcr', 64)]:.1f}x"])
    print()
    print("\n".join(markdown_table([("target", False), ("measured", False)], target_rows)))

loglog_svg(series, os.path.join(root, "docs", "spatial-ladder-scaling.svg"),
           "Spatial ladder: CPU time per call (bench/run_spatial_ladder.sh)", "cells L", "µs per call")
print()
print(machine_line(data, REPETITIONS, MIN_TIME))
EOF
