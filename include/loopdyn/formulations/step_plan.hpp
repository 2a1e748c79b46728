// StepPlan: what a formulation learns of the run's integrator before the run
// (Formulation::start). The integrators (run/integrators.hpp, a layer above) describe themselves
// with it, so that a method whose parameters depend on the step (srm: ε ~ h) needs nothing of them.
#pragma once

#include <string_view>

namespace loopdyn {

struct StepPlan {
  std::string_view integrator = "rk4";  ///< its name, for messages
  bool fixed_step = true;               ///< fixed step (rk2, rk4); false: error-controlled (dopri5)
  double step = 1e-3;                   ///< the fixed step h (s); an adaptive method's first guess
  /// Largest h·a on the negative real axis for which the explicit method is stable on ẏ = −a y:
  /// the real stability interval of Heun's RK2 is [−2, 0], of classical RK4 about [−2.785, 0].
  double stability_limit = 2.785;
};

}  // namespace loopdyn
