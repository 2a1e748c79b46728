// URDF import (docs/model-format.md, "URDF"): a robot description read with urdfdom (Debian's
// liburdfdom-dev) into a Mechanism, plus loopdyn's <loop_joint> extension element for the joints
// that close kinematic loops (read with tinyxml2: urdfdom skips elements it does not know).
//
// Links become bodies (massless links on fixed joints are merged into their parent; a root link
// named `world`, or a massless root, is the ground; any other root is fixed to the ground), joints
// become tree joints, <loop_joint>s loop-closing joints (cut), <mimic> a coordinate coupling and
// <dynamics damping> a joint damper; <visual> shapes are kept for the viewer. Every error is a
// ModelError "file:line: element 'name': problem"; specs keep "file:line" in `where`, so that
// Model::build names the element's line too.
#pragma once

#include <string>
#include <vector>

#include "loopdyn/core/mechanism.hpp"

namespace loopdyn {

/// True when `path` ends in ".urdf" in any letter case: load_mechanism reads it with load_urdf.
bool is_urdf_path(const std::string& path);

/// Reads and converts a URDF file. `notes`, when given, receives one line per thing read but not
/// kept as written (a mesh file not found, a massless root merged into the ground, a transmission
/// ignored, ...). Throws ModelError when the file cannot be read or is invalid.
Mechanism load_urdf(const std::string& path, std::vector<std::string>* notes = nullptr);

/// Converts URDF text; `source` names it in messages, and relative and package:// mesh paths are
/// looked up from its folder.
Mechanism parse_urdf(const std::string& text, const std::string& source, std::vector<std::string>* notes = nullptr);

}  // namespace loopdyn
