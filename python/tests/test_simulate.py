"""simulate(): the CLI's columns and numbers, energy, the errors of a run, Ctrl-C."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import loopdyn
from conftest import cli_path, model_path, optional_module, read_csv


@pytest.mark.parametrize("name, options", [
    ("fourbar_park_regular.yaml", ["--method", "lagrange-dense", "--reactions"]),
    ("fourbar_anderson.yaml", ["--method", "gcp", "--integrator", "dopri5", "--project"]),
    ("double_pendulum.yaml", []),
])
def test_columns_and_values_are_the_cli_csv(cli, tmp_path, name, options):
    out = tmp_path / "run.csv"
    cli("simulate", model_path(name), "--t-end", 0.3, "--out", out, *options)
    header, rows = read_csv(out)
    kwargs = {o[2:].replace("-", "_"): True for o in options if o in ("--reactions", "--project")}
    for flag, value in zip(options, options[1:]):
        if flag in ("--method", "--integrator"):
            kwargs[flag[2:]] = value
    r = loopdyn.simulate(loopdyn.load(model_path(name)), t_end=0.3, **kwargs)
    assert r.columns == header
    np.testing.assert_allclose(r.data, rows, rtol=1e-8, atol=1e-9)


def test_columns_are_views_of_one_array():
    r = loopdyn.simulate(loopdyn.load(model_path("double_pendulum.yaml")), t_end=0.1)
    assert r["q.elbow"].base is r.data and np.shares_memory(r["t"], r.data)
    assert r.data.shape == (11, len(r.columns)) and r["t"][-1] == pytest.approx(0.1)
    with pytest.raises(KeyError, match="no column 'q.knee'"):
        r["q.knee"]


def test_the_double_pendulum_conserves_energy_without_applied_forces():
    text = open(model_path("double_pendulum.yaml")).read().split("\nforces:")[0]  # gravity alone
    model = loopdyn.Model.parse(text, "pendulum")
    r = loopdyn.simulate(model, integrator="dopri5", rtol=1e-10, atol=1e-12, t_end=5.0)
    energy = r["energy"]
    assert np.ptp(r["q.elbow"]) > 0.5  # it moves
    assert np.abs(energy - energy[0]).max() < 1e-7 * abs(energy[0])


def test_bdf_follows_dopri5_on_the_four_bar_and_refuses_projection():
    # The implicit integrator from Python: the same motion as dopri5's within what rtol 1e-8 allows
    # over 1 s (the run watch checks closure and energy after each of its steps), and a clear
    # refusal where it cannot do what is asked.
    model = loopdyn.load(model_path("fourbar_anderson.yaml"))
    explicit_run = loopdyn.simulate(model, t_end=1.0)
    implicit_run = loopdyn.simulate(model, t_end=1.0, integrator="bdf")
    assert implicit_run.method == explicit_run.method
    assert np.abs(implicit_run["q.crank_pivot"] - explicit_run["q.crank_pivot"]).max() < 1e-5
    assert implicit_run.stats["watch_accuracy"] == 1e-8
    with pytest.raises(ValueError, match="project does not apply to bdf"):
        loopdyn.simulate(model, t_end=1.0, integrator="bdf", project=True)


def test_pandas_gets_the_same_columns():
    pandas = optional_module("pandas")
    r = loopdyn.simulate(loopdyn.load(model_path("double_pendulum.yaml")), t_end=0.05)
    frame = r.to_pandas()
    assert isinstance(frame, pandas.DataFrame) and list(frame.columns) == r.columns


def test_a_method_that_cannot_cross_a_singular_configuration_raises(cli, tmp_path):
    chain = loopdyn.square_chain(3)
    with pytest.raises(loopdyn.SingularConfigurationError) as e:
        loopdyn.simulate(chain, method="embedding", t_end=0.6)
    assert "embedding stops: the loops 'square0_" in str(e.value)
    path = tmp_path / "chain.yaml"
    cli("generate", "square-chain", "--squares", 3, "--out", path)
    stopped = cli("simulate", path, "--method", "embedding", "--t-end", 0.6, "--out", tmp_path / "c.csv", check=False)
    # The same message, its remedies in each front end's spelling (render_settings).
    python = 'Use method="dca", which crosses singular configurations, or on_singular="continue" to go on'
    assert python in str(e.value)
    cli_spelling = "Use --method dca, which crosses singular configurations, or --on-singular continue to go on"
    assert stopped.stderr == "loopdyn: error: " + str(e.value).replace(python, cli_spelling) + "\n"


def test_auto_hands_over_to_dca_where_its_choice_stops():
    with pytest.warns(RuntimeWarning, match="auto: dca goes on from embedding's state at t = 0.4"):
        r = loopdyn.simulate(loopdyn.square_chain(3), t_end=0.6)
    assert r.handed_over == "embedding" and r.method in ("dca", "embedding")  # the last stretch's
    source, target, reason, t = r.handovers[0]
    assert (source, target) == ("embedding", "dca") and 0.4 < t < 0.49 and "embedding stops" in reason
    # The rows go on from embedding's: 0, 0.01, ..., 0.6.
    assert len(r["t"]) == 61 and r["t"][-1] == pytest.approx(0.6)


def test_a_stop_carries_the_rows_computed_before_it(cli, tmp_path):
    chain = loopdyn.square_chain(3)
    with pytest.raises(loopdyn.SingularConfigurationError) as e:
        loopdyn.simulate(chain, method="embedding", t_end=0.6)
    partial = e.value.result
    assert partial.method == "embedding" and 0.3 < partial["t"][-1] < 0.6
    # The CLI writes the same rows before its error line.
    path, out = tmp_path / "chain.yaml", tmp_path / "c.csv"
    cli("generate", "square-chain", "--squares", 3, "--out", path)
    cli("simulate", path, "--method", "embedding", "--t-end", 0.6, "--out", out, check=False)
    header, rows = read_csv(out)
    assert header == partial.columns
    np.testing.assert_allclose(rows, partial.data, rtol=1e-8, atol=1e-9)


def test_the_watch_stops_a_fixed_step_run_that_leaves_the_motion():
    # A triple-rocker at rk4 with a step far too long for its swing: the motion is lost (the energy
    # balance and the closure show it), and the rows before the stop are kept. Rows every step: the
    # output interval may not be shorter than a fixed step (each output time is a step's end).
    m = loopdyn.Mechanism("triple_rocker", gravity=[0, -9.81, 0])
    m.add_body("crank", 0.5, com=[0.4, 0, 0], inertia=[1e-4, 0.00375, 0.00375])
    m.add_body("coupler", 1.0, com=[0.5, 0, 0], inertia=[1e-4, 0.0833, 0.0833])
    m.add_body("rocker", 0.8, com=[0.4, 0, 0], inertia=[1e-4, 0.0427, 0.0427])
    m.add_joint("j_crank", "revolute", "ground", "crank", axis=[0, 0, 1], q=1.2, u=2.0)
    m.add_joint("j_coupler", "revolute", "crank", "coupler", parent_frame={"xyz": [0.8, 0, 0]}, q=-1.0)
    m.add_joint("j_rocker", "revolute", "ground", "rocker", parent_frame={"xyz": [1.2, 0, 0]}, q=1.8)
    m.add_joint("closure", "revolute", "coupler", "rocker", parent_frame={"xyz": [0.9, 0, 0]},
                child_frame={"xyz": [0.7, 0, 0]}, cut=True)
    model = m.build()
    with pytest.raises(loopdyn.RunWatchError, match="the run watch stops the run") as e:
        loopdyn.simulate(model, method="lagrange-dense", integrator="rk4", dt=0.05, output_dt=0.05, t_end=5.0)
    assert 0.0 < e.value.result["t"][-1] < 5.0
    r = loopdyn.simulate(model, t_end=5.0)  # the default: dopri5, watched
    assert r.stats["watch_worst_balance"] < 1e3 * 1e-8 * r.stats["watch_balance_scale"]


def test_on_singular_continue_runs_through():
    r = loopdyn.simulate(loopdyn.square_chain(3), method="embedding", t_end=0.6, on_singular="continue")
    assert r["t"][-1] == pytest.approx(0.6)


def test_a_diverging_run_raises_integration_error():
    m = loopdyn.Mechanism("thrown", gravity=[0, 0, 0])
    m.add_body("b", 1.0, com=[0, 0, 0], inertia=[1, 1, 1])
    m.add_joint("slide", "prismatic", "ground", "b", axis=[1, 0, 0])
    m.add_force("joint_force", joint="slide", value=1e308)  # rk4's 2 k2 overflows in the first step
    # auto's first choice stops, dca starts again and stops too: the error is dca's stop, and the
    # hand-over is a warning (the error's text was the hand-over's note, dca's reason lost).
    with pytest.warns(RuntimeWarning, match="auto: tree stopped"):
        with pytest.raises(loopdyn.IntegrationError, match="^non-finite state derivative .* at t = 0") as e:
            loopdyn.simulate(m.build(), t_end=1.0)
    assert "auto:" not in str(e.value) and e.value.result.method == "dca"


@pytest.mark.parametrize("call", [
    lambda: loopdyn.simulate(None), lambda: loopdyn.Simulation(None), lambda: loopdyn.method(None),
    lambda: loopdyn.Method(None, "dca"), lambda: loopdyn.Analysis(None),
])
def test_none_for_a_model_is_a_type_error(call):
    # Method(None, ...) and Analysis(None) crashed the interpreter (a null model dereferenced).
    with pytest.raises(TypeError, match=r"model must be a loopdyn.Model \(loopdyn.load\(path\)"):
        call()


@pytest.mark.parametrize("kwargs, error, message", [
    ({"integrator": "euler"}, ValueError, "integrator: expected 'rk2', 'rk4', 'dopri5' or 'bdf', got 'euler'"),
    ({"output_dt": float("nan")}, ValueError, "output_dt is nan"),
    ({"q0": np.zeros(5)}, ValueError, "q0: expected a 1-D array of nq = 2 numbers, got shape \\(5,\\)"),
    ({"method": "nope"}, loopdyn.ModelError, "unknown method 'nope'"),
    ({"dca_alfa": 1.0}, TypeError, "simulate\\(\\): unknown option 'dca_alfa'"),
    ({"on_singular": "maybe"}, ValueError, "on_singular: expected 'stop' or 'continue', got 'maybe'"),
])
def test_bad_arguments_are_rejected(kwargs, error, message):
    with pytest.raises(error, match=message):
        loopdyn.simulate(loopdyn.load(model_path("double_pendulum.yaml")), t_end=0.01, **kwargs)


def test_errors_name_settings_as_keywords():
    # The library's remedies in Python's spelling (the CLI's is --integrator rk2, --dca-alpha).
    chain = loopdyn.square_chain(3)
    with pytest.raises(ValueError, match='integrator="rk2" or integrator="rk4"') as e:
        loopdyn.simulate(chain, method="srm", integrator="dopri5", t_end=0.01)
    assert "--" not in str(e.value)
    with pytest.raises(ValueError, match=r"the penalty α \(dca_alpha\) must be finite and > 0, got -1"):
        loopdyn.simulate(chain, method="dca", dca_alpha=-1.0, t_end=0.01)
    with pytest.raises(ValueError, match=r"\(dca_max_iterations\) must be at least 1"):
        loopdyn.method(chain, "dca", dca_iterations=0)


def test_options_come_from_the_library_tables():
    names = [o["name"] for o in loopdyn.options()]
    assert names[:3] == ["method", "integrator", "dt"]
    assert "dca_alpha" in names and "watch" in names
    watch = next(o for o in loopdyn.options() if o["name"] == "watch")
    assert watch["kind"] == "flag" and watch["default"] is True
    assert [o["name"] for o in loopdyn.options("method")][0] == "on_singular"
    assert "t_end=10.0 [s]" in loopdyn.simulate.__doc__


def test_ctrl_c_stops_a_long_run_with_keyboard_interrupt():
    script = textwrap.dedent(f"""
        import loopdyn, sys, time
        model = loopdyn.load({model_path("double_pendulum.yaml")!r})
        try:
            print("running", flush=True)
            # 9e7 steps of rk4 (a run may take 1e8): minutes. (The 32-cell ladder on lagrange-dense,
            # used before, stops at a singular configuration 0.3 s in; it outlasted the 0.5 s only
            # while a 1e6 s run made its 1e8 output times first, which is now refused.)
            loopdyn.simulate(model, integrator="rk4", dt=1e-5, t_end=900.0)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            sys.exit(3)
    """)
    p = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=dict(os.environ))
    assert p.stdout.readline() == "running\n"
    time.sleep(0.5)  # inside the run
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=20)
    assert (p.returncode, out, err) == (3, "interrupted\n", "")


def test_ctrl_c_on_the_cli_writes_the_rows_computed_so_far(tmp_path):
    path = cli_path()
    if not os.path.exists(path):
        pytest.skip(f"the CLI is not built ({path})")
    chain, out = tmp_path / "chain.yaml", tmp_path / "run.csv"  # a tree: nothing stops it but Ctrl-C
    subprocess.run([path, "generate", "chain", "--bodies", "64", "--out", str(chain)], check=True, capture_output=True)
    p = subprocess.Popen([path, "simulate", str(chain), "--t-end", "1e3",
                          "--output-dt", "1e-3", "--out", str(out)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)  # inside the run
    p.send_signal(signal.SIGINT)
    stdout, stderr = p.communicate(timeout=20)
    assert p.returncode == 130, stderr
    assert "loopdyn: error: cancelled at t = " in stderr and "up to the stop" in stdout
    header, rows = read_csv(out)
    assert header[0] == "t" and len(rows) > 1 and rows[-1, 0] < 1e3
