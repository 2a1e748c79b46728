// Mass-orthogonal projection of a state (q, u) onto the constraint manifold Φ(q) = 0, G(q) u = 0,
// for any formulation (paper 004 §3.2-3.3 and its Appendix eqs 87-95, 101-106; Bayo & Ledesma,
// Nonlinear Dyn. 9 (1996) 113-130), and the consistency check of an initial state.
//
// Metric: the kinetic-energy metric M(q) (CRBA). A correction of the speeds Δu costs ½ ΔuᵀMΔu, so
// the projection removes the constraint violation with the least change of kinetic energy and
// moves heavy bodies least; the result does not depend on the units or the scaling of the joint
// coordinates (an unweighted projection would trade metres for radians).
//
// Positions (004 eqs 87-95, with M held constant over one projection and the top right-hand side
// of eq 95 taken at the current iterate, i.e. each iteration is the M-smallest step to the
// linearized manifold): with M = LLᵀ,
//     Δu = −M⁻¹Gᵀ (G M⁻¹Gᵀ)⁺ Φ,     q ← integrate_q(q, Δu),
// repeated (G and Φ at each iterate, Newton: quadratic convergence) until ‖Φ‖∞ ≤ position
// tolerance. The end point differs from the exact minimizer of eq 87 by O(‖Φ‖²).
// Velocities (004 eq 106 with Φ_t = 0, solved for the correction): at the projected q,
//     u ← u − M⁻¹Gᵀ (G M⁻¹Gᵀ)⁺ G u,
// an M-orthogonal projection onto ker G: the removed part is M⁻¹Gᵀ·μ and the kinetic energy
// decreases by ½ ΔuᵀMΔu (never increases).
// (G M⁻¹Gᵀ)⁺: PsdSolver (linalg.hpp) on the m x m matrix A = YᵀY, Y = L⁻¹Gᵀ: Cholesky, or at
// singular configurations and for rows redundant at run time the minimum-norm solution with
// eigenvalues below rank_tolerance · λ_max taken as zero (no NaN).
#pragma once

#include <Eigen/Cholesky>

#include "loopdyn/loops/constraints.hpp"
#include "loopdyn/core/linalg.hpp"
#include "loopdyn/core/tree_dynamics.hpp"

namespace loopdyn {

struct ProjectionSettings {
  /// Positions are projected while ‖Φ‖∞ > position_tolerance (metres for `along` rows, cosines for
  /// `dot` rows; see constraints.hpp).
  double position_tolerance = 1e-10;
  /// Velocities are projected while ‖G u‖∞ > velocity_tolerance · max(1, max|G| ‖u‖∞) (the scaling
  /// of AssemblySettings: G u is a difference of terms of size max|G| ‖u‖∞).
  double velocity_tolerance = 1e-10;
  int max_iterations = 10;         ///< Newton iterations on the positions per projection
  double rank_tolerance = 1e-10;   ///< relative eigenvalue cut-off of G M⁻¹Gᵀ (as FormulationSettings)
};

/// What the projections of a run did.
struct ProjectionStats {
  long calls = 0;                 ///< states offered to project()
  long position_projections = 0;  ///< calls that moved q (‖Φ‖∞ was above the tolerance)
  long position_iterations = 0;   ///< Newton iterations, all calls
  long velocity_projections = 0;  ///< calls that moved u
  double max_position_correction = 0.0;  ///< largest ‖Σ Δu‖∞ of one call (speed-space units: rad, m)
  double max_velocity_correction = 0.0;  ///< largest ‖Δu‖∞ of one velocity projection
  double max_position_residual = 0.0;    ///< largest ‖Φ‖∞ left after a projection
  double max_velocity_residual = 0.0;    ///< largest ‖G u‖∞ left after a projection
};

/// Mass-orthogonal projector (see the file comment), with every workspace sized at construction.
class Projector {
 public:
  /// Keeps a reference to `constraints` (usually model.loops().constraints).
  Projector(const Model& model, const Constraints& constraints, const ProjectionSettings& settings = {});
  Projector(const Model&, Constraints&&, const ProjectionSettings& = {}) = delete;

  /// Projects q, then u at the projected q. Throws std::runtime_error naming the time, the loop
  /// joint (or coupling) of the largest residual and the residual when the positions do not reach
  /// the tolerance in max_iterations.
  void project(double t, Eigen::Ref<VecX> q, Eigen::Ref<VecX> u);
  /// Positions only (see project()). Returns the Newton iterations taken.
  int project_positions(double t, Eigen::Ref<VecX> q);
  /// Positions of every body at the q the last project_positions() returned (its last sweep; only
  /// positions: velocities are not swept).
  const KinematicsData& position_kinematics() const { return kin_; }
  /// Velocities only, at q (q is not changed).
  void project_velocities(double t, const Eigen::Ref<const VecX>& q, Eigen::Ref<VecX> u);

  const ProjectionSettings& settings() const { return settings_; }
  const ProjectionStats& stats() const { return stats_; }
  /// Counts on from another projector's stats: a run continued by another method (Simulator::resume).
  void carry_stats(const ProjectionStats& stats) { stats_ = stats; }

 private:
  /// M = LLᵀ at the positions current in kin_.
  void factor_mass();
  /// dx_ = −M⁻¹Gᵀ (G M⁻¹Gᵀ)⁺ r with M factored and G_ current.
  void correction(const VecX& r);
  double velocity_tolerance(const Eigen::Ref<const VecX>& u) const;

  const Model& model_;
  const Constraints& constraints_;
  const ProjectionSettings settings_;
  ProjectionStats stats_;
  KinematicsData kin_;
  ConstraintData cons_data_;
  CrbaData crba_;
  MatX M_;                       ///< (nv x nv) mass matrix
  Eigen::LLT<MatX> mass_llt_;    ///< M = LLᵀ
  MatX G_;                       ///< (m x nv)
  MatX Y_;                       ///< (nv x m) L⁻¹Gᵀ
  MatX A_;                       ///< (m x m) G M⁻¹Gᵀ = YᵀY
  PsdSolver solver_;             ///< of A
  VecX phi_, phi_t_, r_, mu_;    ///< (m) Φ, Φ_t (drives), G u + Φ_t, (G M⁻¹Gᵀ)⁺ r
  VecX dx_, total_;              ///< (nv) one correction Δu, the sum of a position projection's Δu
};

/// Default tolerance of check_consistent: initial states given to 9 digits (as in the papers'
/// tables) close to ~1e-9.
inline constexpr double consistency_tolerance = 1e-8;

/// Throws std::runtime_error when (q, u) violates the loop constraints: ‖Φ‖∞ > tolerance (metres,
/// cosines) or ‖G u + Φ_t‖∞ > tolerance · max(1, max|G| ‖u‖∞), at t = 0 (drives: Φ_t). The message names the loop joint (or
/// coupling) and row of the largest residual, its value, and the fix (assemble the state:
/// loopdyn::assemble, `loopdyn assemble`, or `loopdyn simulate` without --no-assemble).
void check_consistent(const Model& model, const Constraints& constraints, const VecX& q, const VecX& u,
                      double tolerance = consistency_tolerance);

}  // namespace loopdyn
