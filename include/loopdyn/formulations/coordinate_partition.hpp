// Generalized coordinate partitioning (paper 001 §2.2, eqs 11-14), shared by `gcp` and
// `nullspace` (001 §3 uses "the same" partition and analyses).
//
// Partition (eq 11). G (m x nv, kept rows) is factored by LU with full pivoting,
// P G Q = L U; its rank r counts pivots above 1e-10 · |largest pivot|. The first r pivot rows R
// are the independent constraint rows (rows outside R are redundant at this configuration), the
// first r pivot columns D the dependent speeds, the other nv − r columns I the independent speeds.
// The block G_RD (r x r) is factored by LU with partial pivoting at every analysis; when its
// condition number (1-norm, Hager's estimate, linalg.hpp) has grown by `partition_condition_growth` since the
// partition was chosen, the partition is chosen again at the current configuration and the change
// is reported. Near a configuration where every choice is ill conditioned (a dead centre) this
// happens at most once per such growth factor, never at every call.
//
// Position analysis (eqs 12-13), Newton in speed space:
//     Φ_R(q) + G_RD Δu_D = 0,   q ← integrate_q(q, Δu)   (Δu zero outside D),
// from the given q (the integrated one: a predictor accurate to the integrator's order), until
// every kept row has |Φ| <= position_tolerance. Velocity analysis (eq 14, scleronomic: Φ_t = 0):
//     G_RD u_D = −G_RI u_I.
// Speeds rather than coordinates are partitioned so that joints with quaternions (nq ≠ nv) fit:
// an independent speed of a spherical joint keeps its direction of rotation fixed while the
// dependent ones are corrected along theirs.
//
// Partial velocity matrix (eq 18): B (nv x (nv − r)) with B_I = identity, B_D = −G_RD⁻¹ G_RI,
// computed with the LU of the velocity analysis by nv − r back-substitutions (001 §3 after eq 19).
#pragma once

#include <Eigen/LU>
#include <functional>
#include <string>
#include <vector>

#include "loopdyn/constraints.hpp"
#include "loopdyn/formulation.hpp"
#include "loopdyn/linalg.hpp"

namespace loopdyn {

class CoordinatePartition {
 public:
  using Reporter = std::function<void(double t, std::string message)>;
  /// `report` receives the partition changes (time, message).
  CoordinatePartition(const Model& model, const Constraints& constraints, const FormulationSettings& settings,
                      Reporter report);

  /// Position and velocity analysis in place (eqs 12-14). Afterwards kinematics() holds positions
  /// and velocities at the result and jacobian() its G with G_RD factored. Throws
  /// std::runtime_error naming the time and the loop when Newton does not converge.
  void analyse(double t, Eigen::Ref<VecX> q, Eigen::Ref<VecX> u);

  /// complete_state of gcp and nullspace: analyse (q, u) in place and keep the result, which the
  /// next prepare() reuses once if it is called with exactly this state (the Simulator's order).
  void complete(double t, Eigen::Ref<VecX> q, Eigen::Ref<VecX> u);
  /// Start of accelerations(): the analysis of (q, u) into state_q(), state_u(), unless complete()
  /// has just produced this very state. A bare call always pays for the analysis.
  void prepare(double t, const VecX& q, const VecX& u);
  const VecX& state_q() const { return q_; }
  const VecX& state_u() const { return u_; }

  const KinematicsData& kinematics() const { return kin_; }
  ConstraintData& constraint_data() { return data_; }
  const MatX& jacobian() const { return G_; }
  int rank() const { return static_cast<int>(rows_.size()); }
  const std::vector<int>& rows() const { return rows_; }              ///< R
  const std::vector<int>& dependent() const { return dependent_; }    ///< D
  const std::vector<int>& independent() const { return independent_; }  ///< I
  /// Newton iterations of the last analysis.
  int iterations() const { return iterations_; }

  /// B of eq 18 (resized to nv x (nv − r) if needed), from the last analysis.
  void partial_velocity_matrix(MatX& B);
  /// Multipliers from eq 24, G_RDᵀ λ_R = b_D (b = Q − M u̇, eq 22), reusing the LU of G_RD;
  /// rows outside R get 0 (lambda sized m).
  void multipliers(const VecX& b, VecX& lambda);

 private:
  void choose(double t);
  /// LU of G_RD; returns its condition number estimate.
  double factor_dependent_block();
  void factor_or_choose(double t);
  std::string speed_list(const std::vector<int>& speeds) const;

  const Model& model_;
  const Constraints& cons_;
  const FormulationSettings settings_;
  Reporter report_;
  KinematicsData kin_;
  ConstraintData data_;
  VecX q_, u_;  ///< state of the last analysis
  bool fresh_ = false;  ///< q_, u_ come from complete() and were not used yet
  VecX phi_, phi_rows_, du_, rhs_, x_;
  MatX G_, block_, rhs_block_, sol_block_;
  Eigen::FullPivLU<MatX> full_lu_;
  SquareLu block_lu_;
  std::vector<int> rows_, dependent_, independent_;
  double chosen_condition_ = 1.0;  ///< condition of G_RD when the partition was chosen
  bool chosen_ = false;
  int iterations_ = 0;
};

}  // namespace loopdyn
