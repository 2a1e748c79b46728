// The equations of motion of a closed-loop mechanism as a separate code path builds them, solved in
// long double (tests and results programs only): M u̇ + Gᵀ λ = Q, G u̇ = γ from loopdyn's CRBA,
// RNEA and constraint rows, with no formulation between them. u̇ comes out to about 1e-19 of what
// these double data define, so its distance to a formulation's u̇ is that formulation's error; and
// the same solve with the data rounded once (`rounding`) says how far any double-precision method
// can be expected to come.
#pragma once

#include <cstdint>
#include <vector>

#include "loopdyn/core/model.hpp"
#include "loopdyn/loops/constraints.hpp"

namespace loopdyn::reference {

/// u̇ at (q, u), t = 0, of the kept rows `cons` (independent rows: the KKT matrix is factored by
/// partial pivoting). With `rounding` ≠ 0, every entry of M and G is first multiplied by
/// 1 ± 1.1e-16, the signs drawn from that seed (M then made symmetric again).
VecX long_double_accelerations(const Model& model, const Constraints& cons, const VecX& q, const VecX& u,
                               std::uint64_t rounding = 0);

/// The largest relative change ‖u̇ − exact‖ / ‖exact‖ of long_double_accelerations over three
/// roundings of the data (seeds 1, 2, 3), exact being the unrounded solve: how close to `exact` a
/// double-precision method can be expected to come.
double rounding_change(const Model& model, const Constraints& cons, const VecX& q, const VecX& u, const VecX& exact);

struct ClosedState {
  double t = 0.0;
  VecX q, u;
};
/// States of a motion: dca from (q0, u0) by RK4 steps of h to t_end, the rows every `every` s from
/// t = from on, each assembled onto `cons` (the coarse steps leave them near, not on, the motion).
std::vector<ClosedState> moving_states(const Model& model, const Constraints& cons, double h, double every,
                                       double from, double t_end);

}  // namespace loopdyn::reference
