// Generalized coordinate partitioning (paper 001 §2.2, eqs 11-14), shared by `gcp` and
// `nullspace` (001 §3 uses "the same" partition and analyses), which partition the whole model as
// one block, and by `embedding`, which partitions each aggregated body on its own (002 §4.3, §8:
// its rows act on its own speeds only, ConstraintBlock).
//
// Partition (eq 11), per block. G (the block's rows on its speeds) is factored by LU with full pivoting,
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
// Speeds of joints marked `independent: true` are kept out of D when the other columns reach the
// rank; when they do not, the pin is dropped for that choice and the reason reported.
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

using PartitionReporter = std::function<void(double t, std::string message)>;

/// The partition and analyses of one ConstraintBlock. Local indices: rows() index the block's
/// rows, dependent() and independent() its columns (speeds() gives their global speed).
class BlockPartition {
 public:
  BlockPartition(const Model& model, const Constraints& constraints, ConstraintBlock block,
                 const FormulationSettings& settings, PartitionReporter report);

  /// Position and velocity analysis in place (eqs 12-14): the block's coordinates in kin.q and its
  /// dependent speeds in u are overwritten; the positions and velocities of the block's bodies in
  /// kin are updated (the body the block hangs from must be current). Throws std::runtime_error
  /// naming the time and the loop when Newton does not converge.
  void analyse(double t, KinematicsData& kin, ConstraintData& data, Eigen::Ref<VecX> u);

  const ConstraintBlock& block() const { return block_; }
  const std::vector<int>& speeds() const { return speeds_; }  ///< global speed of each column
  const MatX& jacobian() const { return G_; }                 ///< block rows x columns, at the last analysis
  int rank() const { return static_cast<int>(rows_.size()); }
  const std::vector<int>& rows() const { return rows_; }              ///< R
  const std::vector<int>& dependent() const { return dependent_; }    ///< D
  const std::vector<int>& independent() const { return independent_; }  ///< I
  int iterations() const { return iterations_; }  ///< Newton iterations of the last analysis

  /// B of eq 18 (columns x (columns − r), resized if needed): B_I = 1, B_D = −G_RD⁻¹ G_RI.
  void partial_velocity_matrix(MatX& B);
  /// Particular solution x (columns) of G x = γ (γ: block rows): x_I = 0, G_RD x_D = γ_R.
  void particular_solution(const VecX& gamma, VecX& x);
  /// Multipliers from eq 24, G_RDᵀ λ_R = b_D (b: columns), reusing the LU of G_RD; rows outside R
  /// get 0 (lambda: block rows).
  void multipliers(const VecX& b, VecX& lambda);

 private:
  void choose(double t);
  /// Full-pivot LU of G on the columns `allowed` (nullptr = all); its rank, R and D.
  int pivot(const std::vector<char>* allowed, std::vector<int>& rows, std::vector<int>& dependent);
  double factor_dependent_block();  ///< LU of G_RD; its condition number estimate
  void factor_or_choose(double t);
  void newton_step(KinematicsData& kin);
  void update_positions_of_block(KinematicsData& kin) const;
  std::string speed_list(const std::vector<int>& columns) const;
  std::string loop_list() const;

  const Model& model_;
  const Constraints& cons_;
  const ConstraintBlock block_;
  const FormulationSettings settings_;
  PartitionReporter report_;
  std::vector<int> speeds_;
  std::vector<char> unpinned_;  ///< (columns) speed not marked `independent: true`
  bool has_pins_ = false;
  VecX phi_, phi_rows_, du_, rhs_, x_;
  MatX G_, G_allowed_, block_mat_;
  Eigen::FullPivLU<MatX> full_lu_;
  SquareLu block_lu_;
  std::vector<int> rows_, dependent_, independent_;
  double chosen_condition_ = 1.0;  ///< best condition of G_RD since the partition was chosen
  bool chosen_ = false;
  int iterations_ = 0;
};

/// Blocks analysed in tree order over one kinematics: the state (q, u) of a formulation whose
/// loops are closed by position and velocity analysis.
class CoordinatePartition {
 public:
  /// The whole model as one block (gcp, nullspace). `report` receives the partition changes.
  CoordinatePartition(const Model& model, const Constraints& constraints, KinematicsData& kin,
                      const FormulationSettings& settings, PartitionReporter report);
  /// The given blocks, which hold every body once, each block's bodies after the body it hangs
  /// from (embedding: one block per node of the aggregated tree).
  CoordinatePartition(const Model& model, const Constraints& constraints, KinematicsData& kin,
                      const std::vector<ConstraintBlock>& blocks, const FormulationSettings& settings,
                      PartitionReporter report);

  /// Analyses every block in order (positions, then velocities, of each); kinematics() then holds
  /// positions and velocities at the result.
  void analyse(double t, Eigen::Ref<VecX> q, Eigen::Ref<VecX> u);
  /// complete_state of the partitioned methods: analyse (q, u) in place and keep the result, which
  /// the next prepare() reuses once if it is called with exactly this state (the Simulator's order).
  void complete(double t, Eigen::Ref<VecX> q, Eigen::Ref<VecX> u);
  /// Start of accelerations(): the analysis of (q, u) into state_q(), state_u(), unless complete()
  /// has just produced this very state. A bare call always pays for the analysis.
  void prepare(double t, const VecX& q, const VecX& u);
  const VecX& state_q() const { return q_; }
  const VecX& state_u() const { return u_; }

  const KinematicsData& kinematics() const { return kin_; }
  ConstraintData& constraint_data() { return data_; }
  int blocks() const { return static_cast<int>(blocks_.size()); }
  BlockPartition& block(int k) { return blocks_[k]; }
  const BlockPartition& block(int k) const { return blocks_[k]; }

  // The one block of the whole-model partition (gcp, nullspace); indices are global.
  const MatX& jacobian() const { return blocks_.front().jacobian(); }
  int rank() const { return blocks_.front().rank(); }
  const std::vector<int>& rows() const { return blocks_.front().rows(); }
  const std::vector<int>& dependent() const { return blocks_.front().dependent(); }
  const std::vector<int>& independent() const { return blocks_.front().independent(); }
  int iterations() const { return blocks_.front().iterations(); }
  void partial_velocity_matrix(MatX& B) { blocks_.front().partial_velocity_matrix(B); }
  void multipliers(const VecX& b, VecX& lambda) { blocks_.front().multipliers(b, lambda); }

 private:
  KinematicsData& kin_;
  ConstraintData data_;
  std::vector<BlockPartition> blocks_;
  VecX q_, u_;          ///< state of the last analysis
  bool fresh_ = false;  ///< q_, u_ come from complete() and were not used yet
};

}  // namespace loopdyn
