"""Shared pieces of the bench/run_*.sh reports (Python 3 standard library only): Google Benchmark
JSON aggregates by run name, a time in a chosen unit, the log-log slope and the machine line."""
import json
import math
import platform
import subprocess


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
