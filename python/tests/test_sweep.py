"""Parameter studies on Dask distributed (loopdyn.sweep, loopdyn.sweeps, `loopdyn sweep`): the study file's checks,
the runs' design, every run accounted for on a real LocalCluster (an invalid parameter, a setting
that stops a run, a worker killed mid-sweep, Ctrl-C then resume), and the numbers of each run
against the same model changed and simulated here, in this process, without the sweep."""
import json
import os
import signal
import textwrap

import numpy as np
import pytest
import yaml

import loopdyn

from conftest import model_path, optional_module

distributed = optional_module("distributed")
from loopdyn import sweeps as sw  # noqa: E402  (after the module check)

FOURBAR = model_path("fourbar_anderson.yaml")


def study_file(tmp_path, text, name="study.yaml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).replace("FOURBAR", FOURBAR))
    return str(path)


def read_table(path):
    """The result table as (rows as dicts keyed by column, comment lines)."""
    import csv
    with open(path, newline="") as f:
        lines = f.read().splitlines()
    comments = [line for line in lines if line.startswith("#")]
    rows = list(csv.DictReader([line for line in lines if not line.startswith("#")]))
    return rows, comments


@pytest.fixture(scope="module")
def cluster():
    """Two worker processes, one thread each: the CI machine's two cores."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as c:
        yield c


# ---------------------------------------------------------------------------------------------
# The study file

@pytest.mark.parametrize("text, where, problem", [
    ("model: FOURBAR\nparameters: {bodies.nosuch.mass: [1]}\n", "parameters.bodies.nosuch.mass",
     "bodies has no item 'nosuch' (there are crank, coupler, rocker)"),
    ("model: FOURBAR\nparameters: {bodies.couple.mass: [1]}\n", "parameters.bodies.couple.mass",
     "bodies has no item 'couple' (did you mean coupler?)"),
    ("model: FOURBAR\nparameters: {joints.crank_pin.parent_frame.xyz.5: [1]}\n",
     "parameters.joints.crank_pin.parent_frame.xyz.5", "is a list of 3; index it from 0"),
    ("model: FOURBAR\nparameters: {settings.tend: [1]}\n", "parameters.settings.tend", "is not a run setting"),
    ("model: FOURBAR\nparameters: {bodies.coupler.mas: [1]}\n", "parameters.bodies.coupler.mas",
     "the model file takes no 1 there: " + FOURBAR + ":1: unknown key 'mas' in body 'coupler'"),
    ("model: FOURBAR\nparameters: {bodies.coupler.com: [1]}\n", "parameters.bodies.coupler.com",
     "'com' of body 'coupler' must be a list of 3 numbers [x, y, z], got a single value"),
    ("model: FOURBAR\nsettings: {t_ends: 1}\nparameters: {gravity.1: [1]}\n", "settings.t_ends",
     "unknown setting (did you mean t_end?)"),
    ("model: FOURBAR\nparameters: {gravity.1: {normal: [1, 0]}}\nrandom: {samples: 3}\n",
     "parameters.gravity.1.normal", "positive standard deviation"),
    ("model: FOURBAR\nparameters: {gravity.1: {uniform: [0, 1]}}\n", "random.samples", "say how many samples"),
    ("model: FOURBAR\nparameters: {gravity.1: {gauss: [0, 1]}}\n", "parameters.gravity.1", "unknown kind 'gauss'"),
    ("model: FOURBAR\nparameters: {gravity.1: []}\n", "parameters.gravity.1", "empty"),
    ("model: FOURBAR\nparameters: {gravity.1: [1]}\noutputs: {last: [q.crank_pivot]}\n", "outputs.last",
     "unknown key"),
    ("model: FOURBAR\nparamters: {gravity.1: [1]}\n", "paramters", "unknown key"),
    ("model: FOURBAR\nparameters: {gravity.1: [1]}\noutputs: {final: [q.rocker_ground]}\n", "outputs.final",
     "the runs have no column 'q.rocker_ground' (there are t, q.crank_pivot, q.crank_pin, q.coupler_pin, u.crank_pivot, "
     "u.crank_pin, u.coupler_pin, crank_tip.x, crank_tip.y, crank_tip.z and 9 more)"),
    ("model: nosuch.yaml\nparameters: {gravity.1: [1]}\n", "model", "the model does not load"),
    # Settings no run can take, checked by the library when the study is loaded (each run's row
    # said it before, once per run).
    ("model: FOURBAR\nsettings: {t_end: -1}\nparameters: {gravity.1: [1]}\n", "settings",
     "t_end=-1: the end time must be a finite number of seconds >= 0"),
    ("model: FOURBAR\nsettings: {method: rc}\nparameters: {gravity.1: [1]}\n", "settings", "unknown method 'rc'"),
    ("model: FOURBAR\nsettings: {rtol: 1.0e-20, atol: -1}\nparameters: {settings.rtol: [1.0e-8]}\n", "settings",
     "atol=-1: must be a finite number >= 0"),
    # Studies past a million runs (planned in memory: numpy's MemoryError, or gigabytes, before).
    ("model: FOURBAR\nparameters: {gravity.1: {linspace: [1, 2, 1000000000000]}}\n", "parameters.gravity.1.linspace",
     "the count 1000000000000 is more than the 1000000 runs a study may make"),
    ("model: FOURBAR\nparameters: {gravity.0: {linspace: [1, 2, 1000]}, gravity.1: {linspace: [1, 2, 1001]}}\n",
     "parameters", "the study makes 1001000 runs (its grid's points x its samples), more than the 1000000"),
])
def test_a_malformed_study_names_the_file_the_key_and_the_problem(tmp_path, text, where, problem):
    path = study_file(tmp_path, text)
    with pytest.raises(sw.StudyError) as e:
        sw.load_study(path)
    assert f"{path}: {where}: " in str(e.value) and problem in str(e.value)


def test_runs_are_the_grid_times_the_samples_with_latin_strata_and_common_draws(tmp_path):
    study = sw.load_study(study_file(tmp_path, """\
        model: FOURBAR
        parameters:
          bodies.coupler.mass: [1.0, 2.0]
          joints.crank_pivot.u: {linspace: [0, 3, 4]}
          gravity.1: {uniform: [-10, -9]}
          bodies.rocker.mass: {normal: [2, 0.1]}
        random: {samples: 50, seed: 3, sampling: latin}
        """))
    runs = study.runs()
    assert len(runs) == 2 * 4 * 50
    assert [r["joints.crank_pivot.u"] for r in runs[:200:50]] == [0.0, 1.0, 2.0, 3.0]
    assert {r["bodies.coupler.mass"] for r in runs[:200]} == {1.0} and runs[200]["bodies.coupler.mass"] == 2.0
    # Latin: each of the 50 strata of each random parameter holds exactly one sample.
    g = np.array([r["gravity.1"] for r in runs[:50]])
    assert sorted(np.floor((g + 10) * 50).astype(int)) == list(range(50))
    m = np.array([r["bodies.rocker.mass"] for r in runs[:50]])
    from statistics import NormalDist
    strata = np.floor(np.array([NormalDist(2, 0.1).cdf(x) for x in m]) * 50).astype(int)
    assert sorted(strata) == list(range(50))
    # The same draws at every grid point; the same study gives the same runs.
    assert [r["gravity.1"] for r in runs[50:100]] == list(g)
    assert study.runs() == runs and study.fingerprint() == sw.load_study(study.source).fingerprint()


def test_the_table_has_a_column_for_every_stat_of_a_run():
    model = loopdyn.load(FOURBAR)
    assert sorted(loopdyn.simulate(model, t_end=0.01).stats) == sorted(sw._STATS)


# ---------------------------------------------------------------------------------------------
# Runs on a LocalCluster

def direct_final(values, column, settings):
    """The same run without the sweep: the model file changed through PyYAML here, built and
    simulated in this process."""
    doc = yaml.safe_load(loopdyn.convert(FOURBAR))
    items = {(section, item.get("name")): item for section in ("bodies", "joints") for item in doc[section]}
    for path, value in values.items():
        section, name, key = path.split(".")
        items[(section, name)][key] = value
    model = loopdyn.Model.parse(yaml.safe_dump(doc), "direct.yaml")
    return loopdyn.simulate(model, **settings)[column][-1]


def test_every_run_is_a_row_and_matches_the_same_run_made_directly(tmp_path, cluster):
    path = study_file(tmp_path, """\
        model: FOURBAR
        settings: {t_end: 0.5}
        parameters:
          bodies.coupler.mass: [1.0, 3.0, -1.0]
          joints.crank_pivot.u: [0.0, 2.0]
          settings.output_dt: [0.1, -0.1]
        outputs: {final: [q.crank_pivot], max: [energy], series: {columns: [t, q.coupler_pin], every: 2}}
        """)
    s = sw.sweep(path, scheduler=cluster.scheduler_address, progress=False)
    assert (s.runs, s.ran, s.skipped, s.completed, s.failed) == (12, 12, 0, 4, 8)
    rows, comments = read_table(s.path)
    assert sorted(int(r["run"]) for r in rows) == list(range(12))
    assert comments[-1] == "# loopdyn sweep: 12 runs made (4 completed, 0 stopped, 8 failed), 0 skipped"
    for r in rows:
        mass, u, output_dt = float(r["bodies.coupler.mass"]), float(r["joints.crank_pivot.u"]), float(r["settings.output_dt"])
        if mass < 0:  # the model's own check, named
            assert r["status"] == "failed" and "body 'coupler'" in r["message"] and "mass" in r["message"]
        elif output_dt < 0:  # a setting the run refuses, named
            assert r["status"] == "failed" and "output_dt" in r["message"]
        else:
            assert r["status"] == "completed" and float(r["t_final"]) == 0.5
            expected = direct_final({"bodies.coupler.mass": mass, "joints.crank_pivot.u": u}, "q.crank_pivot",
                                    {"t_end": 0.5, "output_dt": output_dt, "threads": 1})
            assert float(r["final.q.crank_pivot"]) == pytest.approx(expected, rel=1e-14, abs=1e-14)
            series = np.loadtxt(os.path.join(os.path.splitext(s.path)[0] + ".series", f"run-{int(r['run']):06d}.csv"),
                                delimiter=",", skiprows=1)
            assert series[0, 0] == 0.0 and series[-1, 0] == 0.5  # every 2nd row, and the last


def test_a_killed_worker_loses_no_run(tmp_path, cluster):
    # Runs of ~0.1 s, one per task, so that the kill finds tasks running and others queued.
    path = study_file(tmp_path, """\
        model: FOURBAR
        settings: {t_end: 10, output_dt: 0.1}
        parameters: {joints.crank_pivot.u: {linspace: [0, 2, 16]}}
        outputs: {final: [q.crank_pivot]}
        batch: 1
        """)
    with distributed.Client(cluster.scheduler_address) as client:
        pids = list(client.run(os.getpid).values())
    killed = []

    def kill_once(rows):
        if not killed:
            os.kill(pids[0], signal.SIGKILL)
            killed.append(pids[0])
    s = sw.sweep(path, scheduler=cluster.scheduler_address, progress=False, on_batch=kill_once)
    rows, _ = read_table(s.path)
    assert killed and sorted(int(r["run"]) for r in rows) == list(range(16))
    assert all(r["status"] == "completed" for r in rows), [r["message"] for r in rows]
    with distributed.Client(cluster.scheduler_address) as client:
        assert pids[0] not in client.run(os.getpid).values()  # the kill took: the nanny started another


def test_ctrl_c_leaves_a_readable_table_that_resume_finishes(tmp_path, cluster):
    text = """\
        model: FOURBAR
        settings: {t_end: 0.2}
        parameters: {bodies.coupler.mass: {linspace: [1, 3, 12]}}
        outputs: {final: [q.crank_pivot]}
        batch: 2
        """
    path = study_file(tmp_path, text)
    seen = []

    def interrupt(rows):
        seen.extend(rows)
        if len(seen) >= 4:
            raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        sw.sweep(path, scheduler=cluster.scheduler_address, progress=False, on_batch=interrupt)
    out = os.path.splitext(path)[0] + ".results.csv"
    rows, comments = read_table(out)
    assert len(rows) == len(seen) >= 4 and comments[-1] == "# loopdyn sweep: interrupted"
    with pytest.raises(sw.StudyError, match="exists"):
        sw.sweep(path, scheduler=cluster.scheduler_address, progress=False)
    s = sw.sweep(path, scheduler=cluster.scheduler_address, progress=False, resume=True)
    assert (s.ran, s.skipped, s.completed) == (12 - len(seen), len(seen), 12 - len(seen))
    rows, _ = read_table(out)
    assert sorted(int(r["run"]) for r in rows) == list(range(12))
    # A changed study does not resume another's table.
    study_file(tmp_path, text.replace("[1, 3, 12]", "[1, 4, 12]"))
    with pytest.raises(sw.StudyError, match="another study"):
        sw.sweep(path, scheduler=cluster.scheduler_address, progress=False, resume=True)


def test_the_cli_runs_a_study_on_a_local_cluster(tmp_path, cli):
    path = study_file(tmp_path, """\
        model: FOURBAR
        settings: {t_end: 0.2}
        parameters: {bodies.coupler.mass: [1, 2, 3]}
        outputs: {max: [energy]}
        """)
    r = cli("sweep", path, "--workers", "1", "--out", tmp_path / "r.csv")
    assert r.stdout.splitlines()[:2] == [f"wrote       {tmp_path / 'r.csv'} (3 runs: 3 made, 0 skipped)",
                                         "runs        3 completed, 0 stopped, 0 failed"]
    rows, _ = read_table(tmp_path / "r.csv")
    assert [r["status"] for r in rows] == ["completed"] * 3
    bad = cli("sweep", tmp_path / "nosuch.yaml", check=False)
    assert bad.returncode == 1 and "cannot read study file" in bad.stderr
    assert "usage: loopdyn sweep" in cli("sweep", "--help").stdout


def test_ctrl_c_on_the_cli_stops_cleanly_and_resume_finishes(tmp_path, cli):
    import subprocess
    import time
    from conftest import cli_path
    path = study_file(tmp_path, """\
        model: FOURBAR
        settings: {t_end: 20, output_dt: 0.1}
        parameters: {joints.crank_pivot.u: {linspace: [0, 2, 60]}}
        batch: 1
        """)
    out = tmp_path / "r.csv"
    # Ctrl-C in a terminal reaches the whole process group: the CLI's Python and its workers.
    sweep = subprocess.Popen([cli_path(), "sweep", path, "--workers", "2", "--out", out], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not out.exists() or len(read_table(out)[0]) < 3):
        time.sleep(0.05)
    os.killpg(sweep.pid, signal.SIGINT)
    stdout, stderr = sweep.communicate(timeout=60)
    rows, comments = read_table(out)
    assert sweep.returncode == 130, stderr
    assert stderr.strip().splitlines()[-1] == ("loopdyn: sweep interrupted: the rows written so far are kept; "
                                               "--resume finishes it")
    assert "Traceback" not in stderr, stderr  # the workers leave Ctrl-C to the sweep
    assert 3 <= len(rows) < 60 and comments[-1] == "# loopdyn sweep: interrupted"
    done = cli("sweep", path, "--workers", "2", "--out", out, "--resume")
    assert f"(60 runs: {60 - len(rows)} made, {len(rows)} skipped)" in done.stdout
    assert sorted(int(r["run"]) for r in read_table(out)[0]) == list(range(60))
