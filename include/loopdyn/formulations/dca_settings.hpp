// dca's settings (paper 004, formulations/dca.hpp) and their option table (core/options.hpp).
#pragma once

#include "loopdyn/core/options.hpp"

namespace loopdyn {

/// The paper's values as defaults (004 §4.1): penalty α of the augmented Lagrangian
/// λ = λ* + α(G a + ν) (eqs 6, 17), in 1/kg for a force per unit acceleration of the rows (004
/// works in SI units; formulations/dca.hpp has why 1e6 needs no scaling for its examples); μ
/// (damping ratio) and Ω (natural frequency, rad/s) of the Baumgarte-type terms
/// ν = −γ + 2μΩ Φ̇ + Ω² Φ (eq 6); at most max_iterations iterations of the multipliers per
/// acceleration evaluation and per projection, which stop when the largest change of a body
/// acceleration (m/s², rad/s²) falls below acceleration_tolerance (ε_a), of a position increment
/// (m, rad) below position_tolerance (ε_p), of a velocity (m/s, rad/s) below velocity_tolerance (ε_v).
struct DcaSettings {
  double alpha = 1e6;
  double mu = 1.0;
  double omega = 1.0;
  int max_iterations = 10;
  double position_tolerance = 1e-14;
  double velocity_tolerance = 1e-12;
  double acceleration_tolerance = 1e-10;
  /// dca projects positions, then velocities, mass-orthogonally onto the constraints after every
  /// accepted step (004 §3, the paper's second variant); false: its first variant, the augmented
  /// Lagrangian with the Baumgarte-type terms alone.
  bool projections = true;
};

/// The options of DcaSettings.
inline const OptionTable<DcaSettings>& dca_options() {
  using S = DcaSettings;
  static const OptionTable<S> table = [] {
    OptionTable<S> t{
        member_option("dca_alpha", &S::alpha, "1/kg",
                      "dca: penalty α of the augmented Lagrangian λ = λ* + α (G a + ν) (paper 004's 1e6)"),
        member_option("dca_mu", &S::mu, "", "dca: damping ratio μ of ν = −γ + 2μΩ Φ̇ + Ω² Φ"),
        member_option("dca_omega", &S::omega, "rad/s", "dca: natural frequency Ω of the same ν"),
        member_option("dca_max_iterations", &S::max_iterations, "",
                      "dca: largest number of iterations of the multipliers per evaluation and per projection"),
        member_option("dca_position_tolerance", &S::position_tolerance, "m, rad",
                      "dca: ε_p, the position projection stops when its largest increment is below it"),
        member_option("dca_velocity_tolerance", &S::velocity_tolerance, "m/s, rad/s",
                      "dca: ε_v, the velocity projection stops when the largest change of a velocity is below it"),
        member_option("dca_acceleration_tolerance", &S::acceleration_tolerance, "m/s², rad/s²",
                      "dca: ε_a, the iterations stop when the largest change of a body acceleration is below it"),
        member_option("dca_projections", &S::projections, "",
                      "dca: project positions and velocities onto the constraints after every step; off: paper "
                      "004's first variant, the augmented Lagrangian with its Baumgarte-type terms alone"),
    };
    t[3].alias = "dca_iterations";
    t[7].negation = "dca_no_projections";
    return t;
  }();
  return table;
}

}  // namespace loopdyn
