// LagrangeFormulation: the common part of the two methods that integrate M u̇ + Gᵀλ = Q with
// G u̇ = γ̄ and solve for the multipliers (lagrange-dense, lagrange-on): the constraint rows, their
// evaluation with Baumgarte terms, and a rank-revealing solve for the multipliers. gcp, nullspace,
// embedding and rcr hold the loops closed by position analysis instead, and derive from
// Formulation directly.
//
// Equations of motion (paper 001 eq 1 with speeds u): M u̇ + Gᵀλ = Q, with the acceleration
// constraint G u̇ = γ̄, γ̄ = γ − 2α Φ̇ − β² Φ (001 eq 9; α = β = 0 gives 001 eq 4).
#pragma once

#include "loopdyn/loops/constraints.hpp"
#include "loopdyn/formulations/formulation.hpp"
#include "loopdyn/core/linalg.hpp"
#include "loopdyn/loops/row_choice.hpp"

namespace loopdyn {

class LagrangeFormulation : public Formulation {
 public:
  const VecX& multipliers() const override { return lambda_; }
  const Constraints& constraints() const override { return cons_; }
  /// The rows of geometrically redundant loops chosen again at the accepted state (row_choice.hpp).
  void complete_accepted_state(double t, Eigen::Ref<VecX> q, Eigen::Ref<VecX> u) override;
  /// Its rows, for gcp, which solves with them and chooses them again itself.
  RowChoice& row_choice() { return rows_; }
  /// Rank of the multiplier system at the last call (m when regular).
  int rank() const { return solver_.rank(); }
  /// Estimated 2-norm condition number of the multiplier system at the last call.
  double condition() const { return solver_.condition(); }
  /// With on_singular = stop (the default) the Lagrange methods refuse runs that reach a change
  /// point: integrating G u̇ = γ̄ they hold no position information that tells the continuing
  /// branch from the others (on IFToMM A02 they leave the motion at its second crossing).
  std::string change_point_refusal() const override;
  /// The loops whose rows dominate the null space of the last singular multiplier system.
  std::string null_space_loops() const;

 protected:
  LagrangeFormulation(const Model& model, const FormulationSettings& settings);

  /// Φ, G (phi_, G_) and γ̄ (gamma_) at t and the state of `kin` (positions and velocities current).
  void evaluate_constraints(double t, const KinematicsData& kin, const VecX& u);
  /// λ = A⁺ rhs for the symmetric positive semi-definite m x m matrix A (PsdSolver: Cholesky, or
  /// minimum-norm by eigendecomposition when rank deficient to rank_tolerance). Reports entering
  /// and leaving a singular configuration at t, naming the loops whose rows dominate the null space.
  void solve_multipliers(double t, const MatX& A, const VecX& rhs);

  const FormulationSettings settings_;
  RowChoice rows_;
  const Constraints& cons_;  ///< rows_'s
  ConstraintData cons_data_;
  VecX phi_;      ///< (m) position error Φ
  VecX phi_t_;    ///< (m) Φ̇ = G u + Φ_t (Baumgarte)
  MatX G_;        ///< (m x nv) constraint Jacobian
  VecX gamma_;    ///< (m) γ̄
  VecX lambda_;   ///< (m) multipliers

 private:
  PsdSolver solver_;
  bool singular_ = false;
};

}  // namespace loopdyn
