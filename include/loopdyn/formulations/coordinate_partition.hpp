// Generalized coordinate partitioning (paper 001 §2.2, eqs 11-14), shared by `gcp` and
// `nullspace` (001 §3 uses "the same" partition and analyses), which partition the whole model as
// one block, and by `embedding`, which partitions each aggregated body on its own (002 §4.3, §8:
// its rows act on its own speeds only, ConstraintBlock).
//
// Partition (eq 11), per block. G (the block's rows on its speeds) is factored by LU with full pivoting,
// P G Q = L U; its rank r counts pivots above 1e-10 · |largest pivot|. The first r pivot rows R
// are the independent constraint rows (rows outside R are redundant at this configuration), the
// first r pivot columns D the dependent speeds, the other nv − r columns I the independent speeds.
// The block G_RD (r x r) is factored by LU with partial pivoting at every analysis. After an
// accepted step, when its condition number (1-norm, Hager's estimate, linalg.hpp) at the closed
// state has grown by `partition_condition_growth` over its best at an accepted state since the
// choice, and the choice full pivoting makes now is at least twice better conditioned, the
// partition is chosen again there and the change is reported. Only between steps: a choice made
// inside a step changes the right-hand side between its stages. At the closed state: the new
// partition keeps it, (q, u) move by round-off. And early: an independent coordinate near a limit
// of its motion (where G_RD is singular) makes the dependent ones square-root functions of it,
// whose derivatives the stages of a fixed step sample ever worse (measured: with the growth at 100
// and changes inside steps, a triple-rocker four-bar lost 20 % of its energy in 5 s at rk4
// h = 1e-3, 1.4 J of it in the last step before one change; now 2.2e-6, lagrange-dense 6.7e-6).
// Near a configuration where every choice is ill conditioned (a change point) the partition is
// kept: another would not help, and would only turn the projections next to the point. Only a
// rank grown since the choice (rows outside R violated while Newton has closed R) makes the
// position analysis choose again at once, inside a step.
//
// Position analysis (eqs 12-13), Newton in speed space:
//     Φ_R(q) + G_RD Δu_D = 0,   q ← integrate_q(q, Δu)   (Δu zero outside D),
// from the given q (the integrated one: a predictor accurate to the integrator's order), until
// every kept row has |Φ| <= position_tolerance. Velocity analysis (eq 14; Φ_t ≠ 0 on a drive's row):
//     G_RD u_D = −G_RI u_I − Φ_t,R.
// Speeds of joints marked `independent: true` are kept out of D when the other columns reach the
// rank with a G_RD at most `partition_condition_growth` times worse conditioned than the choice on
// every column; otherwise (a marked joint near a limit of its motion) the mark is dropped for that
// choice and the reason reported. Every later choice considers the mark again.
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

#include "loopdyn/loops/constraints.hpp"
#include "loopdyn/formulations/formulation.hpp"
#include "loopdyn/core/linalg.hpp"

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
  /// naming the time and the loop when Newton does not converge. between_steps: (q, u) is an
  /// accepted state, after which the partition is chosen again if G_RD has grown ill conditioned.
  void analyse(double t, KinematicsData& kin, ConstraintData& data, Eigen::Ref<VecX> u, bool between_steps);

  const ConstraintBlock& block() const { return block_; }
  const std::vector<int>& speeds() const { return speeds_; }  ///< global speed of each column
  const MatX& jacobian() const { return G_; }                 ///< block rows x columns, at the last analysis
  int rank() const { return static_cast<int>(rows_.size()); }
  const std::vector<int>& rows() const { return rows_; }              ///< R
  const std::vector<int>& dependent() const { return dependent_; }    ///< D
  const std::vector<int>& independent() const { return independent_; }  ///< I
  int iterations() const { return iterations_; }  ///< Newton iterations of the last analysis

  /// At an accepted state, analysed last (G and the LU of G_RD at its closed state): the
  /// condition of G_RD is beyond partition_condition_growth times its best since the choice, and a
  /// choice on every column would be better conditioned by kBetterChoice (or of another rank).
  /// analyse(between_steps) then chooses again.
  bool worth_choosing_again();

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
  /// After choosing R, D of rank r on every column: D without the marked speeds instead, unless
  /// they do not reach rank r or give a G_RD partition_condition_growth times worse conditioned.
  void prefer_pins(double t, int r);
  void factor_dependent_block();  ///< LU of G_RD
  void close_positions(double t, KinematicsData& kin, ConstraintData& data);  ///< eqs 12-13, or throws
  void close_velocities(double t, Eigen::Ref<VecX> u);                         ///< eq 14
  /// Condition of the G_RD of a choice on every column at the current G (0 if its rank differs).
  double candidate_condition();
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
  MatX G_, G_allowed_, block_mat_, candidate_mat_;
  Eigen::FullPivLU<MatX> full_lu_;
  SquareLu block_lu_, candidate_lu_;
  std::vector<int> rows_, dependent_, independent_, candidate_rows_, candidate_dependent_;
  double chosen_condition_ = 1.0;  ///< best condition of G_RD since the partition was chosen
  bool chosen_ = false;
  int most_rank_ = 0;  ///< the largest rank a choice has found (a regular configuration's)
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
  /// positions and velocities at the result. between_steps: BlockPartition::analyse.
  void analyse(double t, Eigen::Ref<VecX> q, Eigen::Ref<VecX> u, bool between_steps);
  /// complete_state (between_steps false) and complete_accepted_state (true) of the partitioned
  /// methods: analyse (q, u) in place and keep the result, which the next prepare() reuses once if
  /// it is called with exactly this state (the Simulator's order). An accepted state that the last
  /// analysis started from (dopri5's last stage is at the accepted state) takes that analysis'
  /// result, unless a block is worth choosing again there: the analysis is deterministic, so
  /// analysing again would give it bit for bit.
  void complete(double t, Eigen::Ref<VecX> q, Eigen::Ref<VecX> u, bool between_steps);
  /// The kept rows changed (RowChoice::choose_again): the last analysis is not reused.
  void forget() { analysed_ = false; }
  /// Start of accelerations(): the analysis of (q, u) into state_q(), state_u(), unless complete()
  /// has just produced this very state. A bare call always pays for the analysis.
  void prepare(double t, const VecX& q, const VecX& u);
  const VecX& state_q() const { return q_; }
  const VecX& state_u() const { return u_; }

  const KinematicsData& kinematics() const { return kin_; }
  /// kinematics() while it holds the state complete() wrote (Formulation::completed_kinematics),
  /// else nullptr: a prepare() that analysed another state has moved it.
  const KinematicsData* completed_kinematics() const { return completed_ ? &kin_ : nullptr; }
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
  VecX q_, u_;          ///< state of the last analysis (its result)
  VecX in_q_, in_u_;    ///< the state it started from
  bool analysed_ = false;  ///< q_, u_, in_q_, in_u_ and the blocks are those of one analysis
  bool fresh_ = false;  ///< q_, u_ come from complete() and were not used yet
  bool completed_ = false;  ///< kin_ holds the state complete() wrote
};

}  // namespace loopdyn
