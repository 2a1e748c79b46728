#!/usr/bin/env bash
# Builds bench_dca (Release, in build-bench/ via build_bench.sh), runs it with 10 repetitions of at
# least 0.05 s each (a call longer than that is one iteration per repetition: the 1012-bar net's dca
# calls take about 0.2 s) and prints the markdown of docs/performance.md, section "dca: divide and
# conquer (paper 004)". Python 3 standard library only. About 4-6 minutes on 2 cores, of which about
# 30 s in Model::build of the largest ladder and net, and dca's untimed check (untimed).
#
# Benchmark names: `<method>/<case>/<size>`, with the thread count of dca encoded as a last part,
# `dca/chain/256/threads:2` (FormulationSettings::threads = 2) and `dca/chain/256/threads:1`;
# `dca-projection/<case>/<size>/threads:1` is one Dca::project. Google Benchmark appends
# `/real_time`: every benchmark uses UseRealTime(), so that the 2-thread times (wall clock) and the
# 1-thread ones are comparable; the tables' times are median REAL (wall-clock) µs per call, and the
# exponents and speed-ups are also given on the best times (`min` over the repetitions, bench_dca):
# interleaved over the run, the least of them is the code's cost with the noise of the shared
# machine taken out, since noise only adds time.
#
# Printed:
#  1. per case (chain-N, ladder-comb, square net) a table: rows n (bodies), columns dca at 1 and 2
#     threads, their speed-up T1/T2, dca-projection (1 thread), embedding, srm, lagrange-dense (up to
#     about 1024 bodies: O(n³)), tree (the chain only), and the untimed Model::build time of the case.
#     embedding and srm run at every size (embedding on the 4140-bar net: seconds per call);
#  2. per case the least-squares log-log exponent of time against n over n >= 64 (and over the last
#     size step) of every column, of the median and of the best times, the target p <= 1.1 for dca
#     at one thread beside it, then the speed-up T1/T2 >= 1.6 target from n >= 256, of the medians
#     and of the best times, and the median of the paired speed-ups (dca-paired: a 1-thread and a
#     2-thread call back to back, alternating, over every repetition, so that both see the same
#     state of the shared host); misses are marked **no** (they do not fail the script);
#  3. a PROJECTION (a model, not a measurement) to 16 and 64 cores at the largest sizes of each case:
#         T_p = max(T1/p + c_top · log2(p), T1 · CP/W),   c_top = max(T2 − T1/2, 0)
#     (c_top: the serial part seen at 2 threads, taken as the cost of the top-level node work, paid
#     once per level of the assembly tree that has fewer subtrees than cores, log2 p of them), with
#     beside it the ideal bound of the same model with c_top = T1/(2n − 1), the mean cost of one of
#     the 2n − 1 nodes of the assembly tree (all nodes equal: exact in shape for chains and ladders,
#     whose nodes all have 2 or 4 handles; an underestimate on nets, whose top nodes are the largest);
#     D = ceil(log2 n) is the tree depth of a bisection down to single bodies (the measured depth
#     counter beside it), and the bound of the tree's critical path, T1 · max(1/p, CP/W), with W
#     and CP the multiply-adds of the whole factoring and of its critical path (Dca::TreeShape);
#     then what would stop O(k log n) scaling;
#  4. the check values, the machine line and the exact command.
# Also writes log-log plots to build-bench/dca_<case>_scaling.svg (every method, one case) and
# build-bench/dca_scaling.svg (dca at 1 and 2 threads, the three cases; docs/dca-scaling.svg is a copy).
#
# Check: `check` = u̇ of speed 0 from joint_accelerations at the benchmark state, the same quantity
# for every method. Fails (exit 1, after printing everything, offending cells marked ‡) when a
# method's value differs by more than 1e-6 relative from the reference's at the same case and size,
# or when a benchmark has no result. The reference is computed by another code path than dca's
# (joint coordinates, not absolute ones) and without a dense n x n elimination, whose round-off
# grows with n (lagrange-dense: 5e-7 relative on chain-1024, 1e-8 on the 1026-body ladder where
# dca, embedding and srm agree to 1e-13): on the chain, which has no loops, `tree` (the
# articulated-body algorithm, exact); on the ladders and nets `srm`, whose check uses its exact
# multipliers (conjugate gradients on G M⁻¹ Gᵀ to 1e-13 relative residual with the tree's O(n)
# solves, formulations/srm.hpp).
#
# The benchmarks' repetitions run in random order (--benchmark_enable_random_interleaving): on a
# virtual machine the two cores' placement on the host (two hardware threads of one core, or two
# cores) changes from minute to minute and is invisible here; interleaving spreads such episodes
# over every benchmark instead of letting one of them fall on a few consecutive cells.
#
#   bench/run_dca.sh                                       # everything
#   bench/run_dca.sh --benchmark_filter='/chain/(16|32)/'  # extra arguments go to bench_dca
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/build_bench.sh"
out="$build/bench_dca.json"
repetitions=10
min_time=0.05

