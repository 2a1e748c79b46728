#include "loopdyn/run/start_state.hpp"

#include <stdexcept>
#include <string>

#include "loopdyn/loops/loop_structure.hpp"
#include "loopdyn/loops/projection.hpp"

namespace loopdyn {

StartState start_state(const Model& model, const VecX& q, const VecX& u, bool assemble) {
  StartState s{q, u, std::nullopt, false, 0.0};
  if (!model.has_loops()) return s;
  const Constraints& rows = model.loops().constraints;
  if (!assemble) {
    check_consistent(model, rows, q, u);
    s.checked = true;
    s.check_tolerance = consistency_tolerance;
    return s;
  }
  try {
    s.assembly = loopdyn::assemble(model, rows, q, u);
  } catch (const std::invalid_argument&) {
    throw;
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(std::string("cannot assemble the initial state: ") + e.what() +
                             "; fix the model's q (or geometry)");
  }
  s.q = s.assembly->q;
  s.u = s.assembly->u;
  return s;
}

}  // namespace loopdyn
