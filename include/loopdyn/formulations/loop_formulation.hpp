// Common part of the formulations that close loops with Lagrange multipliers in joint
// coordinates (lagrange-dense, lagrange-on; later gcp and nullspace): the constraint rows, their
// evaluation with Baumgarte terms, and a rank-revealing solve for the multipliers.
//
// Equations of motion (paper 001 eq 1 with speeds u): M u̇ + Gᵀλ = Q, with the acceleration
// constraint G u̇ = γ̄, γ̄ = γ − 2α Φ̇ − β² Φ (001 eq 9; α = β = 0 gives 001 eq 4).
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>

#include "loopdyn/constraints.hpp"
#include "loopdyn/formulation.hpp"

namespace loopdyn {

class LoopFormulation : public Formulation {
 public:
  const VecX& multipliers() const override { return lambda_; }
  const Constraints& constraints() const { return cons_; }
  /// Rank of the multiplier system at the last call (m when regular).
  int rank() const { return rank_; }
  /// Estimated 2-norm condition number of the multiplier system at the last call.
  double condition() const { return condition_; }

 protected:
  LoopFormulation(const Model& model, const FormulationSettings& settings);

  /// Φ, G (phi_, G_) and γ̄ (gamma_) at the state of `kin` (positions and velocities current).
  void evaluate_constraints(const KinematicsData& kin, const VecX& u);
  /// λ = A⁺ rhs for the symmetric positive semi-definite m x m matrix A. Regular case: Cholesky,
  /// condition estimated as (max Lᵢᵢ / min Lᵢᵢ)². When Cholesky fails or that estimate exceeds
  /// 1/rank_tolerance: symmetric eigendecomposition, eigenvalues below rank_tolerance · max
  /// count as zero, λ minimum-norm. Reports entering and leaving a singular configuration at t,
  /// naming the loops whose rows dominate the null space.
  void solve_multipliers(double t, const MatX& A, const VecX& rhs);

  const Model& model_;
  const FormulationSettings settings_;
  const Constraints cons_;
  ConstraintData cons_data_;
  VecX phi_;      ///< (m) position error Φ
  MatX G_;        ///< (m x nv) constraint Jacobian
  VecX gamma_;    ///< (m) γ̄
  VecX lambda_;   ///< (m) multipliers

 private:
  void solve_rank_deficient(const MatX& A, const VecX& rhs);
  std::string null_space_loops() const;

  Eigen::LLT<MatX> llt_;
  Eigen::SelfAdjointEigenSolver<MatX> eig_;
  int rank_ = 0;
  double condition_ = 1.0;
  bool singular_ = false;
};

}  // namespace loopdyn
