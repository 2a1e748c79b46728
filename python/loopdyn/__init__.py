"""loopdyn from Python: forward dynamics of multibody systems with closed kinematic loops.

The C++ library does the work (the _loopdyn extension); this file adds what is easier in Python:
the Mechanism builder, the choice of `method="auto"` with its restart, and the Result of a run.
docs/python.md has the API.
"""
import json as _json
import os as _os
import sys as _sys
import typing as _typing
import warnings as _warnings

import numpy as _numpy
import numpy.typing as _npt

from ._loopdyn import (Analysis, IntegrationError, InverseDynamics, Method, Model, ModelError, RunWatchError,
                       SingularConfigurationError, chain, ladder, method_names, nfourbar, options,
                       spatial_ladder, square_chain, square_net)
from ._loopdyn import __version__  # "<version> (git <describe>)", as `loopdyn --version`
from ._loopdyn import _check_options, _Simulation, _convert, _simulate, _view_csv, _view_table
from ._loopdyn import normalized_yaml as _normalized_yaml
from . import sweeps
from .sweeps import StudyError, sweep

__all__ = ["Analysis", "IntegrationError", "InverseDynamics", "Mechanism", "Method", "Model", "ModelError", "Result", "RunError", "RunWatchError",
           "SingularConfigurationError", "Simulation", "StudyError",
           "chain", "convert", "ladder", "load", "method", "method_names", "nfourbar", "options", "simulate", "spatial_ladder",
           "square_chain", "square_net", "sweep", "sweeps", "view"]


_Path = _typing.Union[str, "_os.PathLike[str]"]


def load(path: _Path) -> Model:
    """The Model of a model file: YAML, URDF (.urdf) or MJCF (.xml/.mjcf) (docs/model-format.md);
    ModelError names file:line and the problem."""
    return Model.load(str(path))


def convert(path: _Path, out: _typing.Optional[_Path] = None) -> str:
    """Any model file (YAML, URDF, MJCF) as loopdyn's YAML text, checked by building its Model (as
    `loopdyn convert`); with `out`, also written there, absolute mesh paths (an importer's) made
    relative to out's folder, from which the reader takes them. An importer's notes are UserWarnings."""
    return _convert(str(path), None if out is None else str(out))


def _plain(value: _typing.Any) -> _typing.Any:
    """numpy arrays and scalars as the lists and numbers json writes."""
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not a model-file value")


