// `nullspace`: the partial velocity matrix method (paper 001 §3, eqs 16-24). The state is
// completed by the position and velocity analyses of GCP (CoordinatePartition, eqs 11-14); the
// partial velocity matrix B (eq 18, null space of G) projects the equations of motion,
// Bᵀ(M u̇ − Q) = 0 (eq 20), and with the acceleration constraint of the independent rows R gives
// the n x n system of eq 21,
//     [Bᵀ M; G_R] u̇ = [Bᵀ Q; γ_R],
// solved by LU with partial pivoting. The multipliers follow from eq 22-24, G_RDᵀ λ_R = (Q − M u̇)_D,
// with the LU of G_RD that the velocity analysis already made (no new factorization); rows that
// are redundant at the current configuration get λ = 0. M by CRBA, Q = τ − C + Jᵀ f_ext by RNEA.
// Cost O(n² (n − r)) for Bᵀ M, O(n³) for the LU, plus the analyses.
#pragma once

#include <Eigen/LU>

#include "loopdyn/formulations/coordinate_partition.hpp"
#include "loopdyn/loops/row_choice.hpp"
#include "loopdyn/core/tree_dynamics.hpp"

namespace loopdyn {

class Nullspace final : public Formulation {
 public:
  Nullspace(const Model& model, const FormulationSettings& settings);
  std::string_view name() const override { return "nullspace"; }
  void complete_state(double t, Eigen::Ref<VecX> q, Eigen::Ref<VecX> u) override;
  void complete_accepted_state(double t, Eigen::Ref<VecX> q, Eigen::Ref<VecX> u) override;
  void accelerations(double t, const VecX& q, const VecX& u, Eigen::Ref<VecX> udot) override;
  std::optional<double> applied_power() const override { return forces_.power; }
  const VecX& multipliers() const override { return lambda_; }
  const Constraints& constraints() const override { return cons_; }
  const KinematicsData* completed_kinematics() const override { return partition_.completed_kinematics(); }
  const CoordinatePartition& partition() const { return partition_; }

 private:
  RowChoice rows_;           ///< the rows solved with (row_choice.hpp)
  const Constraints& cons_;  ///< rows_'s
  KinematicsData kin_;
  CoordinatePartition partition_;
  ForceData forces_;
  RneaData rnea_;
  CrbaData crba_;
  MatX M_, B_, A_;   ///< (nv x nv), (nv x nv − r), (nv x nv)
  VecX Q_, gamma_, rhs_, b_, lambda_, zero_;
  Eigen::PartialPivLU<MatX> lu_;
};

}  // namespace loopdyn
