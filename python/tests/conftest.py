"""Shared fixtures: the repository's models and the CLI built beside the module (CTest sets
LOOPDYN_CLI and LOOPDYN_SOURCE_DIR), for comparisons with an independent path to the same numbers."""
import csv
import importlib
import os
import pathlib
import subprocess

import numpy as np
import pytest

SOURCE_DIR = pathlib.Path(os.environ.get("LOOPDYN_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
MODELS = SOURCE_DIR / "models"


def model_path(name):
    return str(MODELS / name)


def cli_path():
    """The loopdyn binary the tests run (CTest sets LOOPDYN_CLI)."""
    return os.environ.get("LOOPDYN_CLI", str(SOURCE_DIR / "build" / "loopdyn"))


@pytest.fixture(scope="session")
def cli():
    """Runs `loopdyn <args>`; returns the CompletedProcess (text)."""
    path = cli_path()
    if not os.path.exists(path):
        pytest.skip(f"the CLI is not built ({path})")

    def run(*args, check=True):
        return subprocess.run([path, *map(str, args)], capture_output=True, text=True, check=check)
    return run


def optional_module(name):
    """The module `name`, which loopdyn itself does not need. The test is skipped without it, except
    under CTest (LOOPDYN_PYTHON_EXTRAS=required): scripts/install-deps.sh installs it, so there it
    must run, and a missing module fails the test."""
    if os.environ.get("LOOPDYN_PYTHON_EXTRAS") == "required":
        return importlib.import_module(name)
    return pytest.importorskip(name)


def read_csv(path):
    """(header, rows as a float array) of a CLI trajectory; its last line, a comment saying how the
    run ended, is skipped."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    assert rows[-1][0].startswith("# loopdyn: "), rows[-1]
    return rows[0], np.array(rows[1:-1], dtype=float)