class Mechanism:
    """A mechanism described in code, item by item, with the model file's keys (docs/model-format.md).

    Model() hands it to the model-file reader as text, so that it gets the reader's checks and
    messages; a ModelError names the line of the script that added the offending item.
    """

    _SOURCE = "<mechanism>"

    def __init__(self, name: str = "mechanism", gravity: _typing.Sequence[float] = (0.0, 0.0, -9.81)) -> None:
        self.top = {"name": name, "gravity": gravity}
        self.items: _typing.Dict[str, _typing.List[_typing.Tuple[_typing.Dict[str, _typing.Any], str]]] = {
            "bodies": [], "joints": [], "markers": [], "forces": [], "constraints": []}
        self._where = {"top": self._caller(2)}

    def __repr__(self) -> str:
        counts = ", ".join(f"{len(v)} {k}" for k, v in self.items.items() if v)
        return f"<loopdyn.Mechanism '{self.top['name']}': {counts or 'empty'}>"

    @staticmethod
    def _caller(depth: int) -> str:
        """'file:line' of the user's call `depth` frames up (of the constructor, or of add_*)."""
        frame = _sys._getframe(depth)
        return f"{frame.f_code.co_filename}:{frame.f_lineno}"

    def _add(self, section: str, item: _typing.Dict[str, _typing.Any]) -> "Mechanism":
        self.items[section].append((item, self._caller(3)))
        return self

    def add_body(self, name: str, mass: float, **keys: _typing.Any) -> "Mechanism":
        """A body: `com` (3), `inertia` (3 or 6 numbers about the centre of mass), `visuals` (shapes for the viewer)."""
        return self._add("bodies", {"name": name, "mass": mass, **keys})

    def add_joint(self, name: str, type: str, parent: str, child: str, **keys: _typing.Any) -> "Mechanism":
        """A joint: `parent_frame`/`child_frame` ({xyz, rpy}), `axis`, `axis2`, `q`, `u`, `cut`, `independent`."""
        return self._add("joints", {"name": name, "type": type, "parent": parent, "child": child, **keys})

    def add_marker(self, name: str, body: str, xyz: _typing.Sequence[float] = (0.0, 0.0, 0.0)) -> "Mechanism":
        """A marker: a point of `body` (body frame) whose position is written as <name>.x/.y/.z columns."""
        return self._add("markers", {"name": name, "body": body, "xyz": xyz})

    def add_force(self, type: str, **keys: _typing.Any) -> "Mechanism":
        """A force element: joint_spring_damper, point_spring_damper, joint_force, body_force, body_torque."""
        return self._add("forces", {"type": type, **keys})

    def add_coupling(self, type: str, name: str, **keys: _typing.Any) -> "Mechanism":
        """A coordinate coupling (the file's `constraints:`): gear or linear."""
        return self._add("constraints", {"type": type, "name": name, **keys})

    def text(self) -> _typing.Tuple[str, _typing.List[str]]:
        """Model-file text (YAML flow style), one item a line, and the script location of each line."""
        lines, where = ["{" + _json.dumps(self.top, default=_plain)[1:-1] + ","], [self._where["top"]]
        for section, items in self.items.items():
            lines.append(f'"{section}": [')
            where.append(self._where["top"])
            for k, (item, at) in enumerate(items):
                lines.append(_json.dumps(item, default=_plain) + ("," if k + 1 < len(items) else ""))
                where.append(at)
            lines.append("],")
            where.append(self._where["top"])
        lines[-1] = "]}"
        return "\n".join(lines) + "\n", where

    def to_yaml(self) -> str:
        """The mechanism as loopdyn writes model files (`loopdyn generate`)."""
        return self._checked(_normalized_yaml)

    def build(self) -> Model:
        """The Model; ModelError (naming the script's line) when the mechanism is invalid."""
        return self._checked(Model.parse)

    def _checked(self, parse: _typing.Callable[[str, str], _typing.Any]) -> _typing.Any:
        text, where = self.text()
        try:
            return parse(text, self._SOURCE)
        except ModelError as e:
            raise ModelError(self._located(str(e), where)) from None

    def _located(self, message: str, where: _typing.List[str]) -> str:
        """'<mechanism>:7: problem' as 'script.py:42: problem'."""
        prefix, _, rest = message.partition(": ")
        source, _, line = prefix.rpartition(":")
        if source != self._SOURCE or not line.isdigit():
            return message
        return f"{where[int(line) - 1]}: {rest}"


def _required(model: _typing.Any, where: str) -> Model:
    """model, when it is a loopdyn.Model; else TypeError naming the call."""
    if not isinstance(model, Model):
        raise TypeError(f"{where}: model must be a loopdyn.Model (loopdyn.load(path), Mechanism.build(), "
                        f"loopdyn.ladder(...)), got {type(model).__name__}")
    return model


def method(model: Model, name: str = "auto", integrator: str = "dopri5", **options: _typing.Any) -> Method:
    """The formulation `name` for model (docs/methods.md); `auto` picks one for the integrator.
    options: the methods' settings by name (loopdyn.options("method") lists them)."""
    if name == "auto":
        name = _required(model, "method()").default_method(integrator=integrator)["method"]
    return Method(model, name, **options)


class Result:
    """A simulation's output rows: `data` (rows x columns) and `columns`, named as loopdyn's CSV.

    result["q.elbow"] is a view of one column of `data` (no copy). `method` is the method that ran,
    `handed_over` the one `auto` chose first when it stopped (`handovers`: (from, to, reason, t) of
    each hand-over, t where the second went on from the first's state, 0 where it started again), `initial` the assembly of the initial state (or None), `stats` the
    integrator's work and the run watch's worst checks, `events` the (t, message) reports of the
    method.
    """

    def __init__(self, columns: _typing.Sequence[str], data: _npt.NDArray[_numpy.float64], method: str,
                 stats: _typing.Dict[str, _typing.Any], events: _typing.List[_typing.Tuple[float, str]],
                 initial: _typing.Optional[_typing.Dict[str, _typing.Any]] = None,
                 handovers: _typing.Sequence[_typing.Tuple[str, str, str, float]] = ()) -> None:
        self.columns, self.data = list(columns), data
        self._index = {name: k for k, name in enumerate(self.columns)}
        self.method, self.stats, self.events = method, stats, events
        self.initial, self.handovers = initial, list(handovers)
        self.handed_over = self.handovers[0][0] if self.handovers else None

    def __getitem__(self, name: str) -> _npt.NDArray[_numpy.float64]:
        try:
            return self.data[:, self._index[name]]
        except KeyError:
            raise KeyError(f"no column '{name}' (columns: {', '.join(self.columns)})") from None

    def __contains__(self, name: object) -> bool:
        return name in self._index

    def __len__(self) -> int:
        return self.data.shape[0]

    def keys(self) -> _typing.List[str]:
        """The column names, in the CSV's order."""
        return list(self.columns)

    def to_pandas(self) -> _typing.Any:
        """A pandas DataFrame over the same data (pandas is needed for this only)."""
        import pandas  # type: ignore[import]  # Debian's pandas has no stubs
        return pandas.DataFrame(self.data, columns=self.columns, copy=False)

    def __repr__(self) -> str:
        return f"<loopdyn.Result: {self.method}, {len(self)} rows x {len(self.columns)} columns>"


