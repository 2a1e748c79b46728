"""The package as a user's tools see it: type stubs that match the module (mypy's stubtest) and
that type checkers read (mypy accepts typed uses and refuses wrong ones), a docstring on every
public name, reprs that say what an object is, nothing imported for internal use left public."""
import inspect
import os
import pathlib
import re
import subprocess
import sys

import loopdyn
from conftest import model_path, optional_module

TYPING = pathlib.Path(__file__).resolve().parent / "typing"
PACKAGE_DIR = str(pathlib.Path(loopdyn.__file__).resolve().parents[1])  # build/python


def mypy(*args):
    """mypy's (report, exit status), with the built package on its search path."""
    api = optional_module("mypy.api")
    os.environ["MYPYPATH"] = PACKAGE_DIR
    out, err, status = api.run(["--no-incremental", "--cache-dir", os.devnull, *args])
    return out + err, status


def test_the_stubs_match_the_module():
    optional_module("mypy.stubtest")
    done = subprocess.run([sys.executable, "-c", "import sys; from mypy.stubtest import main; sys.exit(main())",
                           "loopdyn", "--allowlist", str(TYPING / "stubtest_allowlist.txt")],
                          capture_output=True, text=True, env={**os.environ, "MYPYPATH": PACKAGE_DIR})
    assert done.returncode == 0, done.stdout + done.stderr
    stub = (pathlib.Path(PACKAGE_DIR) / "loopdyn" / "_loopdyn.pyi").read_text()
    assert "handle" not in stub and "numpy.ndarray[" not in stub, stub
    assert "def mass_matrix(self, q: numpy.typing.ArrayLike) -> numpy.typing.NDArray[numpy.float64]: ..." in stub


def test_mypy_accepts_typed_uses_and_the_package_itself():
    for args in ([str(TYPING / "good_use.py")], ["-p", "loopdyn"]):
        report, status = mypy(*args)
        assert status == 0, report


def test_mypy_refuses_wrong_uses_on_their_lines():
    report, status = mypy(str(TYPING / "bad_use.py"))
    assert status == 1, report
    expected = [k + 1 for k, line in enumerate((TYPING / "bad_use.py").read_text().splitlines())
                if "# error" in line]
    found = sorted({int(m.group(1)) for m in re.finditer(r"bad_use\.py:(\d+): error", report)})
    assert found == expected, report


def public_names():
    return [name for name in dir(loopdyn) if not name.startswith("_")]


def test_nothing_internal_is_public():
    # json, sys, warnings, os, typing, numpy: imported for the package's own use, under "_" names
    assert sorted(public_names()) == sorted(loopdyn.__all__)


def doc_text(member):
    """The object's own docstring (not one inherited from a base class) without pybind11's
    signature line."""
    doc = inspect.cleandoc(getattr(member, "__doc__", None) or "")
    lines = doc.splitlines()
    if lines and re.match(r"^[\w.]*\(.*\)( -> .*)?$", lines[0]):
        lines = lines[1:]
    return "\n".join(lines).strip()


def test_every_public_name_and_member_has_a_docstring():
    missing = []
    for name in public_names():
        obj = getattr(loopdyn, name)
        if not doc_text(obj):
            missing.append(name)
        if not inspect.isclass(obj):
            continue
        for member_name, member in vars(obj).items():
            if member_name.startswith("_"):
                continue
            target = member.fget if isinstance(member, property) and not member.__doc__ else member
            if not doc_text(member) and not doc_text(target):
                missing.append(f"{name}.{member_name}")
    assert not missing, f"no docstring: {', '.join(missing)}"


def test_reprs_say_what_an_object_is():
    model = loopdyn.load(model_path("fourbar_park_regular.yaml"))
    analysis = loopdyn.Analysis(model)
    objects = [model, loopdyn.method(model, "rcr"), loopdyn.simulate(model, t_end=0.02), loopdyn.Simulation(model),
               analysis, analysis.inverse_dynamics(0.0, model.q0, model.u0, model.u0, ["crank_pivot"]),
               loopdyn.Mechanism("m").add_body("b", 1.0)]
    for obj in objects:
        text = repr(obj)
        assert " object at 0x" not in text and text.startswith("<loopdyn."), text
    assert repr(loopdyn.method(model, "rcr")) == "<loopdyn.Method rcr of 'fourbar_park_regular'>"
    assert repr(model) == "<loopdyn.Model fourbar_park_regular (3 bodies, nq = 3, nv = 3, 1 loop-closing joint)>"


def test_the_assembly_names_its_independent_speeds_as_the_cli_does(cli):
    model = loopdyn.load(model_path("fourbar_park_regular.yaml"))
    assembly = model.assemble()
    assert assembly["independent_speeds"] == ["rocker_pivot"]
    assert assembly["independent_speed_indices"] == [2]
    out = cli("simulate", model_path("fourbar_park_regular.yaml"), "--t-end", "0.01", "--out", os.devnull).stdout
    assert "independent speeds: rocker_pivot\n" in out


def test_messages_name_python_keywords_not_cli_flags():
    model = loopdyn.load(model_path("fourbar_park_regular.yaml"))
    for bad in ({"dca_alpha": -1.0}, {"rtol": 0.0}, {"integrator": "rk4", "dt": 0.05}):
        try:
            loopdyn.simulate(model, method="dca", t_end=0.01, **bad)
        except (ValueError, RuntimeError) as e:
            assert "--" not in str(e), str(e)
            assert any(f"{key}=" in str(e) or f"`{key}`" in str(e) or key in str(e) for key in bad), str(e)
        else:
            raise AssertionError(f"{bad} ran")
