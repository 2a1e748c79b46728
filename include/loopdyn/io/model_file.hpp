// YAML model file (docs/model-format.md): parse into a Mechanism. Syntax and shape errors
// (malformed YAML, unknown or misspelt keys, wrong vector lengths, wrong types, missing required
// fields) throw ModelError "file:line: problem"; each spec's `where` is set to "file:line" so that
// Model::build names the same place for semantic errors (unknown bodies, bad inertia, ...).
#pragma once

#include <string>

#include "loopdyn/mechanism.hpp"

namespace loopdyn {

/// Reads and parses a model file. Throws ModelError when it cannot be read or is invalid.
Mechanism load_mechanism(const std::string& path);
/// Parses model-file text; `source` names it in messages.
Mechanism parse_mechanism(const std::string& text, const std::string& source);

}  // namespace loopdyn
