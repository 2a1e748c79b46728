// srm's settings (paper 003, formulations/srm.hpp) and their option table (core/options.hpp).
#pragma once

#include <optional>

#include "loopdyn/core/options.hpp"

namespace loopdyn {

struct SrmSettings {
  /// The update λ_s = λ_{s−1} + ε⁻¹(G u_s + α Φ_s) of its iterates s = 1..iterations. ε in s/kg
  /// (λ is a force, G u a speed); unset: ε = h·S·a_max, with h the fixed step, S the number of
  /// iterates and a_max the largest eigenvalue of G M⁻¹ Gᵀ at the initial configuration: half the
  /// explicit stability limit (003's ε ~ h for its unit bars; formulations/srm.hpp has the limit).
  /// α in 1/s: the rate at which position drift decays (Φ̇ = −αΦ once the iterates converge). It
  /// is not tied to h: λ carries αΦ/ε, and with α ~ 1/h that term, O(Φ/h²), would bias the
  /// multipliers by O(1) for an O(h²) drift (measured: reactions 1.5e-3 off lagrange-dense's at
  /// every h on the four-bar of 000).
  std::optional<double> epsilon;
  double alpha = 20.0;
  int iterations = 2;
  /// srm stops (on_singular = stop) or reports when the constraint direction its iterates still
  /// correct has a stiffness (Rayleigh quotient of G M⁻¹ Gᵀ) below this fraction of the smallest
  /// eigenvalue of G M⁻¹ Gᵀ at the start: the loops have come that much nearer a singular
  /// configuration, where the iterates no longer converge (formulations/srm.hpp). 0 disables it.
  double min_stiffness = 0.1;
  /// srm stops (on_singular = stop) or reports when the work its constraint forces have done since
  /// the start, |∫ −λᵀ G u dt|, exceeds this fraction of the mechanism's energy scale E_s, the
  /// largest T + |V − V(0)| so far (V gravity and springs), at least its weight × 1 m: ideal
  /// constraints do no work, so this is the energy srm's regularization has added or removed, its
  /// own error, which moves the motion along the loops. 1e-5 is ten times a fixed step's accuracy
  /// τ = 1e-6 (WatchSettings::fixed_step_accuracy), the zoo's energy bound (docs/methods.md,
  /// "srm"). 0 disables it.
  double max_work = 1e-5;
};

/// The options of SrmSettings.
inline const OptionTable<SrmSettings>& srm_options() {
  using S = SrmSettings;
  static const OptionTable<S> table{
      member_option("srm_epsilon", &S::epsilon, "s/kg",
                    "srm: regularization ε of λ_s = λ_{s-1} + (G u_s + α Φ_s)/ε; unset: S·h·a_max (S iterates, "
                    "a_max: largest eigenvalue of G M⁻¹ Gᵀ at the start), half the explicit stability limit"),
      member_option("srm_alpha", &S::alpha, "1/s", "srm: drift decay rate α of the same update"),
      member_option("srm_iterations", &S::iterations, "", "srm: number S of regularized iterates"),
      member_option("srm_min_stiffness", &S::min_stiffness, "",
                    "srm: smallest stiffness of the constraint direction the iterates still correct, relative to "
                    "the smallest eigenvalue of G M⁻¹ Gᵀ at the start, before `on_singular` applies (near a "
                    "singular configuration it tends to zero and the iterates do not converge); 0: not checked"),
      member_option("srm_max_work", &S::max_work, "",
                    "srm: largest work of the loop forces since the start (srm's own energy error: ideal loop "
                    "joints do none), relative to the largest T + |V - V(0)| so far (at least the weight x 1 m), "
                    "before `on_singular` applies; 0: not checked"),
  };
  return table;
}

}  // namespace loopdyn
