#!/usr/bin/env python3
"""Work-precision diagrams from bench/work_precision's CSV (matplotlib):

    plot_work_precision.py RUNS_CSV OUT_SVG

One panel per case: CPU time of the whole run against the error of the reported point at the end,
one line per loopdyn integrator through its tolerances (each point labelled with the exponent),
one per MuJoCo integrator through its timesteps (its stable runs), and the case's precision
criterion as a vertical line."""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

TITLES = {"a05": "A05 stiff flyball governor, 10 s", "a05-350": "A05 stiff flyball governor, 350 s",
          "a03": "A03 Andrews' squeezer, 0.03 s",
          "a02-40": "A02 N = 40 four-bars, 20 s"}
CRITERIA = {"a05": 1e-3, "a05-350": 1e-3, "a03": 7e-6, "a02-40": 1e-3}  # work_precision.cpp's, in metres
STYLE = {"dopri5": ("#1f77b4", "o", "-", "loopdyn dopri5 (explicit)"),
         "bdf": ("#d62728", "s", "-", "loopdyn bdf (implicit, CVODE)"),
         "mujoco-Euler": ("#2ca02c", "v", "--", "MuJoCo Euler"),
         "mujoco-Euler stiff": ("#2ca02c", "^", ":", "MuJoCo Euler, stiff constraints"),
         "mujoco-RK4": ("#9467bd", "v", "--", "MuJoCo RK4"),
         "mujoco-RK4 stiff": ("#9467bd", "^", ":", "MuJoCo RK4, stiff constraints"),
         "mujoco-implicit": ("#8c564b", "v", "--", "MuJoCo implicit"),
         "mujoco-implicit stiff": ("#8c564b", "^", ":", "MuJoCo implicit, stiff constraints")}


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    with open(argv[1]) as f:
        rows = list(csv.DictReader(f))
    cases = [c for c in TITLES if any(r["case"] == c for r in rows)]
    plt.rcParams["svg.hashsalt"] = "loopdyn"  # the same file for the same numbers
    plt.rcParams["svg.fonttype"] = "none"  # text as text: a file of tens of kB, not hundreds
    columns = min(len(cases), 2)
    rows_of_panels = (len(cases) + 1) // 2
    fig, axes = plt.subplots(rows_of_panels, columns, figsize=(5.4 * columns, 4.8 * rows_of_panels), squeeze=False)
    for ax, case in zip(axes.flat, cases):
        for integrator, (colour, marker, line, label) in STYLE.items():
            pts = [(float(r["end_error"]), float(r["cpu"]), float(r["tolerance"]))
                   for r in rows if r["case"] == case and r["integrator"] == integrator]
            if not pts:
                continue
            pts.sort(key=lambda p: -p[2])
            ax.loglog([max(p[0], 1e-16) for p in pts], [p[1] for p in pts], marker=marker, linestyle=line,
                      color=colour, label=label, markersize=4)
            if not integrator.startswith("mujoco"):  # the tolerance's exponent beside each point
                for err, cpu, tol in pts:
                    ax.annotate(f"{tol:.0e}".replace("1e-0", "1e-").replace("1e", ""), (max(err, 1e-16), cpu),
                                textcoords="offset points", xytext=(4, 3), fontsize=7, color=colour)
        ax.axvline(CRITERIA[case], color="grey", linestyle="--", linewidth=1, label="precision criterion")
        ax.set_title(TITLES[case], fontsize=10)
        ax.set_xlabel("error of the reported point at the end [m]")
        ax.set_ylabel("CPU time of the run [s]")
        ax.invert_xaxis()
        ax.grid(True, which="major", linewidth=0.3)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(cases):]:
        ax.set_visible(False)
    fig.tight_layout()
    fig.savefig(argv[2], format="svg", metadata={"Date": None})


if __name__ == "__main__":
    main(sys.argv)