build_bench bench_dca

run_bench bench_dca "$out" "$repetitions" "$min_time" --benchmark_enable_random_interleaving=true "$@"

python3 - "$out" "$repetitions" "$root/bench" "$min_time" "$build" "bench/run_dca.sh${*:+ $*}" <<'EOF'
import math
import sys

sys.path.insert(0, sys.argv[3])
from bench_report import close, load, loglog_svg, machine_line, markdown_table, slope, time_in

REL_TOL = 1e-6
FIT_FROM = 64            # bodies
SPEEDUP_FROM = 256       # bodies
TARGET_EXPONENT, TARGET_SPEEDUP = 1.1, 1.6
CASES = [("chain", "chain-N"), ("ladder-comb", "ladder-comb (3L bodies)"),
         ("square-net", "square net R × R, tilt 0.5 (2R² + 2R bars)")]
COLUMNS = [("dca:1", "dca 1 thread"), ("dca:2", "dca 2 threads"), ("dca-projection:1", "dca-projection 1 thread"),
           ("embedding", "embedding"), ("srm", "srm"), ("lagrange-dense", "lagrange-dense"), ("tree", "tree")]
REFERENCES = ["tree", "srm"]  # the first one run at a case and size (see the header)
PROJECT_TO = [16, 64]
CONTENDED = 0.2  # cores used by other processes during a 2-thread run

data, rows, order = load(sys.argv[1])
reps = sorted({int(b["repetitions"]) for b in data["benchmarks"] if "repetitions" in b})
repetitions = "/".join(map(str, reps)) if reps else sys.argv[2]

# times[(column, case, n)] = median real µs per call; checks likewise; extra[(case, n)] = counters
times, best, checks, extra, failed, others, paired = {}, {}, {}, {}, [], {}, {}
for name in order:
    parts = name.split("/")
    if parts[-1] == "real_time":
        parts = parts[:-1]
    method, case = parts[0], parts[1]
    column = method + (":" + parts[3].removeprefix("threads:") if len(parts) > 3 else "")
    med = rows[name].get("median")
    if med is None or med.get("error_occurred"):
        entry = next(iter(rows[name].values()))
        failed.append(f"{name}: {entry.get('error_message', 'no median')}")
        continue
    n = int(med["bodies"])
    key = (column, case, n)
    times[key] = time_in(med, "real_time", "us")
    best[key] = time_in(rows[name]["min"], "real_time", "us")
    if column == "dca:2":
        # median over the repetitions: a 2-thread time is only meaningful with the second core free
        others[key] = med.get("others", 0.0)
    checks[key] = med["check"]
    if column == "dca-paired":
        paired[(case, n)] = (med["speedup"], med.get("others", 0.0))
    e = extra.setdefault((case, n), {"size": parts[2]})
    e["build_s"] = med["build_s"]
    if column == "dca:1":
        e.update(depth=int(med["depth"]), handles=int(med["handles"]), rows=int(med["rows"]),
                 work=med["factor_Mmadds"], critical=med["critical_Mmadds"],
                 acc_it=int(med["acc_it"]), solve_mb=med["solve_MB"], kc_mb=med["kc_MB"])
    if column == "dca-projection:1":
        e.update(pos_it=int(med["pos_it"]), vel_it=int(med["vel_it"]))

columns = [(c, title) for c, title in COLUMNS if any(k[0] == c for k in times)]


def sizes_of(case):
    return sorted(n for c, n in extra if c == case)


