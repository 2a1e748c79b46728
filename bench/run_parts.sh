#!/usr/bin/env bash
# Where a whole default run's time goes outside its evaluations (docs/performance.md, "Whole runs
# against their evaluations"): samples `bench/whole_runs T MODEL` with perf (DWARF call graphs) and
# attributes each sample to the first of these frames on its stack, innermost first: the method's
# derivative (the evaluations), an output row (Simulator::row), the accepted step's checks
# (Simulator::post_step: the method's completion, the guard, the watch), the clock reads that time
# the evaluations (whole_runs turns them on: a default run has none), the start (start_state,
# Model::build, the change-point survey) or the integrator itself; then, for the row and the
# accepted step, the functions they spend it in. Needs perf (linux-perf) and a Release build.
#
#   bench/run_parts.sh T MODEL.yaml        e.g. bench/run_parts.sh 1000 models/fourbar_park_regular.yaml
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/build_bench.sh"
t_end=${1:?usage: bench/run_parts.sh T MODEL.yaml}
model=${2:?usage: bench/run_parts.sh T MODEL.yaml}
build_bench whole_runs
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
perf record -q -F 2000 --call-graph dwarf -o "$out/perf.data" "$build/bench/whole_runs" "$t_end" "$model" > /dev/null 2>&1
perf script -i "$out/perf.data" 2> /dev/null > "$out/perf.txt"
python3 - "$out/perf.txt" "$t_end" "$model" <<'PY'
import collections, re, sys
parts = [("Formulation::derivative", "evaluations (the method's derivative)"),
         ("Simulator::derivative", "the evaluations' timing (SimulationSettings::time_evaluations)"),
         ("Simulator::row", "output rows"),
         ("Simulator::post_step", "accepted steps' checks (completion, guard, watch)"),
         ("start_state", "start state (assembly)"),
         ("Model::build", "Model::build"),
         ("prepare_change_points", "change-point survey"),
         ("Driver::run_dopri5", "the integrator itself")]
total, where = 0, collections.Counter()
inside = collections.defaultdict(collections.Counter)
for sample in open(sys.argv[1]).read().split("\n\n"):
    frames = [re.sub(r"^[0-9a-f]+ ", "", l.strip()) for l in sample.strip().split("\n")[1:]]
    if not frames:
        continue
    total += 1
    part = "elsewhere (loading, process start, kernel)"
    for i, f in enumerate(frames):
        hit = next((name for key, name in parts if key in f), None)
        if hit:
            part = hit
            callee = re.sub(r"\+0x[0-9a-f]+|\s*\(.*\)$", "", frames[i - 1]) if i else "(itself)"
            inside[part][callee[:90]] += 1
            break
    where[part] += 1
evaluations = where[parts[0][1]] or 1
print(f"`bench/run_parts.sh {sys.argv[2]} {sys.argv[3]}`: {total} samples")
print()
print("| part | samples | share | per evaluation sample |")
print("|---|---:|---:|---:|")
for name, n in where.most_common():
    print(f"| {name} | {n} | {100 * n / total:.1f} % | {n / evaluations:.3f} |")
for name in ("output rows", "accepted steps' checks (completion, guard, watch)"):
    if inside[name]:
        print()
        print(f"{name}, by the function called:", ", ".join(f"{c} {n}" for c, n in inside[name].most_common(5)))
PY
