#!/usr/bin/env bash
# The run watch and the default run on the bundled models (docs/methods.md, "The run"), printed as
# two Markdown tables (docs/performance.md, "Whole runs"):
#  1. for every model and loop method, `loopdyn simulate` with no integrator options (dopri5,
#     rtol 1e-8) over T_END: how it ends, and the watch's worst energy balance and closure as
#     multiples of τ S_E and τ (the units of its bounds: 1e3 and max(1e3, 30 N));
#  2. for the default run (`--method auto`) of every model over T_END and of benchmarks.md's chain
#     and ladder at 16, 64 and 256 over 1 s (the chains' chaotic motion takes dopri5 to short
#     steps): wall time with the watch and with --no-watch (best of 3 each, alternated), the
#     watch's cost, and the old default (rk4 at dt 1e-3, unwatched) beside the new.
# Usage: bench/run_watch.sh [LOOPDYN] [T_END]   (LOOPDYN: a Release build's binary, default
# build/loopdyn; T_END default 10 s). IFToMM A03 is left out: its benchmark lasts 0.03 s
# (docs/iftomm.md), and 10 s of its stiff motion take minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/loopdyn}
t_end=${2:-10}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

for n in 16 64 256; do
  "$bin" generate chain --bodies "$n" --out "$out/chain$n.yaml" > /dev/null
  "$bin" generate ladder --cells "$n" --out "$out/ladder$n.yaml" > /dev/null
done
models=$(ls models/*.yaml models/robots/*.yaml | grep -v iftomm_a03)

# simulate MODEL [OPTIONS...] into $out/summary and $out/err; returns its exit code.
simulate() {
  local model=$1 t=$t_end
  shift
  case $model in "$out"/*) t=1 ;; esac
  "$bin" simulate "$model" --t-end "$t" --out "$out/run.csv" "$@" > "$out/summary" 2> "$out/err"
}
wall() { sed -n 's/^simulated .* in \([0-9.e+-]*\) s wall.*/\1/p' "$out/summary"; }

echo "| model | method | ends with | balance / (τ S_E) | closure / τ |"
echo "|---|---|---|---:|---:|"
for model in $models; do
  name=$(basename "$model" .yaml)
  methods="lagrange-dense lagrange-on gcp nullspace rcr embedding dca"
  loops=$("$bin" info "$model" --json | python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["loop_constraint_rows"])')
  [ "$loops" = 0 ] && methods=tree
  for method in $methods; do
    if ! simulate "$model" --method "$method"; then
      echo "| $name | $method | stop: $(grep -o 'error: .*' "$out/err" | cut -c8-100 | tr '|' '/') | | |"
      continue
    fi
    sed -n 's/^watch .*off by at most \([0-9.e+-]*\) J (scale \([0-9.e+-]*\) J)\(.*at most \([0-9.e+-]*\) (position)\)\{0,1\}.*accuracy \([0-9.e+-]*\) over.*/\1 \2 \4 \5/p' \
      "$out/summary" | python3 -c "
import sys
b, s, *rest = sys.stdin.read().split()
a = float(rest[-1]); p = float(rest[0]) if len(rest) == 2 else 0.0
print(f'| $name | $method | t_end | {float(b) / (a * float(s)):.3g} | {p / a:.3g} |')"
  done
done

echo
echo "| model | default method | watched (s) | unwatched (s) | watch cost | old default: rk4, unwatched (s) |"
echo "|---|---|---:|---:|---:|---:|"
# The smallest of the numbers given (empty ones skipped), or inf.
best() { python3 -c "import sys; v = [float(x) for x in sys.argv[1:] if x]; print(min(v) if v else float('inf'))" "$@"; }
for model in $models "$out"/chain*.yaml "$out"/ladder*.yaml; do
  watched='' unwatched='' old='' ran=stopped
  for _ in 1 2 3; do
    if simulate "$model"; then ran=$(sed -n 's/^method      \([a-z0-9-]*\),.*/\1/p' "$out/summary"); fi
    watched=$(best "$watched" "$(wall)")
    simulate "$model" --no-watch || true
    unwatched=$(best "$unwatched" "$(wall)")
    simulate "$model" --no-watch --integrator rk4 || true
    old=$(best "$old" "$(wall)")
  done
  python3 -c "
w, u, o = float('$watched'), float('$unwatched'), float('$old')
cost = f'{(w - u) / u * 100:+.0f} %' if u > 0 else '-'
print(f'| $(basename "$model" .yaml) | $ran | {w:.3f} | {u:.3f} | {cost} | {o:.3f} |')"
done