def fmt(t):
    return f"{t:.4g}" if t < 1e5 else f"{t:.3e}"


# Check values against the reference.
errors, bad, reference = [], set(), {}
for (case, n) in extra:
    for m in REFERENCES:
        if (m, case, n) in checks:
            reference[(case, n)] = (m, checks[(m, case, n)])
            break
for (column, case, n), check in sorted(checks.items()):
    if (case, n) not in reference or column == reference[(case, n)][0]:
        continue
    ref_method, ref = reference[(case, n)]
    if not close(check, ref, REL_TOL):
        bad.add((column, case, n))
        errors.append(f"{column}/{case}/{n} bodies: check {check:.12g} differs from {ref_method}'s {ref:.12g} "
                      f"by {abs(check - ref) / max(abs(check), abs(ref)):.2e} relative")


def cell(column, case, n):
    key = (column, case, n)
    if key not in times:
        return "—"
    return fmt(times[key]) + (" ‡" if key in bad else "")


def contended(case, n):
    return others.get(("dca:2", case, n), 0.0) > CONTENDED


def speedup(case, n, of=None):
    of = times if of is None else of
    if ("dca:1", case, n) in of and ("dca:2", case, n) in of:
        return of[("dca:1", case, n)] / of[("dca:2", case, n)]
    return None


# 1. Tables.
for case, title in CASES:
    sizes = sizes_of(case)
    if not sizes:
        continue
    print(f"**{title}**: median real (wall-clock) µs per call of `derivative` (`dca-projection`: per `Dca::project`); "
          "speed-up = dca 1 thread / dca 2 threads; build = Model::build, untimed")
    print()
    head = [("n (bodies)", True), ("size in name", True)]
    case_columns = [(c, t) for c, t in columns if c != "tree" or case == "chain"]
    for c, t in case_columns:
        head.append((t, True))
        if c == "dca:2":
            head.append(("speed-up", True))
    head.append(("build (s)", True))
    table = []
    for n in sizes:
        row = [n, extra[(case, n)]["size"]]
        for c, _ in case_columns:
            row.append(cell(c, case, n))
            if c == "dca:2":
                s = speedup(case, n)
                row.append((f"{s:.2f}" + (" (c)" if contended(case, n) else "")) if s else "—")
        row.append(f"{extra[(case, n)]['build_s']:.3g}")
        table.append(row)
    for line in markdown_table(head, table):
        print(line)
    print()
    skipped = []
    for c, t in case_columns:
        missing = [n for n in sizes if (c, case, n) not in times]
        if missing:
            why = ("O(n³), run up to about 1024 bodies only" if c == "lagrange-dense" else
                   "no result (see the end of the output)")
            skipped.append(f"`{t}` at n = {', '.join(map(str, missing))} ({why})")
    if skipped:
        print("Not run: " + "; ".join(skipped) + ".")
        print()

# 2. Exponents and speed-ups.
print(f"Fitted exponent p, time ∝ n^p, least squares on log-log over n >= {FIT_FROM} and over the last size "
      f"step, of the median times and of the best (least of the {repetitions} repetitions, interleaved over the "
      f"run); target for dca at one thread: p <= {TARGET_EXPONENT}:")
print()
exp_rows, series_all = [], {}
for case, _ in CASES:
    for c, t in columns:
        pts = sorted((n, v) for (cc, ca, n), v in times.items() if cc == c and ca == case)
        if pts:
            series_all[(case, c)] = pts
        fit = [(n, v) for n, v in pts if n >= FIT_FROM]
        if len(fit) < 2:
            continue
        p = slope(fit)
        p_best = slope([(n, best[(c, case, n)]) for n, _ in fit])
        target = met = ""
        if c == "dca:1":
            target = f"<= {TARGET_EXPONENT}"
            met = "/".join("yes" if v <= TARGET_EXPONENT else "**no**" for v in (p, p_best))
        exp_rows.append([case, t, f"{p:.2f} (n = {fit[0][0]}..{fit[-1][0]})", f"{p_best:.2f}",
                         f"{slope(fit[-2:]):.2f} (n = {fit[-2][0]}..{fit[-1][0]})", target, met])
