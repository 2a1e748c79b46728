# Sourced by the bench/run_*.sh scripts: build_bench TARGET configures a Release build in
# $build (LOOPDYN_BENCH_BUILD, default build-bench/) and builds TARGET there, printing the
# configure or build log on stderr when either fails; run_bench TARGET OUT REPETITIONS MIN_TIME
# [ARGS...] runs it with that many repetitions of at least MIN_TIME s, aggregates only, JSON into
# OUT, extra arguments ARGS.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${LOOPDYN_BENCH_BUILD:-$root/build-bench}"

build_bench() {
  mkdir -p "$build"
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DLOOPDYN_TESTS=OFF -DLOOPDYN_BENCH=ON \
    > "$build/configure.log" 2>&1 || { cat "$build/configure.log" >&2; exit 1; }
  cmake --build "$build" --target "$1" -j "$(nproc)" > "$build/build.log" 2>&1 ||
    { tail -50 "$build/build.log" >&2; exit 1; }
}

run_bench() {
  local target="$1" out="$2" repetitions="$3" min_time="$4"
  shift 4
  "$build/bench/$target" --benchmark_format=json --benchmark_repetitions="$repetitions" \
    --benchmark_min_time="$min_time" --benchmark_report_aggregates_only=true --benchmark_out="$out" "$@" > /dev/null
}
