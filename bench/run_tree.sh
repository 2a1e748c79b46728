#!/usr/bin/env bash
# Builds bench_tree (Release, in build-bench/), runs it with 5 repetitions and prints the markdown
# table of docs/performance.md ("Tree dynamics"): median times, ns per body and check values,
# followed by the machine description. Python 3 standard library only.
#
#   bench/run_tree.sh                                  # everything
#   bench/run_tree.sh --benchmark_filter='aba/chain'   # extra arguments go to bench_tree
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${LOOPDYN_BENCH_BUILD:-$root/build-bench}"
out="$build/bench_tree.json"

mkdir -p "$build"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DLOOPDYN_TESTS=OFF > "$build/configure.log" 2>&1 ||
  { cat "$build/configure.log"; exit 1; }
cmake --build "$build" --target bench_tree -j "$(nproc)" > "$build/build.log" 2>&1 ||
  { tail -50 "$build/build.log"; exit 1; }

"$build/bench/bench_tree" --benchmark_format=json --benchmark_repetitions=5 \
  --benchmark_report_aggregates_only=true --benchmark_out="$out" "$@" > /dev/null

python3 - "$out" <<'EOF'
import json, platform, subprocess, sys

with open(sys.argv[1]) as f:
    data = json.load(f)

rows = {}  # run_name -> {aggregate: entry}
order = []
for b in data["benchmarks"]:
    name = b["run_name"]
    if name not in rows:
        rows[name] = {}
        order.append(name)
    rows[name][b.get("aggregate_name", "")] = b

def ns(entry, key):
    scale = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}[entry["time_unit"]]
    return entry[key] * scale

print("| benchmark | N | real ns/call (median) | CPU ns/call (median) | CPU ns/body | CV (real) | check |")
print("|---|---:|---:|---:|---:|---:|---:|")
for name in order:
    med = rows[name]["median"]
    cv = rows[name].get("cv")
    n = int(med["bodies"])
    cpu = ns(med, "cpu_time")
    cv_text = f"{100.0 * cv['real_time']:.1f} %" if cv else "n/a"
    print(f"| `{name}` | {n} | {ns(med, 'real_time'):.0f} | {cpu:.0f} | {cpu / n:.1f} | {cv_text} | {med['check']:.10g} |")

ctx = data["context"]
cpu_model = "unknown"
try:
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
except OSError:
    pass
nproc = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
load = ", ".join(f"{x:.2f}" for x in ctx.get("load_avg", []))
print()
print(f"Machine: {cpu_model}, nproc = {nproc}, {ctx.get('mhz_per_cpu', '?')} MHz, "
      f"{platform.system()} {platform.release()}; load average at start {load}; "
      f"Google Benchmark library build type: {ctx.get('library_build_type', '?')}; "
      f"run {ctx.get('date', '?')}; 5 repetitions, aggregates only.")
EOF
