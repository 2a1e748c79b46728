# Sourced by the bench/run_*.sh scripts: build_bench TARGET configures a Release build in
# $build (LOOPDYN_BENCH_BUILD, default build-bench/) and builds TARGET there, printing the
# configure or build log on stderr when either fails.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${LOOPDYN_BENCH_BUILD:-$root/build-bench}"

build_bench() {
  mkdir -p "$build"
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DLOOPDYN_TESTS=OFF -DLOOPDYN_BENCH=ON \
    > "$build/configure.log" 2>&1 || { cat "$build/configure.log" >&2; exit 1; }
  cmake --build "$build" --target "$1" -j "$(nproc)" > "$build/build.log" 2>&1 ||
    { tail -50 "$build/build.log" >&2; exit 1; }
}
