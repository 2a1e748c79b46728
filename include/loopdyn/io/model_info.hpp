// The description of a model that `loopdyn info --json` prints and Python's Model.info() returns:
// bodies, tree and loop-closing joints (with their redundant rows), nq, nv, the loop Jacobian's
// rank and the DOF, the aggregated bodies of 002 §4.2, the default method and why, and which
// methods cover the model.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "loopdyn/core/model.hpp"

namespace loopdyn {

nlohmann::json describe(const Model& model);

/// "fourbar (3 bodies, nq = 3, nv = 3, 1 loop-closing joint)": the model in one line, as the CLI's
/// summaries and Python's repr give it.
std::string model_headline(const Model& model);

}  // namespace loopdyn
