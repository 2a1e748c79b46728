// dca's own parameters, copied from FormulationSettings in one place (parameters_of): the rest of
// dca reads this struct, never the settings.
#pragma once

#include "loopdyn/formulations/formulation.hpp"

namespace loopdyn::dca {

struct Parameters {
  double alpha = 0.0;                  ///< α, the penalty of the augmented Lagrangian (004 eqs 6, 17)
  double mu = 0.0, omega = 0.0;        ///< μ, Ω of ν = −γ + 2μΩ Φ̇ + Ω² Φ (004 eq 6)
  int max_iterations = 0;              ///< of the multipliers, per evaluation and per projection
  double eps_p = 0.0, eps_v = 0.0, eps_a = 0.0;  ///< ε_p, ε_v, ε_a (004 §4.1)
  bool projections = true;             ///< positions and velocities after every accepted step (004 §3)
  int threads = 1;                     ///< resolved: the machine's cores for settings.threads = 0
  double rank_tolerance = 0.0;         ///< of multipliers()' kept-row solve
};

/// Reads every dca setting (and the shared threads and rank tolerance) of `settings`. Throws
/// std::invalid_argument naming the setting for α, μ, Ω, tolerances not finite and > 0 (μ, Ω >= 0),
/// iterations < 1, or a shared setting out of range (check_settings: threads, rank tolerance).
Parameters parameters_of(const FormulationSettings& settings);

}  // namespace loopdyn::dca
