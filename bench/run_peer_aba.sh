#!/usr/bin/env bash
# RBDL's ForwardDynamics against loopdyn's aba on chain-N (N = 8, 32, 128, 512), in the same run
# on the same core: rbdl, loopdyn, rbdl, loopdyn, each pinned with `taskset -c 1`, 5 repetitions,
# aggregates only; per binary the median CPU time of each run, then the mean of its two medians.
# Prints a markdown table with both check values (q̈ of joint 0). JSON outputs are kept in $OUT
# (default: a temporary folder, printed).
#   bench/run_peer_aba.sh BENCH_RBDL [BENCH_TREE]
# BENCH_RBDL from bench/peers/rbdl (its CMakeLists.txt says how); BENCH_TREE defaults to the
# Release bench_tree of build-bench/, built here.
set -euo pipefail
rbdl="${1:?usage: $0 BENCH_RBDL [BENCH_TREE]}"
if [[ -n "${2:-}" ]]; then
  loopdyn="$2"
else
  source "$(dirname "${BASH_SOURCE[0]}")/build_bench.sh"
  build_bench bench_tree >&2
  loopdyn="$build/bench/bench_tree"
fi
[[ -x "$loopdyn" ]] || { echo "not executable: $loopdyn" >&2; exit 1; }
[[ -x "$rbdl" ]] || { echo "not executable: $rbdl (build bench/peers/rbdl first)" >&2; exit 1; }
out="${OUT:-$(mktemp -d /tmp/peer_aba.XXXXXX)}"
mkdir -p "$out"
common=(--benchmark_filter='^aba/chain/' --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
        --benchmark_format=json)
for round in 1 2; do
  taskset -c 1 "$rbdl" "${common[@]}" --benchmark_out="$out/rbdl_$round.json" > /dev/null 2>&1
  taskset -c 1 "$loopdyn" "${common[@]}" --benchmark_out="$out/loopdyn_$round.json" > /dev/null 2>&1
done
echo "JSON in $out" >&2
python3 - "$out" <<'PY'
import json, statistics, sys
out = sys.argv[1]
def load(tag):
    res = {}
    for r in (1, 2):
        for b in json.load(open(f"{out}/{tag}_{r}.json"))["benchmarks"]:
            if b.get("aggregate_name") != "median":
                continue
            n = int(b["run_name"].split("/")[-1])
            assert b["time_unit"] == "ns"
            e = res.setdefault(n, {"cpu": [], "check": b["check"]})
            e["cpu"].append(b["cpu_time"])
    return res
R, L = load("rbdl"), load("loopdyn")
print("| N | RBDL ns/call | loopdyn ns/call | RBDL ns/body | loopdyn ns/body | ratio loopdyn/RBDL | check RBDL | check loopdyn | rel. diff |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for n in sorted(R):
    r, l = statistics.median(R[n]["cpu"]), statistics.median(L[n]["cpu"])
    cr, cl = R[n]["check"], L[n]["check"]
    rel = abs(cr - cl) / max(abs(cr), abs(cl), 1e-300)
    print(f"| {n} | {r:.0f} | {l:.0f} | {r/n:.1f} | {l/n:.1f} | {l/r:.3f} | {cr:.15g} | {cl:.15g} | {rel:.1e} |")
PY
