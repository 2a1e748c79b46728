// `gcp`: generalized coordinate partitioning (paper 001 §2.2, eqs 11-15). Every evaluation first
// completes the state: Newton position analysis of the dependent coordinates and the velocity
// analysis for the dependent speeds (CoordinatePartition), so positions and velocities satisfy the
// loop constraints to the position tolerance at every stage; then the (n+m) system of eq 15 —
// eq 10 without Baumgarte terms — is solved by the `lagrange-dense` solver. Only the independent
// coordinates are integrated (Formulation::complete_state). Cost: lagrange-dense's
// O(n³ + n²m + nm² + m³) plus, per Newton iteration, one tree kinematics, Φ, G and an O(m³) LU.
#pragma once

#include "loopdyn/formulations/coordinate_partition.hpp"
#include "loopdyn/formulations/lagrange_dense.hpp"

namespace loopdyn {

class Gcp final : public Formulation {
 public:
  Gcp(const Model& model, const FormulationSettings& settings);
  std::string_view name() const override { return "gcp"; }
  void complete_state(double t, Eigen::Ref<VecX> q, Eigen::Ref<VecX> u) override;
  void complete_accepted_state(double t, Eigen::Ref<VecX> q, Eigen::Ref<VecX> u) override;
  void accelerations(double t, const VecX& q, const VecX& u, Eigen::Ref<VecX> udot) override;
  std::optional<double> applied_power() const override { return dense_.applied_power(); }
  const VecX& multipliers() const override { return dense_.multipliers(); }
  const Constraints& constraints() const override { return dense_.constraints(); }
  const KinematicsData* completed_kinematics() const override { return partition_.completed_kinematics(); }
  const CoordinatePartition& partition() const { return partition_; }

 private:
  LagrangeDense dense_;
  KinematicsData kin_;  ///< of the analyses
  CoordinatePartition partition_;
};

}  // namespace loopdyn
