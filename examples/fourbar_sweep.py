"""A parameter study on Dask: a four-bar's transmission angle over a grid of its ground and coupler
lengths (examples/fourbar_sweep.yaml, 49 designs, run by loopdyn.sweep on a local cluster of two
workers). For every design whose crank turns fully, the extreme transmission angles of the run are
checked against their closed form; the map and a few designs' angle over the crank angle are
plotted (fourbar_sweep.png). Run by the test suite; after scripts/quickstart.sh:
python3 examples/fourbar_sweep.py
"""
import csv
import math
import os
import pathlib

import matplotlib
import numpy as np

import loopdyn
from plot_file import save

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 (after the backend is chosen)

STUDY = pathlib.Path(__file__).resolve().parent / "fourbar_sweep.yaml"
CRANK, ROCKER = 0.4, 0.8  # a, c of models/fourbar_anderson.yaml
D, B = "joints.rocker_ground.child_frame.xyz.0", "joints.coupler_pin.parent_frame.xyz.0"

if __name__ == "__main__":  # Dask's worker processes import this file again: run the study once
    out = "fourbar_sweep.results.csv"
    if os.path.exists(out):
        os.remove(out)
    summary = loopdyn.sweep(STUDY, out=out, workers=2, progress=False)
    with open(out, newline="") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    print(f"four-bar sweep: {summary.runs} designs in {summary.seconds:.1f} s on 2 workers: {summary.completed} "
          f"completed, {summary.stopped} stopped, {summary.failed} failed")
    if len(rows) != summary.runs:
        raise SystemExit(f"{summary.runs} runs but {len(rows)} rows")

    def transmission(row):
        """The transmission angle at B (between B->A and B->C) over the run, and the crank angle."""
        s = np.loadtxt(os.path.join("fourbar_sweep.results.series", f"run-{int(row['run']):06d}.csv"), delimiter=",",
                       skiprows=1)
        a, b, c = s[:, 1:3], s[:, 3:5], np.array([float(row[D]), 0.0])
        ba, bc = a - b, c - b
        cos = np.sum(ba * bc, axis=1) / np.linalg.norm(ba, axis=1) / np.linalg.norm(bc, axis=1)
        return np.degrees(np.arccos(np.clip(cos, -1, 1))), np.degrees(np.arctan2(s[:, 2], s[:, 1]))

    # The closed form: by the law of cosines in A-B-C, cos mu = (b^2 + c^2 - |AC|^2) / (2 b c), and
    # |AC| runs from d - a (crank along the ground link) to d + a (crank opposite) over a turn.
    worst, turning, changing = 0.0, 0, 0
    grid = {}
    for row in rows:
        d, b = float(row[D]), float(row[B])
        full = row["status"] == "completed" and float(row["max.q.crank_pivot"]) - float(row["min.q.crank_pivot"]) >= 2 * math.pi
        if not full:
            grid[(d, b)] = math.nan
            continue
        mu, _ = transmission(row)
        grid[(d, b)] = mu.min()
        lengths = sorted([CRANK, b, ROCKER, d])
        if abs(lengths[0] + lengths[3] - lengths[1] - lengths[2]) < 1e-9:
            # A change-point design (s + l = p + q) goes flat once a turn: there the angle touches 0
            # with a corner, where samples 0.002 s apart miss the extreme by up to a degree.
            changing += 1
            continue
        extremes = [math.degrees(math.acos((b * b + ROCKER ** 2 - (d + s * CRANK) ** 2) / (2 * b * ROCKER))) for s in (-1, 1)]
        worst = max(worst, abs(mu.min() - extremes[0]), abs(mu.max() - extremes[1]))
        turning += 1
    print(f"  {turning + changing} designs turn fully ({changing} of them change-point designs); the others' extreme "
          f"transmission angles against the closed form: largest difference {worst:.3f} deg")
    # Samples every 0.002 s at ~8 rad/s are 0.9 deg of crank apart: near an extreme the angle is
    # quadratic in the crank angle, so the sampled extreme is within ~0.1 deg of the true one.
    if turning == 0 or worst > 0.2:
        raise SystemExit("the transmission angles are not the closed form's")
    for row in rows:
        if row["status"] != "completed":
            print(f"  d = {float(row[D]):.1f}, b = {float(row[B]):.1f}: {row['status']}: {row['message'][:110]}")
            break

    ds, bs = sorted({k[0] for k in grid}), sorted({k[1] for k in grid})
    image = np.array([[grid[(d, b)] for d in ds] for b in bs])
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5))
    shown = left.imshow(image, origin="lower", cmap="viridis", extent=(ds[0] - 0.05, ds[-1] + 0.05, bs[0] - 0.05, bs[-1] + 0.05),
                        aspect="auto")
    fig.colorbar(shown, ax=left, label="smallest transmission angle over a turn (deg)")
    left.set(xlabel="ground link d (m)", ylabel="coupler b (m)",
             title="crank 0.4 m, rocker 0.8 m (blank: the crank does not turn)")
    for row in rows:
        if (row["status"] == "completed" and not math.isnan(grid[(float(row[D]), float(row[B]))])
                and float(row[B]) in (bs[1], bs[3]) and float(row[D]) in (ds[1], ds[3], ds[5])):
            mu, theta = transmission(row)
            right.plot(np.mod(theta, 360), mu, ".", ms=1.5, label=f"d = {float(row[D]):.1f}, b = {float(row[B]):.1f}")
    right.set(xlabel="crank angle (deg)", ylabel="transmission angle (deg)", title="designs that turn")
    right.legend(fontsize=7, markerscale=6)
    save(fig, "fourbar_sweep.png")
