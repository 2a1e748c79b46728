"""How parameter studies scale on Dask (bench/run_sweep.sh; docs/sweeps.md, "Scale"): a 1,000-run
four-bar study and a 100-run 64-cell ladder study, each run three ways: in this one process
without Dask (the runs' own cost: loopdyn.sweeps._batch over all of them), then loopdyn.sweep on a
LocalCluster of 1 and of 2 worker processes, each way three times (the best counts: this shared
machine's wall times vary by 10 % and more from one run to the next). Prints one Markdown row per
study and way: runs per second (the cluster's start excluded, timed apart), the speed-up over 1
worker and over the one process, and Dask's cost per task against the one-process runs.

    PYTHONPATH=build/python python3 bench/sweep_scale.py FOURBAR.yaml LADDER64.yaml
"""
import math
import os
import sys
import tempfile
import time

from loopdyn import sweeps

ROUNDS = 3
STUDIES = {
    "four-bar, 1,000 runs of 1 s": """\
model: {model}
settings: {{t_end: 1.0}}
parameters:
  bodies.coupler.mass: {{linspace: [1, 3, 10]}}
  joints.crank_pivot.u: {{linspace: [-5, 5, 100]}}
outputs: {{final: [q.crank_pivot], max: [energy]}}
""",
    "64-cell ladder, 100 runs of 0.4 s": """\
model: {model}
settings: {{t_end: 0.4}}
parameters:
  bodies.rung0.mass: {{linspace: [0.5, 2, 10]}}
  gravity.2: {{linspace: [-9, -10, 10]}}
outputs: {{final: [q.lp0_bottom], max: [energy]}}
""",
}


def main(fourbar, ladder):
    print("| study | way | tasks | runs/s | speed-up over 1 worker | over one process | Dask's cost per task [ms] | "
          "cluster start [s] |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as folder:
        for (title, text), model in zip(STUDIES.items(), (fourbar, ladder)):
            path = os.path.join(folder, "study.yaml")
            with open(path, "w") as f:
                f.write(text.format(model=os.path.abspath(model)))
            study = sweeps.load_study(path)
            runs = list(enumerate(study.runs()))
            best = {0: math.inf, 1: math.inf, 2: math.inf}  # workers (0: one process, no Dask): seconds
            started = {1: math.inf, 2: math.inf}
            for k in range(ROUNDS):  # the ways interleaved, so that a slow spell of the machine hits each
                start = time.perf_counter()
                rows = sweeps._batch(runs, study.model_text, study.model_path, study.settings, study.outputs, None)
                best[0] = min(best[0], time.perf_counter() - start)
                assert all(r["status"] == "completed" for r in rows), [r["message"] for r in rows][:3]
                for workers in (1, 2):
                    start = time.perf_counter()
                    cluster = sweeps.local_cluster(workers)
                    started[workers] = min(started[workers], time.perf_counter() - start)
                    out = os.path.join(folder, f"results-{len(title)}-{workers}-{k}.csv")
                    s = sweeps.sweep(study, out=out, scheduler=cluster.scheduler_address, progress=False)
                    cluster.close()
                    assert s.completed == len(runs), s
                    best[workers] = min(best[workers], s.seconds)
            print(f"| {title} | one process, no Dask | | {len(runs) / best[0]:.1f} | | | | |")
            for workers in (1, 2):
                tasks = -(-len(runs) // max(1, min(50, len(runs) // (16 * workers))))
                cost = (best[workers] * workers - best[0]) / tasks * 1e3
                print(f"| {title} | Dask, {workers} worker{'s' if workers > 1 else ''} | {tasks} | "
                      f"{len(runs) / best[workers]:.1f} | {best[1] / best[workers]:.2f} | "
                      f"{best[0] / best[workers]:.2f} | {cost:.1f} | "
                      f"{started[workers]:.2f} |", flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:3])