class RunError(RuntimeError):
    """A run that stopped for a reason the library names but has no class for (a position analysis
    that fails, ...). Like every stop of simulate(), it carries the rows computed before it in
    `result`."""

    result: "Result"


_Stop = _typing.Union[SingularConfigurationError, RunWatchError, IntegrationError, RunError]
_STOPS: _typing.Dict[str, _typing.Callable[[str], _Stop]] = {
    "singular_configuration": SingularConfigurationError, "watch": RunWatchError, "integration": IntegrationError,
    "input": RunError, "failure": RunError}


_Forces = _typing.Callable[[float, _npt.NDArray[_numpy.float64], _npt.NDArray[_numpy.float64]], _npt.ArrayLike]


def simulate(model: Model, method: str = "auto", q0: _typing.Optional[_npt.ArrayLike] = None,
             u0: _typing.Optional[_npt.ArrayLike] = None, assemble: bool = True, forces: _typing.Optional[_Forces] = None,
             **options: _typing.Any) -> Result:
    """Integrates model from (q0, u0) (default: the model's), as `loopdyn simulate` does.

    forces: a function f(t, q, u) returning nv generalized forces (a numpy array or a list), added
    to the model's at every evaluation of the method: a controller. q and u are read-only arrays
    valid during the call (copy them to keep them). A result of another shape, a value that is not
    finite, or an exception raised by f stops the run with a RunError naming the time (the
    exception f raised is its __cause__, and the rows before the stop are its `result`); a
    SystemExit or KeyboardInterrupt raised by f is raised as it is.

    Loops are closed first (assemble=False: the state is checked instead). `method="auto"` picks
    one (model.default_method) and hands the run to dca when it stops: from the state where its
    singularity guard stopped it (the rows before are kept), and back once the loops are clear of
    the singular configuration; else from the start. A run that stops raises
    SingularConfigurationError, RunWatchError, IntegrationError or RunError, whose `result` holds
    the rows computed before the stop. The GIL is released during the run; Ctrl-C stops it within
    a few tens of milliseconds (it is checked between output times too) with KeyboardInterrupt.
    options: the run's and the methods' settings by name (loopdyn.options() lists them with their
    defaults; docs/methods.md, "Options"):
    """
    q, u, initial = _required(model, "simulate()")._start_state(q0, u0, assemble)
    columns, data, stats, events, ran, handovers, stop, message, raised = _simulate(model, q, u, forces, method=method,
                                                                                    **options)
    if isinstance(raised, (KeyboardInterrupt, SystemExit)):  # not the run's failure: the program's own
        raise raised
    # As the CLI: the first hand-over at a guard's stop and the first hand-back warn, later ones of
    # those kinds are only in result.handovers.
    for k, (source, target, reason, t) in enumerate(handovers):
        if t > 0 and k >= 2:
            continue
        if t > 0 and k == 1:
            note = (f"auto: {target} goes on from {source}'s state at {reason}; later hand-overs between them "
                    "are in result.handovers")
        else:
            went = (f"{target} goes on from {source}'s state at t = {t:.9g}, where its guard stopped it (the rows "
                    f"before are kept); {target} crosses singular configurations" if t > 0 else
                    f"starting again with {target}, which crosses singular configurations")
            note = f"auto: {source} stopped: {reason}\nauto: {went}"
        _warnings.warn(note, RuntimeWarning, stacklevel=2)
    result = Result(columns, data, ran, stats, events, initial, handovers)
    if stop:
        error = _STOPS[stop](message)
        error.result = result
        raise error from raised
    return result