for line in markdown_table([("case", False), ("method", False), ("p, fit", True), ("p, fit on best", True),
                            ("local p, last step", True), ("target", False), ("met (median/best)", False)], exp_rows):
    print(line)
print()

print(f"dca speed-up on 2 threads, T1/T2 (real time) of the medians and of the best times of the separate "
      f"benchmarks, and the median of the paired ratios (dca-paired: one call at each thread count back to back, "
      f"alternating, every repetition), target >= {TARGET_SPEEDUP} from n >= {SPEEDUP_FROM}:")
print()
sp_rows = []
for case, _ in CASES:
    for n in sizes_of(case):
        s = speedup(case, n)
        if s is None or n < SPEEDUP_FROM:
            continue
        sb = speedup(case, n, best)
        sp = paired.get((case, n), (None, 0.0))[0]
        sp_rows.append([case, n, fmt(times[("dca:1", case, n)]), fmt(times[("dca:2", case, n)]), f"{s:.2f}",
                        fmt(best[("dca:1", case, n)]), fmt(best[("dca:2", case, n)]), f"{sb:.2f}",
                        f"{sp:.2f}" if sp else "—", f">= {TARGET_SPEEDUP}",
                        "/".join("—" if v is None else "yes" if v >= TARGET_SPEEDUP else "**no**" for v in (s, sb, sp)) +
                        (" (c)" if contended(case, n) else ""),
                        f"{others[('dca:2', case, n)]:.2f}" if ("dca:2", case, n) in others else "—"])
for line in markdown_table([("case", False), ("n", True), ("T1 µs", True), ("T2 µs", True), ("T1/T2", True),
                            ("best T1 µs", True), ("best T2 µs", True), ("best T1/T2", True),
                            ("paired T1/T2", True), ("target", False), ("met (median/best/paired)", False),
                            ("others (cores)", True)], sp_rows):
    print(line)
print()

# 3. Projection (a model, not a measurement).
print("**Projection to 16 and 64 cores (a MODEL evaluated on the measurements above, not a measurement; "
      "this machine has 2 cores):**")
print()
print("    T_p = max(T1/p + c_top · log2(p), T1 · CP/W),   c_top = max(T2 − T1/2, 0)")
print()
print("T1, T2: the measured median real times at 1 and 2 threads. c_top is the serial part seen at 2 threads, "
      "taken as the cost of the top-level node work, paid once for each of the log2(p) levels of the assembly tree "
      "that have fewer subtrees than cores. 'ideal' uses instead c_top = T1/(2n − 1), the mean cost of one of the "
      "2n − 1 nodes of the tree (every node equal: the shape of a chain's or ladder's tree, whose nodes all have 2 or "
      "4 handles; on a net the top nodes are the largest, so there it is a lower bound). D = ceil(log2 n) is the "
      "depth of a bisection down to single bodies; 'depth' is that of dca's assembly tree (Dca::tree_shape). "
      "CP/W: the multiply-adds on the critical path of the parallel factoring over those of the whole factoring "
      "(Dca::TreeShape, counted, not timed); no schedule on p cores does better than T1 · max(1/p, CP/W), "
      "the 'bound' columns, below which the projection is not taken (for the factoring; the solves' sweeps follow the same tree with a node's work like "
      "its handles² rather than handles³: the same share on chains and ladders, a smaller one on nets).")
print()
pr_rows = []
for case, _ in CASES:
    have = [n for n in sizes_of(case) if speedup(case, n) is not None]
    for n in have[-2:]:
        t1, t2 = times[("dca:1", case, n)], times[("dca:2", case, n)]
        c_top = max(t2 - t1 / 2, 0.0)
        c_ideal = t1 / (2 * n - 1)
        proj = [t1 / p + c_top * math.log2(p) for p in PROJECT_TO]
        ideal = [t1 / p + c_ideal * math.log2(p) for p in PROJECT_TO]
        e = extra[(case, n)]
        share = e["critical"] / e["work"] if e["work"] > 0 else 1.0
        bound = [t1 * max(1.0 / p, share) for p in PROJECT_TO]
        proj = [max(v, b) for v, b in zip(proj, bound)]
        pr_rows.append([case, n, math.ceil(math.log2(n)), e["depth"], e["handles"], fmt(t1), fmt(t2), fmt(c_top),
                        *[fmt(v) for v in proj], *[fmt(v) for v in ideal], f"{share:.3f}",
                        *[fmt(v) for v in bound]])
