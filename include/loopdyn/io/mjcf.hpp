// MJCF (MuJoCo XML) import: MuJoCo's own compiler (mj_loadXML, libmujoco) reads the file, so
// defaults, classes, angle units, inertia from geoms and `fromto` mean what they mean in MuJoCo;
// the compiled mjModel is then mapped onto a Mechanism (docs/model-format.md, "MJCF").
// `<equality>` connect and weld become spherical and fixed loop-closing joints, joint equalities
// linear couplings. Elements whose physics loopdyn would silently miss (tendons, actuators that
// push at zero control, armature, ...) are refused with a ModelError; elements that loopdyn does
// not model and that act only on contact or on command (contacts, joint limits, sensors, ...)
// are listed as notes, one line each, that the CLI prints to stderr.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "loopdyn/core/mechanism.hpp"

namespace loopdyn {

/// True for a path ending in `.xml` or `.mjcf` (any case): the files load_mechanism reads as MJCF.
bool is_mjcf_path(std::string_view path);

/// Reads an MJCF file. Throws ModelError "file[:line]: problem" for a file MuJoCo refuses (its
/// message and line kept) and for what loopdyn cannot represent (naming the element). When
/// `notes` is given, what was left out without changing the passive dynamics is appended to it.
Mechanism load_mjcf(const std::string& path, std::vector<std::string>* notes = nullptr);

}  // namespace loopdyn
