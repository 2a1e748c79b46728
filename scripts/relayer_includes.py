#!/usr/bin/env python3
"""Rewrites #include lines of the given C++ files from loopdyn's flat header paths (before issue 37)
to the layer folders (docs/architecture.md): `#include "loopdyn/model.hpp"` becomes
`#include "loopdyn/core/model.hpp"`, and private headers are named from src/. For code written
against loopdyn 0.1's paths: `python3 scripts/relayer_includes.py $(git ls-files '*.cpp' '*.hpp')`."""
import re
import sys

LAYERS = {
    "core": ["spatial", "joints", "mechanism", "model", "kinematics", "tree_dynamics", "forces", "linalg",
             "body_coordinates"],
    "loops": ["constraints", "loop_structure", "structural_rank", "aggregation", "assembly", "projection",
              "reactions", "change_points", "row_choice"],
    "formulations": ["formulation"],
    "run": ["integrators", "simulator", "run_watch", "run"],
    "mechanisms": ["generators", "iftomm", "square_nets", "zoo"],
}
PUBLIC = {f"loopdyn/{h}.hpp": f"loopdyn/{layer}/{h}.hpp" for layer, hs in LAYERS.items() for h in hs}
PUBLIC["loopdyn/io/viewer.hpp"] = "loopdyn/viewer/viewer.hpp"
PRIVATE = {
    "constraint_rows.hpp": "loops/constraint_rows.hpp",
    "../constraint_rows.hpp": "loops/constraint_rows.hpp",
    "model_tree.hpp": "core/model_tree.hpp",
    "rods.hpp": "mechanisms/rods.hpp",
    "setting_check.hpp": "formulations/setting_check.hpp",
    "urdf_xml.hpp": "io/urdf_xml.hpp",
    "edit_distance.hpp": "io/edit_distance.hpp",
    "io/viewer/scene.hpp": "viewer/scene.hpp",
    "io/viewer/assets.hpp": "viewer/assets.hpp",
}
INCLUDE = re.compile(r'^(\s*#\s*include\s*)([<"])([^>"]+)([>"])', re.M)


def rewrite(match):
    head, open_, path, close = match.groups()
    new = PUBLIC.get(path) or PRIVATE.get(path) or path
    return f"{head}{open_}{new}{close}"


for name in sys.argv[1:]:
    with open(name, encoding="utf-8") as f:
        text = f.read()
    new = INCLUDE.sub(rewrite, text)
    if new != text:
        with open(name, "w", encoding="utf-8") as f:
            f.write(new)
