#!/usr/bin/env python3
"""Checks the dependency direction of loopdyn's layers (docs/architecture.md): a file of a layer
includes headers of its own layer and of the layers below it only, public ones as
"loopdyn/<layer>/x.hpp" and private ones (under src/) as "<layer>/x.hpp". Run by ctest (test
`layers`); prints every include that points upward and exits 1, or prints the count and exits 0."""
import pathlib
import re
import sys

# Lower layers first; layers of one rank (io, mechanisms) may not include each other.
RANK = {"core": 0, "loops": 1, "formulations": 2, "run": 3, "io": 4, "mechanisms": 5, "viewer": 5}
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)


def layer_of(path, root):
    parts = path.relative_to(root).parts
    if parts[0] == "include" and len(parts) > 2 and parts[1] == "loopdyn":
        return parts[2]
    if parts[0] == "src":
        return parts[1]
    return None


def included_layer(include):
    parts = include.split("/")
    if parts[0] == "loopdyn" and len(parts) > 2:
        return parts[1]
    if parts[0] in RANK and len(parts) > 1:
        return parts[0]
    return None


def self_test():
    """The check finds an upward include, a bare private name and a file outside the layers."""
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        root = pathlib.Path(d)
        for name, text in {"include/loopdyn/core/a.hpp": '#include "loopdyn/run/b.hpp"\n',
                           "src/loops/c.cpp": '#include "c_private.hpp"\n#include "loopdyn/core/a.hpp"\n',
                           "src/misc/d.cpp": ""}.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
        problems, _, _ = check(root)
    expected = ["upward", "name it from src/", "not in a layer folder"]
    missing = [e for e in expected if not any(e in p for p in problems)]
    print("self-test:", "caught " + ", ".join(expected) if not missing else "MISSED " + ", ".join(missing))
    return 1 if missing or len(problems) != 3 else 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    problems, checked, nfiles = check(root)
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"layers: {checked} includes of {nfiles} files point downward or within their layer")
    return 0


def check(root):
    files = [p for d in ("include/loopdyn", "src") for p in (root / d).rglob("*")
             if p.suffix in (".hpp", ".cpp", ".h")]
    problems, checked = [], 0
    for path in sorted(files):
        layer = layer_of(path, root)
        if layer not in RANK:
            problems.append(f"{path.relative_to(root)}: not in a layer folder ({', '.join(RANK)})")
            continue
        for include in INCLUDE.findall(path.read_text(encoding="utf-8")):
            where = f"{path.relative_to(root)} ({layer}) includes {include}"
            if include.startswith(".") or (include.endswith(".hpp") and "/" not in include):
                problems.append(f"{where}: name it from src/ (\"<layer>/x.hpp\") or as \"loopdyn/<layer>/x.hpp\"")
                continue
            target = included_layer(include)
            if target is None:
                if include.startswith("loopdyn/"):
                    problems.append(f"{where}: outside every layer")
                continue  # a library's header (Eigen, yaml-cpp, ...)
            checked += 1
            if target not in RANK:
                problems.append(f"{where}: of no layer")
            elif target != layer and RANK[target] >= RANK[layer]:
                problems.append(f"{where} ({target}): upward")
    return problems, checked, len(files)


if __name__ == "__main__":
    sys.exit(main())
