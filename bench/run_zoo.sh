#!/usr/bin/env bash
# Builds zoo_results (Release, in build-bench/) and prints, in Markdown, every loop method on a
# larger zoo of random four-bars of every Grashof class and five-bars (loopdyn/zoo.hpp) against the
# absolute-coordinate reference: pass / refused / wrong per method and class, the worst marker
# errors, the time, and every run that completed off the reference (issue 36). Arguments go to
# zoo_results (--seed S, default 36; --count K, default 280: 40 per class; --t-end T, default 2 s), e.g.
#
#   bench/run_zoo.sh --seed 36 --count 280
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/build_bench.sh"

build_bench zoo_results
echo "Printed by \`bench/run_zoo.sh $*\` (source \`bench/zoo_results.cpp\`)."
echo
"$build/bench/zoo_results" "$@"