class Simulation:
    """A run advanced step by step, for a controller that computes its inputs between steps (a
    digital controller at a fixed rate, an agent in the loop): step(dt, tau) integrates [t, t + dt]
    with the nv generalized forces tau held (zero-order hold) on top of the model's. The start and
    the options are simulate()'s (loopdyn.options()); the method is picked once (`auto` does not
    hand over). A stop raises as simulate() does, with the rows so far as `result`, and leaves the
    simulation stopped. docs/python.md has the details."""

    def __init__(self, model: Model, method: str = "auto", q0: _typing.Optional[_npt.ArrayLike] = None,
                 u0: _typing.Optional[_npt.ArrayLike] = None, assemble: bool = True, **options: _typing.Any) -> None:
        q, u, self.initial = _required(model, "Simulation()")._start_state(q0, u0, assemble)
        self._sim = _Simulation(model, q, u, method=method, **options)

    def step(self, dt: float, tau: _typing.Optional[_npt.ArrayLike] = None) -> "Simulation":
        """Integrates dt [s] with tau (nv generalized forces; None: zero) held; returns self."""
        try:
            self._sim.step(dt, tau)
        except (SingularConfigurationError, RunWatchError, IntegrationError) as e:
            e.result = self.result()
            raise
        except ValueError:
            raise
        except RuntimeError as e:
            error = RunError(str(e))
            error.result = self.result()
            raise error from None
        return self

    @property
    def t(self) -> float:
        """The time now [s]."""
        return self._sim.t

    @property
    def q(self) -> _npt.NDArray[_numpy.float64]:
        """The joint coordinates now (a copy)."""
        return self._sim.q

    @property
    def u(self) -> _npt.NDArray[_numpy.float64]:
        """The joint speeds now (a copy)."""
        return self._sim.u

    @property
    def state(self) -> _typing.Tuple[float, _npt.NDArray[_numpy.float64], _npt.NDArray[_numpy.float64]]:
        """(t, q, u) now (copies)."""
        return self._sim.t, self._sim.q, self._sim.u

    @property
    def method(self) -> str:
        """The method that runs the simulation."""
        return self._sim.method

    def result(self) -> Result:
        """The rows so far as a Result (the start, every output_dt within the steps, each step's end)."""
        columns, data, stats = self._sim.rows()
        return Result(columns, data, self.method, stats, [], self.initial)

    def __repr__(self) -> str:
        return f"<loopdyn.Simulation: {self.method}, t = {self.t:.9g}>"


def _options_doc(kind: str) -> str:
    """One line per option of the tables: keyword=default (unit): help."""
    lines = []
    for o in options(kind):
        unit = f" [{o['unit']}]" if o["unit"] else ""
        lines.append(f"    {o['name']}={o['default']!r}{unit}: {o['help']}")
    return "\n".join(lines) + "\n"


simulate.__doc__ = (simulate.__doc__ or "") + _options_doc("run")
method.__doc__ = (method.__doc__ or "") + "\n" + _options_doc("method")


def view(model: _Path, run: _typing.Union[Result, _Path], out: _Path,
         plot: _typing.Union[str, _typing.Sequence[str]] = ()) -> _Path:
    """Writes the viewer's page of `run` to `out` (docs/viewer.md): one self-contained HTML file that
    animates the run in a browser. `model` is the model file that was run (its visuals are drawn),
    `run` a Result of simulate() or the path of a CSV written by `loopdyn simulate`, `plot` more
    columns to plot besides energy and residuals (a list of names, or one text of names separated
    by commas, as the CLI's --plot). Returns `out`; ModelError for a run that does not
    match the model or an unknown plot column; a UserWarning for each mesh drawn as a wire cube (not
    STL, or a file that cannot be read)."""
    # A text is the CLI's comma-separated list: list() made "u.crank_pivot" its characters.
    columns = [c.strip() for c in plot.split(",") if c.strip()] if isinstance(plot, str) else list(plot)
    if isinstance(run, Result):
        _view_table(str(model), run.columns, run.data, str(out), columns)
    else:
        _view_csv(str(model), str(run), str(out), columns)
    return out
