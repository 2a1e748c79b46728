#!/usr/bin/env bash
# Builds bench_loops (Release, in build-bench/), runs it with 10 repetitions of at least 0.05 s
# each (many short repetitions: on this shared 2-core machine the median of short batches varied
# less between runs than 5 batches of 0.5 s, which caught bursts of other load) and prints the markdown
# tables of docs/performance.md ("Loop formulations on the planar ladder"): median CPU time per
# forward-dynamics call with m, n and the check value, then per method and layout the log-log
# slope of time against L fitted on L >= 8, then the machine description. Python 3 standard
# library only.
#
# Fails (exit 1, message on stderr, no table) unless every check value equals, to 1e-9 relative,
# the value of the first method at the same L in both layouts, and 6 g sin(0.3) / 5 at L = 1
# (`tree` runs the open tree with the loops removed: its check value is its own). Then the
# ratios of issue 7 at each L (embedding against lagrange-dense and against tree, same run) and
# docs/ladder-scaling.svg, the log-log plot of the table.
#
#   bench/run_loops.sh                                      # everything
#   bench/run_loops.sh --benchmark_filter='lagrange-on/'    # extra arguments go to bench_loops
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/build_bench.sh"
out="$build/bench_loops.json"
repetitions=10
min_time=0.05

build_bench bench_loops

run_bench bench_loops "$out" "$repetitions" "$min_time" "$@"

python3 - "$out" "$repetitions" "$root/bench" "$min_time" "$root/docs/ladder-scaling.svg" <<'EOF'
import math, sys

sys.path.insert(0, sys.argv[3])
from bench_report import load, loglog_svg, machine_line, slope, time_in

FIT_FROM = 8                                # smallest L in the log-log fit
EXACT_L1 = 6.0 * 9.81 * math.sin(0.3) / 5.0  # benchmarks.md: q̈ of lp0_bottom at L = 1
REL_TOL = 1e-9

data, rows, order = load(sys.argv[1])
repetitions = sys.argv[2]

def key(name):
    method, case, cells = name.split("/")
    return method, case.removeprefix("ladder-"), int(cells)

def close(a, b):
    return abs(a - b) <= REL_TOL * max(abs(a), abs(b))

# Check values: one reference per L (the first benchmark at that L), the exact value at L = 1.
errors, reference = [], {}
for name in order:
    method, layout, cells = key(name)
    if method == "tree":  # the open tree: a different mechanism
        continue
    check = rows[name]["median"]["check"]
    ref_name, ref = reference.setdefault(cells, (name, check))
    if not close(check, ref):
        errors.append(f"{name}: check {check:.12g} differs from {ref_name}: {ref:.12g}")
    if cells == 1 and not close(check, EXACT_L1):
        errors.append(f"{name}: check {check:.12g} differs from 6 g sin(0.3) / 5 = {EXACT_L1:.12g}")
if errors:
    print("run_loops.sh: CHECK VALUES DISAGREE (relative tolerance %g):" % REL_TOL, file=sys.stderr)
    for e in errors:
        print("  " + e, file=sys.stderr)
    sys.exit(1)

print("| method | layout | L | m | n | CPU µs/call (median) | CV (CPU) | check |")
print("|---|---|---:|---:|---:|---:|---:|---:|")
series = {}  # (method, layout) -> [(L, µs)]
for name in order:
    method, layout, cells = key(name)
    med, cv = rows[name]["median"], rows[name].get("cv")
    cpu = time_in(med, "cpu_time", "us")
    series.setdefault((method, layout), []).append((cells, cpu))
    cv_text = f"{100.0 * cv['cpu_time']:.1f} %" if cv else "n/a"
    print(f"| `{method}` | {layout} | {cells} | {int(med['m'])} | {int(med['n'])} | {cpu:.3g} | {cv_text} | "
          f"{med['check']:.10g} |")

print()
print(f"| method | layout | fitted exponent p, time ∝ L^p (least squares on log-log, L = {FIT_FROM}..max) | "
      "local exponent, last doubling |")
print("|---|---|---:|---:|")
for (method, layout), points in series.items():
    fit = [(x, y) for x, y in points if x >= FIT_FROM]
    if len(fit) < 2:
        continue
    print(f"| `{method}` | {layout} | {slope(fit):.2f} (L = {fit[0][0]}..{fit[-1][0]}) | "
          f"{slope(fit[-2:]):.2f} (L = {fit[-2][0]}..{fit[-1][0]}) |")

times = {(m, lay, L): t for (m, lay), pts in series.items() for L, t in pts}
if any(m == "embedding" for m, _ in series):
    print()
    print("| layout | L | `lagrange-dense` / `embedding` (speed-up) | `embedding` / `tree` (cost over the open tree) |")
    print("|---|---:|---:|---:|")
    for (m, lay, L), t in times.items():
        if m != "embedding" or ("tree", lay, L) not in times or ("lagrange-dense", lay, L) not in times:
            continue
        print(f"| {lay} | {L} | {times[('lagrange-dense', lay, L)] / t:.1f} | {t / times[('tree', lay, L)]:.2f} |")

loglog_svg({f"{m} ({lay})": pts for (m, lay), pts in series.items()}, sys.argv[5],
           "Planar ladder: CPU time per forward-dynamics call (bench/run_loops.sh)", "cells L", "µs per call")
print()
print(machine_line(data, repetitions, sys.argv[4]))
EOF
