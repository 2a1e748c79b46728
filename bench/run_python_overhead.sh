#!/usr/bin/env bash
# The cost of an accelerations call from Python against the same call in C++ on the planar
# four-bar (docs/python.md, "Overhead"): builds bench_python_overhead and the Python module
# (Release, in build-bench/ or $LOOPDYN_BENCH_BUILD), runs the C++ benchmark (10 repetitions),
# then bench/python_overhead.py with Debian's python3, which prints the Markdown table.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/build_bench.sh"
out="$build/bench_python_overhead.json"
build_bench bench_python_overhead
build_bench _loopdyn
run_bench bench_python_overhead "$out" 10 0.1
PYTHONPATH="$build/python" /usr/bin/python3 "$root/bench/python_overhead.py" "$out"
