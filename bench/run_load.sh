#!/usr/bin/env bash
# Loading large model files (docs/performance.md, "Loading large models"): `loopdyn info` of the
# revolute chain (`loopdyn generate chain`, file order parents first) at N = 15,000, 30,000 and
# 60,000 bodies, in a process of its own each: the file's size, the wall time and the peak resident
# memory (/usr/bin/time); then, at the largest N, the time of each phase (bench/load_phases.cpp).
# Builds loopdyn and load_phases (Release, in build-bench/; LOOPDYN_BENCH_BUILD names another build
# directory), or runs the Release CLI that LOOPDYN_CLI names with that build's load_phases, and
# prints two Markdown tables.
#
#   bench/run_load.sh [N ...]          LOOPDYN_CLI=build/loopdyn bench/run_load.sh
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/build_bench.sh"
build_bench load_phases
if [ -n "${LOOPDYN_CLI:-}" ]; then
  bin=$LOOPDYN_CLI
else
  build_bench loopdyn_cli
  bin=$build/loopdyn
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(15000 30000 60000)

echo "| bodies | file [MB] | \`loopdyn info\` wall [s] | peak memory [MB] |"
echo "|---|---|---|---|"
for n in "${sizes[@]}"; do
  "$bin" generate chain --bodies "$n" --out "$out/chain.yaml" >/dev/null
  report=$( { /usr/bin/time -v "$bin" info "$out/chain.yaml" >/dev/null; } 2>&1 )
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): \(.*\)/\1/p' <<<"$report" |
         awk -F: '{ s = 0; for (i = 1; i <= NF; ++i) s = s * 60 + $i; printf "%.2f", s }')
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): \([0-9]*\)/\1/p' <<<"$report")
  size=$(stat -c %s "$out/chain.yaml")
  awk -v n="$n" -v size="$size" -v wall="$wall" -v rss="$rss" \
    'BEGIN { printf "| %d | %.1f | %s | %.0f |\n", n, size / 1e6, wall, rss / 1024 }'
done

echo
echo "Phases at ${sizes[-1]} bodies:"
echo
"$build/bench/load_phases" "$out/chain.yaml"
