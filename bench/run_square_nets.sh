#!/usr/bin/env bash
# Builds bench_square_nets (Release, in build-bench/), runs it with 10 repetitions of at least
# 0.05 s each (as bench/run_loops.sh; the dense methods at ~1024 bars take 0.1-0.4 s per step, so
# their repetitions are single steps) and prints the markdown tables of issue 16, item 4: median
# CPU time per rk2 step on paper 003's square chains and nets (rows: bars, columns: methods), per
# method and case the log-log slope of time against bars fitted from the second size on (64 bars
# for chains, 60 for nets) and over the last size step, srm / tree per step at every size, and the
# fastest other loop method / srm at the ~1024-bar net (and chain), each beside its target; then the
# check values and the machine description. Also writes the log-log plots to
# build-bench/square_chain_scaling.svg and build-bench/square_net_scaling.svg. Python 3 standard
# library only. About 4 minutes on 2 cores, 3 of them in Model::build of the 4096-bar chain and of
# the 4140-bar net (their loop analysis is dense over the one aggregated body of each), untimed.
#
# Fails (exit 1, message on stderr, after the tables, offending cells marked) when a method's check
# value (u of joint h0_0_pin after the first step) differs by more than 1e-4 relative from the
# reference at the same case and size: lagrange-dense, else nullspace, else embedding, else srm.
# srm differs from the exact methods by its regularization error only (about 1e-7 relative here).
# `tree` runs the open tree with the loops removed: its check value is its own.
# When written (issue 16) it failed on embedding/square-chain/1024 only: embedding's accelerations
# lose accuracy along the chain (check 8e-4 off at 1024 bars, 5.5e-7 at 256, 1.4e-10 at 64).
#
#   bench/run_square_nets.sh                                   # everything
#   bench/run_square_nets.sh --benchmark_filter='^(srm|tree)/' # extra arguments go to bench_square_nets
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/build_bench.sh"
out="$build/bench_square_nets.json"
repetitions=10
min_time=0.05

build_bench bench_square_nets

run_bench bench_square_nets "$out" "$repetitions" "$min_time" "$@"

python3 - "$out" "$repetitions" "$root/bench" "$min_time" "$build" <<'EOF'
import sys

sys.path.insert(0, sys.argv[3])
from bench_report import close, exponent_rows, load, loglog_svg, machine_line, markdown_table, time_in

FIT_FROM = 60          # bars: the second size of each family (64-bar chain, 60-bar net)
REL_TOL = 1e-4         # check values: srm against the exact methods differ by the regularization only
METHODS = ["srm", "tree", "lagrange-dense", "nullspace", "embedding", "rcr"]
OTHERS = ["lagrange-dense", "nullspace", "embedding", "rcr"]  # loop methods that solve for the multipliers
CASES = ["square-chain", "square-net"]
TARGET_EXPONENT, TARGET_TREE_RATIO, TARGET_SPEEDUP = 1.1, 4.0, 10.0

data, rows, order = load(sys.argv[1])
# as run (extra arguments may override the script's --benchmark_repetitions)
repetitions = next((b["repetitions"] for b in data["benchmarks"] if "repetitions" in b), sys.argv[2])

# times[(method, case, bars)] = median CPU µs per step; info[(case, bars)] = (n, m)
times, checks, info, failed = {}, {}, {}, []
for name in order:
    method, case, bars = name.split("/")
    key = (method, case, int(bars))
    med = rows[name].get("median")
    if med is None or med.get("error_occurred"):
        entry = next(iter(rows[name].values()))
        failed.append(f"{name}: {entry.get('error_message', 'no median')}")
        continue
    times[key] = time_in(med, "cpu_time", "us")
    checks[key] = med["check"]
    info[(case, int(bars))] = (int(med["n"]), int(med["m"]))
methods = [m for m in METHODS if any(k[0] == m for k in times)]

# Check values against one reference per case and size.
errors, bad = [], set()
reference = {}
for (case, bars) in info:
    for m in ["lagrange-dense", "nullspace", "embedding", "srm"]:
        if (m, case, bars) in checks:
            reference[(case, bars)] = (m, checks[(m, case, bars)])
            break
for (method, case, bars), check in checks.items():
    if method == "tree" or (case, bars) not in reference:
        continue
    ref_method, ref = reference[(case, bars)]
    if not close(check, ref, REL_TOL):
        bad.add((method, case, bars))
        errors.append(f"{method}/{case}/{bars}: check {check:.12g} differs from {ref_method}'s {ref:.12g} "
                      f"by {abs(check - ref) / abs(ref):.2e} relative")


def fmt(t):
    return f"{t:.4g}" if t < 1e4 else f"{t:.3e}"


def cell(method, case, bars):
    key = (method, case, bars)
    if key not in times:
        return "—"
    return fmt(times[key]) + (" ‡" if key in bad else "")


