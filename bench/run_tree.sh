#!/usr/bin/env bash
# Builds bench_tree (Release, in build-bench/), runs it with 5 repetitions and prints the markdown
# table of docs/performance.md ("Tree dynamics"): median times, ns per body and check values,
# followed by the machine description. Python 3 standard library only.
#
#   bench/run_tree.sh                                  # everything
#   bench/run_tree.sh --benchmark_filter='aba/chain'   # extra arguments go to bench_tree
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/build_bench.sh"
out="$build/bench_tree.json"

build_bench bench_tree

"$build/bench/bench_tree" --benchmark_format=json --benchmark_repetitions=5 \
  --benchmark_report_aggregates_only=true --benchmark_out="$out" "$@" > /dev/null

python3 - "$out" "$root/bench" <<'EOF'
import sys

sys.path.insert(0, sys.argv[2])
from bench_report import load, machine_line, time_in

data, rows, order = load(sys.argv[1])

print("| benchmark | N | real ns/call (median) | CPU ns/call (median) | CPU ns/body | CV (real) | check |")
print("|---|---:|---:|---:|---:|---:|---:|")
for name in order:
    med = rows[name]["median"]
    cv = rows[name].get("cv")
    n = int(med["bodies"])
    cpu = time_in(med, "cpu_time", "ns")
    cv_text = f"{100.0 * cv['real_time']:.1f} %" if cv else "n/a"
    print(f"| `{name}` | {n} | {time_in(med, 'real_time', 'ns'):.0f} | {cpu:.0f} | {cpu / n:.1f} | {cv_text} | "
          f"{med['check']:.10g} |")

print()
print(machine_line(data, 5))
EOF
