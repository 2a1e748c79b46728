"""Parameter studies on Dask distributed: `loopdyn sweep study.yaml` and loopdyn.sweep().

A study file names a model, the parameters to vary (addressed by path in the model file:
`bodies.coupler.mass`, `joints.crank.u`, `forces.1.stiffness`, `gravity.1`, or a run setting as
`settings.method`) as grid axes or random draws, every run's settings, and the outputs to keep.
Each run builds its model and simulates it in the C++ library inside a Dask task (runs go in
batches, so that a short run does not pay a task's overhead alone); every run ends as one row of
one CSV table, written as batches arrive: completed, stopped (the library stopped it: a singular
configuration, the run watch, the integrator; with its message) or failed (an invalid model or
setting; with its message). A worker that dies has its batch run again by Dask; Ctrl-C leaves the
rows written so far, and `resume` runs only the runs that have no row. docs/sweeps.md has the format.
"""
import argparse as _argparse
import copy as _copy
import hashlib as _hashlib
import itertools as _itertools
import json as _json
import math as _math
import os as _os
import statistics as _statistics
import sys as _sys
import time as _time
import typing as _typing

import numpy as _numpy

__all__ = ["Study", "StudyError", "load_study", "sweep"]

_SECTIONS = ("bodies", "joints", "markers", "forces", "constraints", "drives")
_STUDY_KEYS = ("model", "settings", "parameters", "random", "outputs", "batch")
_OUTPUT_KEYS = ("final", "max", "min", "series")
_SAMPLINGS = ("independent", "latin")
# Most runs a study makes: its table and its tasks are planned in memory (a linspace of 1e12 values
# ended in numpy's MemoryError, a 3-axis grid of 1e5 values each in 2.9 GB and a traceback).
_MOST_RUNS = 1_000_000


class StudyError(ValueError):
    """A study file that cannot be run: the message names the file, the key and the problem."""


Value = _typing.Any
Row = _typing.Dict[str, Value]


class _Parameter:
    """One varied value: a grid axis (`values`) or a random draw (`law`: uniform or normal)."""

    def __init__(self, path: str, values: _typing.Optional[_typing.List[Value]] = None,
                 law: _typing.Optional[_typing.Tuple[str, float, float]] = None) -> None:
        self.path, self.values, self.law = path, values, law

    def draw(self, u: _typing.Iterable[float]) -> _typing.List[float]:
        """The values of this random parameter at the uniform numbers u in (0, 1)."""
        assert self.law is not None
        kind, a, b = self.law
        if kind == "uniform":
            return [a + (b - a) * float(x) for x in u]
        law = _statistics.NormalDist(a, b)
        return [law.inv_cdf(float(x)) for x in u]


class Study:
    """A parsed study: the model (loopdyn's model file as JSON text, which its YAML reader reads),
    the parameters, the settings every run shares, what each run keeps, and its runs in order
    (`runs()`)."""

    def __init__(self, source: str, model_path: str, model_text: str, parameters: _typing.List[_Parameter],
                 samples: int, seed: int, sampling: str, settings: _typing.Dict[str, Value],
                 outputs: _typing.Dict[str, _typing.Any], batch: _typing.Optional[int]) -> None:
        self.source, self.model_path, self.model_text = source, model_path, model_text
        self.parameters, self.samples, self.seed, self.sampling = parameters, samples, seed, sampling
        self.settings, self.outputs, self.batch = settings, outputs, batch

    @property
    def names(self) -> _typing.List[str]:
        """The parameters' paths: the table's parameter columns, in the study's order."""
        return [p.path for p in self.parameters]

    def runs(self) -> _typing.List[_typing.Dict[str, Value]]:
        """Every run's parameter values: the grid axes' product (first axis slowest), each point
        with the same `samples` random draws (common random numbers: grid points are compared on
        the same samples)."""
        grid = [p for p in self.parameters if p.values is not None]
        drawn = [p for p in self.parameters if p.law is not None]
        rng = _numpy.random.default_rng(self.seed)
        draws: _typing.Dict[str, _typing.List[float]] = {}
        for p in drawn:
            if self.sampling == "latin":  # one sample in each of `samples` equal strata, strata shuffled
                u = (rng.permutation(self.samples) + rng.random(self.samples)) / self.samples
            else:
                u = rng.random(self.samples)
            draws[p.path] = p.draw(_numpy.clip(u, 1e-300, 1.0 - 1e-16))
        runs = []
        for point in _itertools.product(*[p.values or [] for p in grid]):
            for k in range(self.samples if drawn else 1):
                values = dict(zip([p.path for p in grid], point))
                values.update({path: v[k] for path, v in draws.items()})
                runs.append({p.path: values[p.path] for p in self.parameters})
        return runs

    def fingerprint(self) -> str:
        """A hash of everything that decides the runs' results: a result file written for another
        study (or another model text) is not resumed."""
        text = _json.dumps([self.model_text, self.settings, self.outputs, self.runs()], sort_keys=True, default=str)
        return _hashlib.sha256(text.encode()).hexdigest()[:16]


