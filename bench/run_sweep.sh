#!/usr/bin/env bash
# How parameter studies scale on Dask (docs/sweeps.md, "Scale"): builds the Python module and the
# CLI (Release, in build-bench/ or $LOOPDYN_BENCH_BUILD), writes the 64-cell serial ladder with
# `loopdyn generate ladder`, then runs bench/sweep_scale.py with Debian's python3, which prints the
# Markdown table.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/build_bench.sh"
build_bench _loopdyn
build_bench loopdyn_cli
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$build/loopdyn" generate ladder --cells 64 --out "$out/ladder64.yaml" > /dev/null
PYTHONPATH="$build/python" /usr/bin/python3 "$root/bench/sweep_scale.py" "$root/models/fourbar_anderson.yaml" \
  "$out/ladder64.yaml"
