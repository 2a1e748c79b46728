// The state a run starts from, made the same way for every front end (`loopdyn simulate`,
// Python's simulate()): the given (q, u) closed by assembly (loops/assembly.hpp), or checked for
// consistency and kept as given.
#pragma once

#include <optional>

#include "loopdyn/core/model.hpp"
#include "loopdyn/loops/assembly.hpp"

namespace loopdyn {

struct StartState {
  VecX q, u;
  /// The assembly that closed (q, u); none for a model without loops or when not assembling.
  std::optional<AssemblyResult> assembly;
  /// Not assembled but checked: (q, u) satisfy every loop within check_tolerance.
  bool checked = false;
  double check_tolerance = 0.0;
};

/// (q, u) assembled (`assemble`) or checked within consistency_tolerance (projection.hpp). A model
/// without loops starts from (q, u) as given. Throws std::runtime_error naming the loop joints when
/// the loops cannot close from q (assemble's message, and what to fix) or when a state to keep as
/// given does not satisfy them (check_consistent's), std::invalid_argument for wrong sizes.
StartState start_state(const Model& model, const VecX& q, const VecX& u, bool assemble);

}  // namespace loopdyn