def _names(wanted: str, names: _typing.Sequence[str]) -> str:
    """The names nearest `wanted` when some are near, else the first ten and how many more."""
    import difflib
    near = difflib.get_close_matches(wanted, names, n=4, cutoff=0.75)
    if near:
        return f"did you mean {' or '.join(near)}?"
    shown = ", ".join(names[:10])
    return f"there are {shown}" + (f" and {len(names) - 10} more" if len(names) > 10 else "")


def _fail(source: str, key: str, problem: str) -> _typing.NoReturn:
    raise StudyError(f"{source}: {key}: {problem}")


def _check_settings(source: str, key: str, settings: _typing.Dict[str, Value]) -> None:
    """The library's checks of run settings (check_run_settings), before any run: a study whose
    settings no run can take (t_end: -1) is refused when it is loaded, not in every run's row."""
    from . import ModelError, _check_options

    try:
        _check_options(**{str(k): v for k, v in settings.items()})
    except (ValueError, TypeError, ModelError) as e:
        _fail(source, key, str(e))


def _number(source: str, key: str, value: Value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not _math.isfinite(value):
        _fail(source, key, f"must be a finite number, got {value!r}")
    return float(value)


def _parameter(source: str, path: str, spec: Value) -> _Parameter:
    key = f"parameters.{path}"
    if isinstance(spec, list):
        if not spec:
            _fail(source, key, "the list of values is empty")
        return _Parameter(path, values=list(spec))
    if not isinstance(spec, dict) or len(spec) != 1:
        _fail(source, key, "give a list of values, or one of {linspace: [first, last, count]}, "
                           "{uniform: [low, high]}, {normal: [mean, standard deviation]}")
    (kind, args), = spec.items()
    if kind not in ("linspace", "uniform", "normal"):
        _fail(source, key, f"unknown kind '{kind}' (expected linspace, uniform or normal)")
    count = 3 if kind == "linspace" else 2
    if not isinstance(args, list) or len(args) != count:
        _fail(source, f"{key}.{kind}", f"must be a list of {count} numbers")
    a, b = _number(source, f"{key}.{kind}", args[0]), _number(source, f"{key}.{kind}", args[1])
    if kind == "linspace":
        n = args[2]
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            _fail(source, f"{key}.linspace", f"the count must be a positive integer, got {n!r}")
        if n > _MOST_RUNS:
            _fail(source, f"{key}.linspace", f"the count {n} is more than the {_MOST_RUNS} runs a study may make")
        return _Parameter(path, values=[float(x) for x in _numpy.linspace(a, b, n)])
    if kind == "uniform" and not a < b:
        _fail(source, f"{key}.uniform", f"needs low < high, got [{a}, {b}]")
    if kind == "normal" and not b > 0:
        _fail(source, f"{key}.normal", f"needs a positive standard deviation, got {b}")
    return _Parameter(path, law=(kind, a, b))


def _columns(source: str, key: str, value: Value) -> _typing.List[str]:
    if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
        _fail(source, key, "must be a list of column names (as in simulate's CSV: q.crank, energy, ...)")
    return list(value)


def load_study(path: _typing.Union[str, "_os.PathLike[str]"]) -> Study:
    """Reads and checks a study file: unknown keys, parameter paths that the model does not have,
    unknown settings and malformed laws are StudyErrors naming the file and the key."""
    import yaml  # type: ignore[import]  # Debian's python3-yaml (a dependency of Dask) has no stubs

    from . import ModelError, _convert, _normalized_yaml, options

    source = _os.fspath(path)
    try:
        with open(source, encoding="utf-8") as f:
            doc = yaml.safe_load(f)
    except OSError as e:
        raise StudyError(f"cannot read study file '{source}': {e.strerror}") from None
    except yaml.YAMLError as e:
        raise StudyError(f"{source}: malformed YAML: {e}") from None
    if not isinstance(doc, dict):
        raise StudyError(f"{source}: a study is a mapping with keys {', '.join(_STUDY_KEYS)}")
    for key in doc:
        if key not in _STUDY_KEYS:
            _fail(source, str(key), f"unknown key (expected one of: {', '.join(_STUDY_KEYS)})")
    if not isinstance(doc.get("model"), str):
        _fail(source, "model", "give the model file's path (relative to the study file)")
    model_path = _os.path.join(_os.path.dirname(_os.path.abspath(source)), doc["model"])
    try:
        model_doc = yaml.safe_load(_convert(model_path, None))
    except ModelError as e:
        _fail(source, "model", f"the model does not load: {e}")

    known = {o["name"] for o in options()}
    settings = doc.get("settings") or {}
    if not isinstance(settings, dict):
        _fail(source, "settings", "must be a mapping of run settings (loopdyn.options() names them)")
    for name in settings:
        if name not in known:
            _fail(source, f"settings.{name}", f"unknown setting ({_names(str(name), sorted(known))})")

    specs = doc.get("parameters") or {}
    if not isinstance(specs, dict) or not specs:
        _fail(source, "parameters", "give at least one parameter: path: values")
    parameters = [_parameter(source, str(p), s) for p, s in specs.items()]
    # The settings every run shares (those no parameter varies): a value that no run can take
    # fails the study here; a varied one that some runs cannot take fails those runs' rows.
    varied = {p.path.split(".", 1)[1] for p in parameters if p.path.startswith("settings.")}
    _check_settings(source, "settings", {k: v for k, v in settings.items() if k not in varied})
    for p in parameters:
        # The path on a copy of the model with the first value (a draw's: 0), which the model-file
        # reader then checks for its keys and shapes (not its physics: a zero mass is the runs').
        probe = p.values[0] if p.values is not None else 0.0
        probe_doc = _copy.deepcopy(model_doc)
        try:
            _apply(probe_doc, dict(settings), p.path, probe, known)
        except (KeyError, IndexError, TypeError) as e:
            _fail(source, f"parameters.{p.path}", str(e.args[0]) if e.args else str(e))
        if not p.path.startswith("settings."):
            try:
                _normalized_yaml(_json.dumps(probe_doc), model_path)
            except ModelError as e:
                _fail(source, f"parameters.{p.path}", f"the model file takes no {probe!r} there: {e}")

    random = doc.get("random") or {}
    if not isinstance(random, dict):
        _fail(source, "random", "must be a mapping {samples, seed, sampling}")
    for key in random:
        if key not in ("samples", "seed", "sampling"):
            _fail(source, f"random.{key}", "unknown key (expected samples, seed, sampling)")
    has_laws = any(p.law is not None for p in parameters)
    if has_laws and "samples" not in random:
        _fail(source, "random.samples", "the study draws random values: say how many samples")
    samples, seed = random.get("samples", 1), random.get("seed", 0)
    for key, value in (("samples", samples), ("seed", seed)):
        if isinstance(value, bool) or not isinstance(value, int) or value < (1 if key == "samples" else 0):
            _fail(source, f"random.{key}", f"must be a {'positive' if key == 'samples' else 'non-negative'} integer, got {value!r}")
    sampling = random.get("sampling", "independent")
    if sampling not in _SAMPLINGS:
        _fail(source, "random.sampling", f"unknown sampling '{sampling}' (expected {' or '.join(_SAMPLINGS)})")

    outputs_doc = doc.get("outputs") or {}
    if not isinstance(outputs_doc, dict):
        _fail(source, "outputs", f"must be a mapping with keys {', '.join(_OUTPUT_KEYS)}")
    outputs: _typing.Dict[str, _typing.Any] = {}
    for key, value in outputs_doc.items():
        if key not in _OUTPUT_KEYS:
            _fail(source, f"outputs.{key}", f"unknown key (expected one of: {', '.join(_OUTPUT_KEYS)})")
        if key == "series":
            if not isinstance(value, dict) or "columns" not in value or set(value) - {"columns", "every"}:
                _fail(source, "outputs.series", "must be {columns: [names], every: k}")
            every = value.get("every", 1)
            if isinstance(every, bool) or not isinstance(every, int) or every < 1:
                _fail(source, "outputs.series.every", f"must be a positive integer, got {every!r}")
            outputs["series"] = {"columns": _columns(source, "outputs.series.columns", value["columns"]), "every": every}
        else:
            outputs[key] = _columns(source, f"outputs.{key}", value)
    _check_columns(source, _model(model_doc, model_path), settings, outputs,
                   any(p.path.startswith("settings.") for p in parameters))
    runs = (samples if has_laws else 1) * _math.prod(len(p.values) for p in parameters if p.values is not None)
    if runs > _MOST_RUNS:
        _fail(source, "parameters", f"the study makes {runs} runs (its grid's points x its samples), more than the "
                                    f"{_MOST_RUNS} a study may make: split it")
    batch = doc.get("batch")
    if batch is not None and (isinstance(batch, bool) or not isinstance(batch, int) or batch < 1):
        _fail(source, "batch", f"must be a positive integer (runs per Dask task), got {batch!r}")
    return Study(source, model_path, _json.dumps(model_doc), parameters, samples if has_laws else 1, seed, sampling,
                 dict(settings), outputs, batch)


def _model(doc: Value, source: str) -> _typing.Any:
    """The Model of a model file's mapping (as JSON text, which the YAML reader reads)."""
    from . import Model
    return Model.parse(_json.dumps(doc), source)


def _check_columns(source: str, model: _typing.Any, settings: _typing.Dict[str, Value],
                   outputs: _typing.Dict[str, _typing.Any], settings_vary: bool) -> None:
    """Output columns that the model's runs do not have, found by a run of a microsecond of the
    study's model with its settings (a column that a varied setting adds is left to the runs)."""
    import warnings

    from . import IntegrationError, RunError, RunWatchError, SingularConfigurationError, simulate

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            probe: _typing.Dict[str, _typing.Any] = {**settings, "t_end": 1e-6, "output_dt": 1e-6, "threads": 1}
            columns = simulate(model, **probe).columns
    except (SingularConfigurationError, RunWatchError, IntegrationError, RunError) as e:
        columns = e.result.columns
    except Exception:  # the study's own settings or model fail: every run will say so in its row
        return
    wanted = [(f"outputs.{kind}", c) for kind in ("final", "max", "min") for c in outputs.get(kind, [])]
    wanted += [("outputs.series.columns", c) for c in outputs.get("series", {}).get("columns", [])]
    for key, column in wanted:
        if column not in columns and not settings_vary:
            _fail(source, key, f"the runs have no column '{column}' ({_names(column, columns)})")


def _item(section: _typing.List[Value], name: str, where: str) -> Value:
    """The item of a model-file list named `name` (its `name`, or a drive's `joint`), else item #name
    counted from 1 as the reader's messages count ("force #2")."""
    for item in section:
        if isinstance(item, dict) and name in (item.get("name"), item.get("joint")):
            return item
    if name.isdigit() and 1 <= int(name) <= len(section):
        return section[int(name) - 1]
    names = [str(item.get("name", item.get("joint"))) for item in section if isinstance(item, dict)
             and ("name" in item or "joint" in item)]
    raise KeyError(f"{where} has no item '{name}'" + (f" ({_names(name, names)})" if names else
                                                      f" (its items are counted 1..{len(section)})"))


def _apply(model: Value, settings: _typing.Dict[str, Value], path: str, value: Value,
           known_settings: _typing.Optional[_typing.Set[str]] = None) -> None:
    """Sets `path` to `value` in the model file's mapping or in the run's settings."""
    parts = path.split(".")
    if parts[0] == "settings":
        if len(parts) != 2 or (known_settings is not None and parts[1] not in known_settings):
            raise KeyError(f"'{path}' is not a run setting (settings.<name>, loopdyn.options() names them)")
        settings[parts[1]] = value
        return
    if parts[0] in _SECTIONS:
        if len(parts) < 3:
            raise KeyError(f"'{path}': give {parts[0]}.<name>.<key>")
        node = _item(model.get(parts[0]) or [], parts[1], parts[0])
        keys, where = parts[2:], f"{parts[0]}.{parts[1]}"
    else:
        node, keys, where = model, parts, ""
    for depth, key in enumerate(keys):
        last = depth == len(keys) - 1
        here = f"{where}.{key}" if where else key
        if isinstance(node, list):
            if not key.isdigit() or int(key) >= len(node):
                raise IndexError(f"'{here}': {where} is a list of {len(node)}; index it from 0")
            if last:
                node[int(key)] = value
            else:
                node = node[int(key)]
        elif isinstance(node, dict):
            if last:
                node[key] = value
            elif key not in node:
                raise KeyError(f"'{here}' is not in the model (only a whole value can be set where the model "
                               "file leaves a key at its default)")
            else:
                node = node[key]
        else:
            raise TypeError(f"'{here}': {where} is a single value")
        where = here


# ---------------------------------------------------------------------------------------------
# The work: one batch of runs in one Dask task, in the worker's process.

def _summaries(result: _typing.Any, outputs: _typing.Dict[str, _typing.Any]) -> Row:
    row: Row = {}
    for kind in ("final", "max", "min"):
        for column in outputs.get(kind, []):
            values = result[column]
            row[f"{kind}.{column}"] = float(values[-1] if kind == "final" else
                                            (values.max() if kind == "max" else values.min()))
    for name, value in result.stats.items():
        row[f"stats.{name}"] = value
    return row


def _run(run: int, model_text: str, model_source: str, settings: _typing.Dict[str, Value],
         values: _typing.Dict[str, Value], outputs: _typing.Dict[str, _typing.Any],
         series_dir: _typing.Optional[str]) -> Row:
    """One run, never raising: its row says how it ended."""
    import warnings

    import loopdyn

    start = _time.perf_counter()
    row: Row = {"run": run, "status": "failed", "method": "", "t_final": float("nan"), "message": ""}
    row.update({path: _cell(v) for path, v in values.items()})
    result = None
    try:
        model_doc = _json.loads(model_text)
        run_settings: _typing.Dict[str, _typing.Any] = {"threads": 1, **settings}
        for path, value in values.items():
            _apply(model_doc, run_settings, path, value)
        model = loopdyn.Model.parse(_json.dumps(model_doc), f"{model_source} (run {run})")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                result = loopdyn.simulate(model, **run_settings)
                row["status"] = "completed"
            except (loopdyn.SingularConfigurationError, loopdyn.RunWatchError, loopdyn.IntegrationError,
                    loopdyn.RunError) as e:
                result = e.result
                row["status"], row["message"] = "stopped", str(e)
        if caught and not row["message"]:
            row["message"] = " | ".join(str(w.message).replace("\n", " ") for w in caught)
        row["method"] = result.method
        row["t_final"] = float(result["t"][-1]) if len(result) else float("nan")
        row.update(_summaries(result, outputs))
        if series_dir is not None and "series" in outputs:
            _write_series(_os.path.join(series_dir, f"run-{run:06d}.csv"), result, outputs["series"])
    except Exception as e:  # a run's failure is its row's message, never a lost run
        row["status"], row["message"] = "failed", f"{type(e).__name__}: {e}"
    row["message"] = str(row["message"]).replace("\n", " ")
    row["wall_s"] = _time.perf_counter() - start
    row["worker_pid"] = _os.getpid()
    return row


def _write_series(path: str, result: _typing.Any, series: _typing.Dict[str, _typing.Any]) -> None:
    rows = list(range(0, len(result), series["every"]))
    if len(result) and rows[-1] != len(result) - 1:
        rows.append(len(result) - 1)
    data = _numpy.column_stack([result[c][rows] for c in series["columns"]])
    _numpy.savetxt(path + ".part", data, delimiter=",", header=",".join(series["columns"]), comments="", fmt="%.15g")
    _os.replace(path + ".part", path)  # whole or absent, even if the worker dies while writing


def _batch(runs: _typing.List[_typing.Tuple[int, _typing.Dict[str, Value]]], model_text: str, model_source: str,
           settings: _typing.Dict[str, Value], outputs: _typing.Dict[str, _typing.Any],
           series_dir: _typing.Optional[str]) -> _typing.List[Row]:
    return [_run(k, model_text, model_source, settings, values, outputs, series_dir) for k, values in runs]


def _import_loopdyn() -> None:
    import loopdyn  # noqa: F401


def _leave_interrupts() -> None:
    """Ctrl-C reaches every process of the terminal's group: the local cluster's workers leave it
    to the sweeping process, which stops them as it closes the cluster (no worker tracebacks)."""
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _cell(value: Value) -> Value:
    return _json.dumps(value) if isinstance(value, (list, dict)) else value


# ---------------------------------------------------------------------------------------------
# The table

_FIXED = ["run", "status", "method", "t_final", "message"]
# Result.stats of a run (the integrator's work, the run watch's worst checks): columns stats.<key>.
_STATS = ["rhs_evaluations", "steps_accepted", "steps_rejected", "change_points_crossed", "projections",
          "watch_accuracy", "watch_worst_balance", "watch_balance_scale", "watch_worst_position",
          "watch_worst_velocity", "watch_worst_completion"]


def columns(study: Study) -> _typing.List[str]:
    """The result table's columns: how each run ended, its parameters, the study's outputs, its
    stats, its wall time and the worker process that ran it."""
    outputs = [f"{kind}.{c}" for kind in ("final", "max", "min") for c in study.outputs.get(kind, [])]
    return _FIXED + study.names + outputs + [f"stats.{k}" for k in _STATS] + ["wall_s", "worker_pid"]


class _Table:
    """The result CSV: a `# loopdyn sweep:` line naming the study and its fingerprint, the header,
    then one line per run in the order runs end, each batch written whole and flushed (a cell is
    empty where a run has no value: a failed run's outputs)."""

    def __init__(self, path: str, study: Study, resume: bool, total: int) -> None:
        self.path, self.columns = path, columns(study)
        self.done: _typing.Set[int] = set()
        fingerprint = study.fingerprint()
        if _os.path.exists(path) and resume:
            self._read(fingerprint)
            self.file = open(path, "a", encoding="utf-8")
            return
        if _os.path.exists(path):
            raise StudyError(f"{path} exists: resume the sweep to finish it, or remove the file to start again")
        self.file = open(path, "w", encoding="utf-8")
        self.file.write(f"# loopdyn sweep: {study.source}, {total} runs, fingerprint {fingerprint}\n")
        self.file.write(",".join(self.columns) + "\n")
        self.file.flush()

    def _read(self, fingerprint: str) -> None:
        import csv
        with open(self.path, encoding="utf-8", newline="") as f:
            first = f.readline()
            if f"fingerprint {fingerprint}" not in first:
                raise StudyError(f"{self.path} holds the results of another study (or of this one before it "
                                 "changed): remove it, or write the results elsewhere")
            lines = [line for line in f if not line.startswith("#")]
        rows = list(csv.reader(lines))
        if rows[:1] != [self.columns]:
            raise StudyError(f"{self.path} does not have the columns of this study's table: remove it, or write "
                             "the results elsewhere")
        self.done = {int(r[0]) for r in rows[1:] if len(r) == len(self.columns)}

    def write(self, rows: _typing.List[Row]) -> None:
        import csv
        import io
        text = io.StringIO()
        writer = csv.writer(text, lineterminator="\n")
        for row in rows:
            writer.writerow(["" if row.get(c) is None else _format(row.get(c)) for c in self.columns])
        self.file.write(text.getvalue())  # one write per batch: a killed client leaves whole lines
        self.file.flush()
        self.done.update(int(row["run"]) for row in rows)

    def close(self, line: str) -> None:
        self.file.write(f"# loopdyn sweep: {line}\n")
        self.file.close()


def _format(value: Value) -> str:
    if isinstance(value, float):
        return format(value, ".15g")
    return str(value)


# ---------------------------------------------------------------------------------------------
# The driver

class Summary(_typing.NamedTuple):
    """What a sweep did: runs in the study, run now, skipped (rows already in the file), and
    counts by status of the runs made now; `path` of the table."""
    path: str
    runs: int
    ran: int
    skipped: int
    completed: int
    stopped: int
    failed: int
    seconds: float


def local_cluster(workers: int) -> _typing.Any:
    """A Dask LocalCluster of `workers` processes of one thread each (a run uses one core), whose
    workers do not sample their stacks for Dask's dashboard profile (every 10 ms it takes the GIL
    from the runs' Python part: the four-bar study of bench/run_sweep.sh ran 10-25 % slower with it)."""
    import logging

    import dask
    from distributed import LocalCluster
    with dask.config.set({"distributed.worker.profile.enabled": False}):  # the workers inherit it
        # Its processes log nothing below CRITICAL: at a Ctrl-C a worker's last heartbeat can find
        # the scheduler closed and print a traceback; a lost worker reaches the sweep as an error.
        return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0",
                            silence_logs=logging.CRITICAL)


