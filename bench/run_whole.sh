#!/usr/bin/env bash
# Whole default runs against the time of their evaluations (issue 38; docs/performance.md, "Whole
# runs against their evaluations"): builds whole_runs and loopdyn (Release, in build-bench/;
# LOOPDYN_BENCH_BUILD names another build directory), writes the benchmark mechanisms with
# `loopdyn generate` and prints one Markdown table: for every bundled model, the planar ladder
# (serial, `generate ladder`'s default, L = 16, 64, 256; comb, L = 64), the spatial ladder
# (L = 16, 64, 256; at 1024 Model::build alone takes minutes, issue 38 item 4), paper 003's square
# chain (8) and net (4 x 4) and IFToMM A02 (N = 4, 40), the default run (as `loopdyn simulate` makes it) over
# T seconds: its wall time, the time inside the method's derivative (measured during the run), and
# their ratio. Where `auto`'s choice hands the run to dca and back (a method column `embedding ⇄
# dca (N)`), the evaluations are every stretch's; where dca starts again from the start, dca's only.
# Each model runs in a process of its own, one at a time.
#
# With OTHER, a `loopdyn` binary of another revision, a second table: `loopdyn simulate MODEL
# --t-end T` of both binaries, the process's wall time, best of 3. The first table times
# Model::build and the start state's assembly apart from the run.
#
#   bench/run_whole.sh [T [OTHER]]        T: simulated seconds, default 1
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/build_bench.sh"
t_end=${1:-1}
other=${2:-}

build_bench whole_runs
build_bench loopdyn_cli
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
bin="$build/loopdyn"
for n in 16 64 256; do "$bin" generate ladder --cells "$n" --out "$out/ladder-serial-$n.yaml" > /dev/null; done
"$bin" generate ladder --cells 64 --layout comb --out "$out/ladder-comb-64.yaml" > /dev/null
for n in 16 64 256; do "$bin" generate spatial-ladder --cells "$n" --out "$out/spatial-ladder-$n.yaml" > /dev/null; done
"$bin" generate square-chain --squares 8 --out "$out/square-chain-8.yaml" > /dev/null
"$bin" generate square-net --rows 4 --cols 4 --out "$out/square-net-4x4.yaml" > /dev/null
for n in 4 40; do "$bin" generate nfourbar --n "$n" --out "$out/nfourbar-$n.yaml" > /dev/null; done

echo "Printed by \`bench/run_whole.sh $t_end\` (source \`bench/whole_runs.cpp\`), $(date -u +%Y-%m-%d), $(nproc) cores."
echo
first=1
for model in "$root"/models/*.yaml "$out"/*.yaml; do
  if [ $first = 1 ]; then
    "$build/bench/whole_runs" "$t_end" "$model"
    first=0
  else
    "$build/bench/whole_runs" "$t_end" "$model" | tail -n +3
  fi
done

[ -n "$other" ] || exit 0
# Best of 3 of the process's wall time (bash's `time`: loading, Model::build, the start state's
# assembly, `auto`'s choice, the run and the CSV, what a user waits for), or "stopped" when the run
# does not complete. The wall time `loopdyn simulate` prints is its run's alone: a change that moves
# work into the start or the choice (a survey made once, for both) shows only here.
wall() {
  local best="" w
  for _ in 1 2 3; do
    w=$( { TIMEFORMAT=%R; time "$1" simulate "$2" --t-end "$t_end" --out "$out/run.csv" > /dev/null 2>&1 || echo stopped; } 2>&1 )
    [[ $w == *stopped* ]] && { echo "stopped"; return; }
    best=$(python3 -c "print(min(float('$w'), float('${best:-inf}')))")
  done
  echo "$best"
}
echo
echo "\`loopdyn simulate MODEL --t-end $t_end\`, the process's wall time (s, best of 3): \`$other\` beside this revision's."
echo
echo "| model | other (s) | this (s) | other / this |"
echo "|---|---:|---:|---:|"
for model in "$root"/models/*.yaml "$out"/*.yaml; do
  name=$(basename "$model" .yaml)
  a=$(wall "$other" "$model")
  b=$(wall "$bin" "$model")
  ratio=$(python3 -c "print('%.2f' % (float('$a') / float('$b')))" 2>/dev/null || echo "")
  echo "| $name | $a | $b | $ratio |"
done