for case in CASES:
    sizes = sorted(b for c, b in info if c == case)
    if not sizes:
        continue
    print(f"**{case}**: median CPU µs per rk2 step (h = 1e-3 s); `tree` on the same bars without the loops")
    print()
    table = [[b, *info[(case, b)], *[cell(m, case, b) for m in methods]] for b in sizes]
    for line in markdown_table([("bars", True), ("n", True), ("m", True)] + [(f"`{m}`", True) for m in methods], table):
        print(line)
    print()

series = {}
for m in methods:
    for case in CASES:
        pts = sorted((b, t) for (mm, c, b), t in times.items() if mm == m and c == case)
        if pts:
            series[f"{m} ({case.removeprefix('square-')})"] = pts
print(f"Fitted exponent p, time ∝ bars^p (target for `srm`: p <= {TARGET_EXPONENT}):")
print()
for line in markdown_table([("method (case)", False), (f"p, least squares on log-log, bars >= {FIT_FROM}", True),
                            ("local p, last size step", True)], exponent_rows(series, FIT_FROM, "bars")):
    print(line)
print()

ratio_rows = []
for case in CASES:
    for b in sorted(b for c, b in info if c == case):
        if ("srm", case, b) in times and ("tree", case, b) in times:
            r = times[("srm", case, b)] / times[("tree", case, b)]
            ratio_rows.append([case, b, f"{r:.2f}", "yes" if r <= TARGET_TREE_RATIO else "**no**"])
if ratio_rows:
    print(f"`srm` / `tree` per step (target <= {TARGET_TREE_RATIO:g}); `srm` runs S = 2 iterates at every size "
          "(the default, not adapted to n):")
    print()
    for line in markdown_table([("case", False), ("bars", True), ("srm / tree", True), ("met", False)], ratio_rows):
        print(line)
    print()

speed_rows = []
for case in CASES:
    sizes = [b for c, b in info if c == case and ("srm", case, b) in times]
    if not sizes:
        continue
    b = min(sizes, key=lambda s: abs(s - 1024))  # the ~1024-bar member
    others = [(times[(m, case, b)], m) for m in OTHERS if (m, case, b) in times]
    if not others:
        continue
    t, m = min(others)
    s = t / times[("srm", case, b)]
    target = "yes" if s >= TARGET_SPEEDUP else "**no**"
    speed_rows.append([case, b, f"`{m}`", fmt(t), fmt(times[("srm", case, b)]), f"{s:.3g}",
                       target if case == "square-net" else f"({target})"])
if speed_rows:
    print(f"Fastest other loop method / `srm` at about 1024 bars (target on the net: >= {TARGET_SPEEDUP:g}):")
    print()
    for line in markdown_table([("case", False), ("bars", True), ("fastest other", False), ("its µs/step", True),
                                ("srm µs/step", True), ("speed-up", True), ("met", False)], speed_rows):
        print(line)
    print()

print(f"Check values (u of joint h0_0_pin after one step, rad/s) against the reference; "
      f"largest relative deviation of `srm` and of the other loop methods (tolerance {REL_TOL:g}):")
print()
check_rows = []
for (case, bars), (ref_method, ref) in sorted(reference.items()):
    dev = {m: abs(checks[(m, case, bars)] - ref) / abs(ref) for m in methods
           if m != "tree" and m != ref_method and (m, case, bars) in checks}
    srm = f"{dev['srm']:.1e}" if "srm" in dev else "—"
    rest = {m: d for m, d in dev.items() if m != "srm"}
    worst = max(rest, key=rest.get) if rest else None
    check_rows.append([case, bars, f"`{ref_method}`", f"{ref:.10g}", srm,
                       f"{rest[worst]:.1e} (`{worst}`)" if worst else "—"])
for line in markdown_table([("case", False), ("bars", True), ("reference", False), ("check", True),
                            ("srm deviation", True), ("largest other deviation", True)], check_rows):
    print(line)
print()

for case in CASES:  # one plot per case: bench_report's plot tells series apart by method only
    suffix = f"({case.removeprefix('square-')})"
    part = {label.split(" (")[0]: pts for label, pts in series.items() if label.endswith(suffix)}
    if part:
        loglog_svg(part, f"{sys.argv[5]}/{case.replace('-', '_')}_scaling.svg",
                   f"{case}: CPU time per rk2 step (bench/run_square_nets.sh)", "bars", "µs per step")
print(machine_line(data, repetitions, sys.argv[4]))

if failed:
    print("run_square_nets.sh: benchmarks without a result:", file=sys.stderr)
    for f in failed:
        print("  " + f, file=sys.stderr)
if errors:
    print(f"run_square_nets.sh: CHECK VALUES DISAGREE (relative tolerance {REL_TOL:g}; cells marked ‡):",
          file=sys.stderr)
    for e in errors:
        print("  " + e, file=sys.stderr)
if failed or errors:
    sys.exit(1)
EOF