def sweep(study: _typing.Union[str, "_os.PathLike[str]", Study], out: _typing.Optional[str] = None,
          workers: _typing.Optional[int] = None, scheduler: _typing.Optional[str] = None, resume: bool = False,
          progress: _typing.Optional[bool] = None,
          on_batch: _typing.Optional[_typing.Callable[[_typing.List[Row]], None]] = None) -> Summary:
    """Runs a study on Dask distributed and writes one row per run to `out` (default: the study
    file's name with .results.csv).

    workers: processes of the LocalCluster started on this machine (default: one per core), or
    scheduler: the address of a running Dask scheduler ("tcp://host:8786") whose workers import
    loopdyn. resume: skip the runs that already have a row in `out`. progress: a tqdm bar on
    stderr (default: when stderr is a terminal). on_batch(rows) is called in this process as each
    batch's rows are written. Ctrl-C stops the sweep and leaves `out` readable; run it again with
    resume to finish. A run that fails or stops is a row with its message, never an exception.
    """
    from distributed import Client, as_completed  # Debian's python3-distributed

    if not isinstance(study, Study):
        study = load_study(study)
    out = out or _os.path.splitext(study.source)[0] + ".results.csv"
    runs = study.runs()
    table = _Table(out, study, resume, len(runs))
    todo = [(k, values) for k, values in enumerate(runs) if k not in table.done]
    series_dir = None
    if "series" in study.outputs:
        series_dir = _os.path.splitext(out)[0] + ".series"
        _os.makedirs(series_dir, exist_ok=True)
    start = _time.perf_counter()
    counts = {"completed": 0, "stopped": 0, "failed": 0}
    cluster = None
    if scheduler is None:
        n = workers or _os.cpu_count() or 1
        cluster = local_cluster(n)
    client = Client(scheduler or cluster)
    bar = None
    ending = "interrupted"
    try:
        nworkers = max(1, len(client.scheduler_info()["workers"]))
        # 16 tasks a worker or more, so that the last ones leave little idle time; 50 runs at most.
        size = study.batch or max(1, min(50, len(todo) // (16 * nworkers)))
        batches = [todo[k:k + size] for k in range(0, len(todo), size)]
        if progress is None:
            progress = _sys.stderr.isatty()
        if progress:
            from tqdm import tqdm  # type: ignore[import]  # Debian's python3-tqdm
            bar = tqdm(total=len(todo), unit="run", file=_sys.stderr)
        client.run(_import_loopdyn)  # on every worker at once, not in each one's first task
        if cluster is not None:
            client.run(_leave_interrupts)
        model_text = client.scatter(study.model_text, broadcast=True)
        futures = {client.submit(_batch, b, model_text, study.model_path, study.settings, study.outputs, series_dir,
                                 pure=False): b for b in batches}
        for future in as_completed(futures):
            try:
                rows = future.result()
            except Exception as e:  # the batch's workers died too often (KilledWorker): its runs say so
                rows = [{"run": k, "status": "failed", "message": f"lost: {type(e).__name__}: {e}",
                         **{p: _cell(v) for p, v in values.items()}} for k, values in futures[future]]
            table.write(rows)
            for row in rows:
                counts[row["status"]] = counts.get(row["status"], 0) + 1
            if bar is not None:
                bar.update(len(rows))
            if on_batch is not None:
                on_batch(rows)
        ending = (f"{len(todo)} runs made ({counts['completed']} completed, {counts['stopped']} stopped, "
                  f"{counts['failed']} failed), {len(runs) - len(todo)} skipped")
    finally:
        if bar is not None:
            bar.close()
        table.close(ending)
        client.close()
        if cluster is not None:
            cluster.close()
    return Summary(out, len(runs), len(todo), len(runs) - len(todo), counts["completed"], counts["stopped"],
                   counts["failed"], _time.perf_counter() - start)


def main(argv: _typing.Optional[_typing.List[str]] = None) -> int:
    """`loopdyn sweep` (the CLI hands its arguments here)."""
    parser = _argparse.ArgumentParser(prog="loopdyn sweep", description="run a parameter study on Dask distributed "
                                      "(docs/sweeps.md): one row per run in a CSV table")
    parser.add_argument("study", help="study file (YAML)")
    parser.add_argument("--out", help="result table (default: STUDY.results.csv)")
    parser.add_argument("--workers", type=int, help="processes of the local cluster (default: one per core)")
    parser.add_argument("--scheduler", help="address of a running Dask scheduler (tcp://HOST:PORT) instead")
    parser.add_argument("--resume", action="store_true", help="run only the runs without a row in the table")
    parser.add_argument("--quiet", action="store_true", help="no progress bar, no summary")
    args = parser.parse_args(argv)
    if args.workers is not None and args.workers < 1:
        parser.error("--workers must be at least 1")
    try:
        s = sweep(args.study, out=args.out, workers=args.workers, scheduler=args.scheduler, resume=args.resume,
                  progress=None if not args.quiet else False)
    except StudyError as e:
        print(f"loopdyn: error: {e}", file=_sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("loopdyn: sweep interrupted: the rows written so far are kept; --resume finishes it",
              file=_sys.stderr)
        return 130
    if not args.quiet:
        print(f"wrote       {s.path} ({s.runs} runs: {s.ran} made, {s.skipped} skipped)")
        print(f"runs        {s.completed} completed, {s.stopped} stopped, {s.failed} failed")
        print(f"wall        {s.seconds:.2f} s ({s.ran / s.seconds if s.seconds > 0 else 0:.1f} runs/s)")
    return 0


if __name__ == "__main__":  # python3 -m loopdyn.sweeps STUDY ...
    _sys.exit(main())
