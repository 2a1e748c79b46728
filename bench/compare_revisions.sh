#!/usr/bin/env bash
# Times every benchmark of bench/ at two revisions on this machine in one run, and prints per
# benchmark the CPU time before and after and their ratio (issue 15: "no benchmark slower").
#
#   bench/compare_revisions.sh BEFORE [AFTER]     # git revisions; AFTER defaults to HEAD
#   ROUNDS=2 REPETITIONS=5 bench/compare_revisions.sh b070153
#   FILTER='dca/.*/threads:2' PROGRAMS=bench_dca ROUNDS=3 bench/compare_revisions.sh 3298c63
#
# Each revision is checked out in a git worktree under build-compare/ and built there (Release,
# benchmarks only). The programs then run in alternation, before then after, ROUNDS times (default
# 2), each with REPETITIONS repetitions of at least 0.05 s (default 5, as bench/run_loops.sh), so that
# slow drifts of the machine's load hit both sides alike; a benchmark's time is the smallest of its
# medians over the rounds. Python 3 standard library only. Leaves the JSON files in build-compare/.
# A program a revision does not have (not in its bench/CMakeLists.txt) is not built or run there,
# and its benchmarks are compared only where both sides have them. PROGRAMS (space-separated)
# chooses the programs, FILTER (a --benchmark_filter) the benchmarks; bench_square_nets adds about 3 minutes per run to build its two largest
# models (bench/run_square_nets.sh).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
before="${1:?usage: bench/compare_revisions.sh BEFORE [AFTER]}"
after="${2:-HEAD}"
rounds="${ROUNDS:-2}"
repetitions="${REPETITIONS:-5}"
read -r -a programs <<< "${PROGRAMS:-bench_tree bench_loops bench_spatial_ladder bench_square_nets}"
filter="${FILTER:-.}"
work="$root/build-compare"
mkdir -p "$work"
rm -f "$work"/*.before.*.json "$work"/*.after.*.json  # results of an earlier comparison

for side in before after; do
  rev="${!side}"
  tree="$work/$side"
  git -C "$root" worktree remove --force "$tree" > /dev/null 2>&1 || rm -rf "$tree"
  git -C "$root" worktree add --detach "$tree" "$rev" > /dev/null
  cmake -S "$tree" -B "$tree/build" -DCMAKE_BUILD_TYPE=Release -DLOOPDYN_TESTS=OFF -DLOOPDYN_BENCH=ON \
    > "$work/$side.configure.log" 2>&1 || { tail -30 "$work/$side.configure.log" >&2; exit 1; }
  targets=()
  for program in "${programs[@]}"; do
    if grep -q "add_executable($program " "$tree/bench/CMakeLists.txt"; then targets+=("$program"); fi
  done
  cmake --build "$tree/build" -j "$(nproc)" --target "${targets[@]}" > "$work/$side.build.log" 2>&1 ||
    { tail -50 "$work/$side.build.log" >&2; exit 1; }
done

for round in $(seq "$rounds"); do
  for program in "${programs[@]}"; do
    for side in before after; do
      [[ -x "$work/$side/build/bench/$program" ]] || continue
      "$work/$side/build/bench/$program" --benchmark_format=json --benchmark_repetitions="$repetitions" \
        --benchmark_min_time=0.05 --benchmark_report_aggregates_only=true --benchmark_filter="$filter" \
        --benchmark_out="$work/$program.$side.$round.json" > /dev/null
    done
  done
done

python3 - "$work" "$before" "$after" "${programs[@]}" <<'PY'
import glob, json, statistics, sys

work, before, after, programs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}

def medians(path):
    data = json.load(open(path))
    # Wall-clock time for the benchmarks that measure it (/real_time: the threaded ones), CPU time
    # for the others.
    return {b["run_name"]: b["real_time" if b["run_name"].endswith("/real_time") else "cpu_time"]
            * scale[b["time_unit"]] for b in data["benchmarks"] if b.get("aggregate_name") == "median"}

print(f"| benchmark | {before} (µs) | {after} (µs) | ratio |")
print("|---|---:|---:|---:|")
ratios = {}
for program in programs:
    times = {}
    for side in ("before", "after"):
        runs = [medians(p) for p in sorted(glob.glob(f"{work}/{program}.{side}.*.json"))]
        times[side] = {name: min(r[name] for r in runs if name in r) for name in (runs[0] if runs else {})}
    for name, t0 in times["before"].items():
        if name not in times["after"]:
            continue
        t1 = times["after"][name]
        ratios.setdefault(name.split("/")[0], []).append(t1 / t0)
        print(f"| {name} | {t0:.2f} | {t1:.2f} | {t1 / t0:.3f} |")
print()
print("| family | median ratio | largest ratio | benchmarks |")
print("|---|---:|---:|---:|")
for family, r in sorted(ratios.items()):
    print(f"| {family} | {statistics.median(r):.3f} | {max(r):.3f} | {len(r)} |")
PY