for line in markdown_table([("case", False), ("n", True), ("D", True), ("depth", True), ("max handles", True),
                            ("T1 µs (measured)", True), ("T2 µs (measured)", True), ("c_top µs", True),
                            *[(f"T{p} µs (projected)", True) for p in PROJECT_TO],
                            *[(f"T{p} µs (ideal, projected)", True) for p in PROJECT_TO], ("CP/W", True),
                            *[(f"T{p} µs (bound)", True) for p in PROJECT_TO]], pr_rows):
    print(line)
print()
net = [n for n in sizes_of("square-net") if "handles" in extra[("square-net", n)]]
net_text = ""
if len(net) >= 2:
    h0, h1 = extra[("square-net", net[0])]["handles"], extra[("square-net", net[-1])]["handles"]
    net_text = (f" (measured here: {h0} handles at {net[0]} bars, {h1} at {net[-1]}; handle-count exponent "
                f"{slope([(net[0], h0), (net[-1], h1)]):.2f})")
cp_text = ""
if net and "critical" in extra[("square-net", net[-1])]:
    big = [n for n in net if n >= SPEEDUP_FROM]
    shares = [extra[("square-net", n)]["critical"] / extra[("square-net", n)]["work"] for n in big]
    cp_text = (f" (CP/W, counted: {min(shares):.2f} to {max(shares):.2f} over {big[0]}..{big[-1]} bars: no "
               f"number of cores makes the factoring more than {1 / max(shares):.1f} to {1 / min(shares):.1f} "
               "times faster than one there)")
iters = sorted({e["acc_it"] for e in extra.values() if "acc_it" in e})
print("What would stop the O(k log n) parallel scaling (k: iterations of the multipliers per call):")
print()
print("- Task overhead per level: every level of the assembly tree is a fork and a join (oneTBB "
      "parallel_invoke down to subtrees of Dca::kParallelGrain bodies); below the grain a subtree runs on one "
      "thread, and each of the D levels above it pays a spawn/steal/join and a cache miss on the children's "
      "K_C and R_C, per iteration.")
print("- Memory bandwidth: a node's work is a few small dense products; with all cores streaming the "
      "factors, G's blocks and the per-iteration vectors, the cores share one memory bus and T1/p is not "
      "reached.")
print("- Nets: the handles of the top nodes grow like sqrt(n) (the cuts of the nested dissection)" + net_text +
      ", so a node's dense Schur complement costs like handles³ and the root's like n^1.5, as the whole "
      "factoring does: the nodes from a subtree's root to the tree's root are a fixed share of the work at "
      "every n, and they run one after the other: the critical path is O(n^1.5) rather than O(log n)" +
      cp_text + ". Splitting the work of those nodes among the cores (blocked dense factoring) would lower "
      "it; at 2 threads CP/W < 1/2 already, and the same split, tried, did not change the 2-thread times.")
print(f"- The iteration count k: every call repeats the solve (vectors only) k times (measured acc_it: "
      f"{', '.join(map(str, iters))}; the maximum is FormulationSettings::dca_max_iterations), and each "
      "iteration is a full up-and-down sweep with its own synchronisation at every level.")
print("- The parts outside the tree: the loops over bodies and rows (positions, G's blocks, residuals, "
      "masses) run in parallel chunks of Dca::kParallelLoopGrain, but each is a fork and a join; the vector "
      "updates of each iteration and its convergence test (a maximum over the state) stay serial, O(n) "
      "(Amdahl).")
print()

# 4. Checks, skipped sizes, machine, command.
print(f"Check values (u̇ of speed 0 from joint_accelerations at the benchmark state) against the reference "
      f"(tree on the chain, srm's exact multipliers on the ladders and nets); largest relative deviation "
      f"of each method (tolerance {REL_TOL:g}):")
