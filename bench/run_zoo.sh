#!/usr/bin/env bash
# Builds zoo_results (Release, in build-bench/) and prints, in Markdown, every loop method on a
# larger zoo of random mechanisms of the 13 classes of loopdyn/zoo.hpp (four-bars of every Grashof
# class, five-bars, Bennett and Bricard linkages, slider-cranks, RSSR, RSCR, 3-RPS platforms, some
# with springs and dampers) against the absolute-coordinate reference: pass / refused / wrong per
# method and class, the worst marker errors, the time, and every run that completed off the
# reference (issue 36). Arguments go to zoo_results (--seed S, default 36; --count K, default 520:
# 40 per class; --t-end T, default 2 s), e.g.
#
#   bench/run_zoo.sh --seed 36 --count 520
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/build_bench.sh"

build_bench zoo_results
echo "Printed by \`bench/run_zoo.sh $*\` (source \`bench/zoo_results.cpp\`)."
echo
"$build/bench/zoo_results" "$@"
