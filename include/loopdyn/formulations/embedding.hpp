// `embedding`: constraint embedding (Jain 2012, paper 002 §2-9). The loops and coordinate
// couplings are folded into aggregated bodies (002 §4.2, aggregation.hpp); each aggregated body S
// keeps only its independent speeds β, and the articulated-body algorithm runs over the tree of
// single and aggregated bodies (002 §6-7).
//
// Per call, in tree order (CoordinatePartition with one block per node of the aggregated tree):
//  * a single body updates its position and velocity, as in `tree`;
//  * an aggregated body solves its own loops: dependent positions by Newton on its rows only
//    (001 eqs 12-13, warm-started from the given coordinates), dependent speeds from the
//    independent ones (001 eq 14), so Φ and Φ̇ of its rows hold to the position tolerance and to
//    round-off at every evaluation. Its partition is chosen by full-pivot LU of its own G and
//    chosen again, with a report naming the time and the loops, when the condition number of the
//    dependent block has grown by `partition_condition_growth` (002 §9, rank of X monitored).
// Then X_S = [I; −G_RD⁻¹ G_RI] (002 eq 60; the null space of the aggregated body's G, in its
// speeds) and x_S = [0; G_RD⁻¹ γ_R], the particular solution of G θ̈ = γ, which is Ẋ_S θ̇_RS of
// 002 eqs 30 and 61. Couplings give a constant X (002 eq 37) and x = 0 by the same code.
// With more than one column, X_S's columns are then made orthonormal (the same span, so the same
// θ̈; the β of such a body are then coordinates along that basis, not a subset of its speeds):
// D_S = X_Sᵀ P_S X_S (eq 51) is then not made worse by cond(X_S)², and with the projected inertia computed as
// C − W Wᵀ (aggregated_sweep.cpp, subtract_projected_inertia) a net of loops keeps its digits (square
// net 16 x 16: 5e-12 relative off lagrange-dense, against 2.8e-8 before both).
// aba_factor and aba_solve over the AggregatedTreeData (002 eqs 50-57) give the accelerations;
// single bodies take the `tree` code path inside the same sweeps.
//
// Multipliers (for the reaction output, on demand: multipliers_on_demand.hpp): with the accelerations known, the force transmitted
// across each joint of S is F = Σ (P a + z) of the bodies below it within S (articulated
// inertias and bias forces include the descendants); ρ = τ − Sᵀ F = (Q − M u̇) on S's speeds, and
// G_RDᵀ λ_R = ρ_D (001 eq 24) with the LU of the analysis. Rows redundant at the current
// configuration get 0, as in `nullspace`.
//
// Cost: O(Σ over nodes of the node's size³), linear in the number of bodies when the aggregated
// bodies are bounded; no allocation per call once the partitions are chosen.
#pragma once

#include "loopdyn/loops/aggregation.hpp"
#include "loopdyn/formulations/coordinate_partition.hpp"
#include "loopdyn/formulations/multipliers_on_demand.hpp"
#include "loopdyn/loops/row_choice.hpp"
#include "loopdyn/core/tree_dynamics.hpp"

namespace loopdyn {

class Embedding final : public Formulation {
 public:
  Embedding(const Model& model, const FormulationSettings& settings);
  std::string_view name() const override { return "embedding"; }
  void complete_state(double t, Eigen::Ref<VecX> q, Eigen::Ref<VecX> u) override;
  void complete_accepted_state(double t, Eigen::Ref<VecX> q, Eigen::Ref<VecX> u) override;
  void accelerations(double t, const VecX& q, const VecX& u, Eigen::Ref<VecX> udot) override;
  std::optional<double> applied_power() const override { return forces_.power; }
  const VecX& multipliers() const override;
  const Constraints& constraints() const override { return cons_; }
  const AggregatedTree& aggregation() const { return aggregation_; }
  const KinematicsData* completed_kinematics() const override { return partition_.completed_kinematics(); }
  const CoordinatePartition& partition() const { return partition_; }

 private:
  struct Embedded {
    int node = -1;   ///< index in tree_.nodes
    int block = -1;  ///< index in partition_ blocks
    VecX gamma, rho, lambda;
    std::vector<Vec6> force;  ///< (bodies) transmitted joint forces
  };
  void embed(double t);
  void recover_multipliers();
  void settle_multipliers();

  RowChoice rows_;           ///< the rows solved with (row_choice.hpp)
  const Constraints& cons_;  ///< rows_'s
  const AggregatedTree& aggregation_;
  AbaData aba_;
  CoordinatePartition partition_;
  AggregatedTreeData tree_;
  std::vector<Embedded> embedded_;
  ForceData forces_;
  VecX lambda_;
  MultipliersOnDemand on_demand_;
};

}  // namespace loopdyn
