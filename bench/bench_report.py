"""Shared pieces of the bench/run_*.sh reports (Python 3 standard library only): building and
running a benchmark program, Google Benchmark JSON aggregates by run name, a time in a chosen unit,
check-value agreement, markdown tables, the log-log slope and plot, and the machine line."""
import json
import math
import os
import platform
import subprocess
import sys


def build_and_run(root, target, repetitions, min_time, args):
    """Configures <root> (Release, benchmarks on, tests off) in $LOOPDYN_BENCH_BUILD (default
    <root>/build-bench), builds `target` there with $LOOPDYN_BENCH_JOBS parallel jobs (default: every
    core), runs it with `repetitions` repetitions of at least `min_time` s, aggregates only, extra
    arguments `args`, and returns the path of its JSON output (<build>/<target>.json). On a failed
    step: the log on stderr and exit 1."""
    build = os.environ.get("LOOPDYN_BENCH_BUILD") or os.path.join(root, "build-bench")
    jobs = os.environ.get("LOOPDYN_BENCH_JOBS") or str(os.cpu_count() or 1)
    os.makedirs(build, exist_ok=True)
    steps = [("configure", ["cmake", "-S", root, "-B", build, "-DCMAKE_BUILD_TYPE=Release", "-DLOOPDYN_TESTS=OFF",
                            "-DLOOPDYN_BENCH=ON"]),
             ("build", ["cmake", "--build", build, "--target", target, "-j", jobs])]
    for step, command in steps:
        log = os.path.join(build, step + ".log")
        with open(log, "w") as f:
            done = subprocess.run(command, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            with open(log) as f:
                sys.stderr.write("".join(f.readlines()[-50:]))
            sys.exit(1)
    out = os.path.join(build, target + ".json")
    command = [os.path.join(build, "bench", target), "--benchmark_format=json",
               f"--benchmark_repetitions={repetitions}", f"--benchmark_min_time={min_time}",
               "--benchmark_report_aggregates_only=true", f"--benchmark_out={out}", *args]
    if subprocess.run(command, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL).returncode != 0:
        sys.exit(1)
    return out


def load(path):
    """(data, rows, order): rows maps run_name -> {aggregate_name: entry}, order keeps first-seen order."""
    with open(path) as f:
        data = json.load(f)
    rows, order = {}, []
    for b in data["benchmarks"]:
        name = b["run_name"]
        if name not in rows:
            rows[name] = {}
            order.append(name)
        rows[name][b.get("aggregate_name", "")] = b
    return data, rows, order


def time_in(entry, field, unit):
    """entry[field] converted from the entry's time_unit to unit ("ns", "us", "ms", "s")."""
    seconds = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
    return entry[field] * seconds[entry["time_unit"]] / seconds[unit]


def slope(points):
    """Least-squares slope of log(y) against log(x) over [(x, y), ...]."""
    xs = [math.log(x) for x, _ in points]
    ys = [math.log(y) for _, y in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def close(a, b, rel_tol):
    """a and b agree to rel_tol relative to the larger magnitude."""
    return abs(a - b) <= rel_tol * max(abs(a), abs(b))


def exit_on_errors(script, errors, rel_tol):
    """With any errors: prints them on stderr under a CHECK VALUES DISAGREE line and exits 1."""
    if not errors:
        return
    print(f"{script}: CHECK VALUES DISAGREE (relative tolerance {rel_tol:g}):", file=sys.stderr)
    for e in errors:
        print("  " + e, file=sys.stderr)
    sys.exit(1)


def cv_text(row, field="cpu_time"):
    """The coefficient of variation of a run's repetitions (row: {aggregate_name: entry}) in per cent."""
    cv = row.get("cv")
    return f"{100.0 * cv[field]:.1f} %" if cv else "n/a"


def markdown_table(columns, rows):
    """Markdown lines of a table: columns [(title, right_aligned), ...], rows [[cell, ...], ...]."""
    lines = ["| " + " | ".join(title for title, _ in columns) + " |",
             "|" + "".join("---:|" if right else "---|" for _, right in columns)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return lines


def exponent_rows(series, fit_from, var="L"):
    """Per series (label -> [(x, time), ...] in increasing x with at least two points x >= fit_from):
    [label, least-squares log-log exponent over x >= fit_from, local exponent of the last doubling]."""
    rows = []
    for label, points in series.items():
        fit = [(x, y) for x, y in points if x >= fit_from]
        if len(fit) >= 2:
            rows.append([label, f"{slope(fit):.2f} ({var} = {fit[0][0]}..{fit[-1][0]})",
                         f"{slope(fit[-2:]):.2f} ({var} = {fit[-2][0]}..{fit[-1][0]})"])
    return rows


def machine_line(data, repetitions, min_time=None):
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
    load_avg = ", ".join(f"{x:.2f}" for x in ctx.get("load_avg", []))
    return (f"Machine: {cpu_model}, nproc = {nproc}, {ctx.get('mhz_per_cpu', '?')} MHz, "
            f"{platform.system()} {platform.release()}; load average at start {load_avg}; "
            f"Google Benchmark library build type: {ctx.get('library_build_type', '?')}; "
            f"run {ctx.get('date', '?')}; {repetitions} repetitions"
            + (f" of at least {min_time} s" if min_time else "") + ", aggregates only.")


def loglog_svg(series, path, title, xlabel, ylabel):
    """Writes a log-log line plot as SVG: series maps a label to [(x, y), ...] (x, y > 0). Labels
    ending in "(comb)" are drawn dashed, so a method keeps its colour in both layouts."""
    width, height, left, right, top, bottom = 760, 480, 70, 230, 40, 50
    xs = [x for pts in series.values() for x, _ in pts]
    ys = [y for pts in series.values() for _, y in pts]
    lx0, lx1 = math.floor(math.log10(min(xs))), math.ceil(math.log10(max(xs)))
    ly0, ly1 = math.floor(math.log10(min(ys))), math.ceil(math.log10(max(ys)))
    lx1, ly1 = max(lx1, lx0 + 1), max(ly1, ly0 + 1)

    def px(x):
        return left + (math.log10(x) - lx0) / (lx1 - lx0) * (width - left - right)

    def py(y):
        return height - bottom - (math.log10(y) - ly0) / (ly1 - ly0) * (height - top - bottom)

    colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"]
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
           f'font-size="12"><rect width="100%" height="100%" fill="white"/>',
           f'<text x="{width / 2 - right / 2}" y="22" text-anchor="middle" font-size="14">{title}</text>']
    for k in range(ly0, ly1 + 1):
        y = py(10 ** k)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{width - right}" y2="{y:.1f}" stroke="#ddd"/>'
                   f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">1e{k}</text>')
    for k in range(lx0, lx1 + 1):
        x = px(10 ** k)
        out.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{height - bottom}" stroke="#ddd"/>'
                   f'<text x="{x:.1f}" y="{height - bottom + 16}" text-anchor="middle">1e{k}</text>')
    out.append(f'<text x="{(left + width - right) / 2}" y="{height - 10}" text-anchor="middle">{xlabel}</text>')
    out.append(f'<text x="16" y="{(top + height - bottom) / 2}" text-anchor="middle" '
               f'transform="rotate(-90 16 {(top + height - bottom) / 2})">{ylabel}</text>')
    methods = []
    for label in series:
        base = label.split(" (")[0]
        if base not in methods:
            methods.append(base)
    for i, (label, pts) in enumerate(series.items()):
        colour = colours[methods.index(label.split(" (")[0]) % len(colours)]
        dash = ' stroke-dasharray="6,4"' if label.endswith("(comb)") else ""
        line = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in pts)
        out.append(f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>')
        ly = top + 16 * i
        out.append(f'<line x1="{width - right + 12}" y1="{ly}" x2="{width - right + 40}" y2="{ly}" '
                   f'stroke="{colour}" stroke-width="2"{dash}/><text x="{width - right + 46}" y="{ly + 4}">{label}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
