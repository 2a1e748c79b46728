#!/usr/bin/env bash
# The run watch and the default run on the bundled models (docs/methods.md, "The run"): for every
# model and method, `loopdyn simulate` with no integrator options (dopri5, rtol 1e-8), then
#  * the watch's worst energy balance and closure, as multiples of the bounds' unit (τ times the
#    energy scale; τ times the size L), so the factor 1e3 of the bounds can be read against them;
#  * the wall time with the watch and with --no-watch (best of 3 each): the watch's cost;
#  * the wall time of the old default (rk4, dt 1e-3, no watch) beside the new default's.
# Usage: bench/run_watch.sh [LOOPDYN] [T_END] > table.md   (LOOPDYN: a Release build's binary)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/loopdyn}
t_end=${2:-10}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# The simulate summary's numbers: wall seconds, worst balance, scale, accuracy, worst position, size.
wall() { sed -n 's/^simulated .* in \([0-9.e+-]*\) s wall.*/\1/p' "$1"; }
best_wall() {  # best of 3 runs of simulate with the extra options $2...
  local model=$1 best=
  shift
  for _ in 1 2 3; do
    "$bin" simulate "$model" --t-end "$t_end" --out "$out/run.csv" "$@" > "$out/summary" 2> /dev/null || true
    w=$(wall "$out/summary")
    best=$(python3 -c "print(min(float('$w'), float('${best:-inf}')))")
  done
  echo "$best"
}

# The benchmark mechanisms at growing sizes (benchmarks.md's chain and ladder), beside the models.
for n in 16 64 256; do
  "$bin" generate chain --bodies "$n" --out "$out/chain$n.yaml"
  "$bin" generate ladder --cells "$n" --out "$out/ladder$n.yaml"
done
echo "| model | method | ends | balance / (τ S_E) | closure / τ | watched (s) | unwatched (s) | watch cost | old default rk4 (s) |"
echo "|---|---|---|---:|---:|---:|---:|---:|---:|"
for model in models/*.yaml models/robots/*.yaml "$out"/chain*.yaml "$out"/ladder*.yaml; do
  methods="auto lagrange-dense gcp nullspace rcr embedding dca"
  case $model in "$out"/*) methods=auto ;; */iftomm_a03_andrews.yaml) continue ;; esac  # A03: 0.03 s, docs/iftomm.md
  for method in $methods; do
    if ! "$bin" simulate "$model" --method "$method" --t-end "$t_end" --out "$out/run.csv" > "$out/summary" 2> "$out/err"; then
      why=$(grep -o 'error: .*' "$out/err" | head -c 90 | tr '|' '/')
      echo "| $(basename "$model" .yaml) | $method | stops: $why | | | | | | |"
      continue
    fi
    read -r balance scale accuracy position < <(sed -n \
      's/^watch .*off by at most \([0-9.e+-]*\) J (scale \([0-9.e+-]*\) J).*at most \([0-9.e+-]*\) (position).*accuracy \([0-9.e+-]*\),.*/\1 \2 \4 \3/p;
       s/^watch .*off by at most \([0-9.e+-]*\) J (scale \([0-9.e+-]*\) J); accuracy \([0-9.e+-]*\),.*/\1 \2 \3 0/p' "$out/summary")
    ran=$(sed -n 's/^method      \([a-z0-9-]*\),.*/\1/p' "$out/summary")
    watched=$(best_wall "$model" --method "$ran")
    unwatched=$(best_wall "$model" --method "$ran" --no-watch)
    old=$(best_wall "$model" --method "$ran" --integrator rk4 --no-watch)
    python3 - "$model" "$method" "$ran" "$balance" "$scale" "$accuracy" "$position" "$watched" "$unwatched" "$old" <<'PY'
import os, sys
model, method, ran, b, s, a, p, w, u, o = sys.argv[1:]
b, s, a, p, w, u, o = map(float, (b, s, a, p, w, u, o))
name = os.path.splitext(os.path.basename(model))[0]
cost = f"{(w - u) / u * 100:+.0f} %" if u > 0 else "-"
print(f"| {name} | {method} | {ran} | {b / (a * s):.3g} | {p / a:.3g} | {w:.3f} | {u:.3f} | {cost} | {o:.3f} |")
PY
  done
done