print()
ck_rows = []
ck_columns = [(c, t) for c, t in columns if c != "tree"]  # tree is only ever the reference
for case, _ in CASES:
    for n in sizes_of(case):
        if (case, n) not in reference:
            continue
        ref_method, ref = reference[(case, n)]
        row = [case, n, f"`{ref_method}`", f"{ref:.12g}"]
        for c, _ in ck_columns:
            key = (c, case, n)
            if c == ref_method or key not in checks:
                row.append("—")
            else:
                d = abs(checks[key] - ref) / max(abs(checks[key]), abs(ref))
                row.append(f"{d:.1e}" + (" ‡" if key in bad else ""))
        ck_rows.append(row)
for line in markdown_table([("case", False), ("n", True), ("reference", False), ("check", True),
                            *[(t, True) for _, t in ck_columns]], ck_rows):
    print(line)
print()
it_rows = []
for case, _ in CASES:
    for n in sizes_of(case):
        e = extra[(case, n)]
        if "acc_it" in e:
            # Each iteration is one upward and one downward sweep through the solve data; the first
            # upward one also writes the K_C kept per node, which the parents' factoring reads (the
            # others stay on a thread's small stack, in the caches).
            streamed = 2 * e["acc_it"] * e["solve_mb"] + 2 * e["kc_mb"]
            rate = f"{streamed / times[('dca:1', case, n)] * 1e3:.2f}" if ("dca:1", case, n) in times else "—"
            it_rows.append([case, n, e["rows"], e["acc_it"], e.get("pos_it", "—"), e.get("vel_it", "—"),
                            f"{e['solve_mb']:.3g}", f"{e['kc_mb']:.3g}", f"{streamed:.3g}", rate])
print("dca's iteration counts at the benchmark state (acceleration: per call of derivative; position and velocity: "
      "per projection; at most FormulationSettings::dca_max_iterations), its constraint rows, and the size of its "
      "tree (Dca::TreeShape, 10⁶ bytes): the solve data every sweep reads (G's blocks, X, L, the vectors, the index "
      "lists) and the K_C kept per node (those of the children of nodes of at least Dca::kParallelGrain bodies; "
      "the others live on a per-thread stack of Dca::TreeShape::stack_bytes, in the caches); "
      "'streamed' = 2 · iterations · solve data + 2 · K_C, the bytes one call of derivative moves "
      "through the tree at least, and that over dca's one-thread time (GB/s; an estimate: the body loops and the "
      "scratch are left out):")
print()
for line in markdown_table([("case", False), ("n", True), ("rows", True), ("acceleration", True), ("position", True),
                            ("velocity", True), ("solve data MB", True), ("K_C MB", True), ("streamed MB", True),
                            ("streamed / T1 (GB/s)", True)], it_rows):
    print(line)
print()

build = sys.argv[5]
for case, _ in CASES:
    part = {t: series_all[(case, c)] for c, t in columns if (case, c) in series_all}
    if part:
        loglog_svg(part, f"{build}/dca_{case.replace('-', '_')}_scaling.svg",
                   f"{case}: real time per call (bench/run_dca.sh)", "bodies", "µs per call")
both = {}
for case, _ in CASES:
    for c, t in [("dca:1", "1 thread"), ("dca:2", "2 threads")]:
        if (case, c) in series_all:
            both[f"dca {t}, {case}"] = series_all[(case, c)]
if both:
    loglog_svg(both, f"{build}/dca_scaling.svg", "dca: real time per call of derivative (bench/run_dca.sh)",
               "bodies", "µs per call")

print(machine_line(data, repetitions, sys.argv[4]))
if others:
    loaded = sorted(k for k, v in others.items() if v > CONTENDED)
    print()
    print(f"Contention: during the 2-thread dca runs other processes used up to {max(others.values()):.2f} "
          f"cores (largest median of `others` over the repetitions; 0 on an idle machine); speed-ups marked (c) ran with more than "
          f"{CONTENDED} core taken by other processes: " + (", ".join(f"{c}/{n}" for _, c, n in loaded) or "none") + ".")
print()
print(f"Command: `{sys.argv[6]}`")

if failed:
    print("run_dca.sh: benchmarks without a result:", file=sys.stderr)
    for f in failed:
        print("  " + f, file=sys.stderr)
if errors:
    print(f"run_dca.sh: CHECK VALUES DISAGREE (relative tolerance {REL_TOL:g}; cells marked ‡):", file=sys.stderr)
    for e in errors:
        print("  " + e, file=sys.stderr)
if failed or errors:
    sys.exit(1)
EOF
