#include "loopdyn/formulations/coordinate_partition.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "loopdyn/loops/assembly.hpp"
#include "loops/constraint_rows.hpp"

namespace loopdyn {

namespace {

// A choice of the dependent speeds is changed for one on every column only when that one's G_RD
// is at least this much better conditioned: near a configuration where every choice is ill
// conditioned (a change point) another one would not help, and each change makes the steps next
// to the point project along other directions (on IFToMM A02 with N = 40, changes at every
// growth of 4 took gcp, nullspace and embedding 1.2e-6 to 2.9e-6 m off the exact motion; with
// this test they are 9e-8 to 4.7e-7 m off, with one change each).
constexpr double kBetterChoice = 2.0;

// The first r entries of a permutation's order, ascending, into out (no allocation once sized).
void leading(const Eigen::VectorXi& order, int r, std::vector<int>& out) {
  out.assign(order.data(), order.data() + r);
  std::sort(out.begin(), out.end());
}

}  // namespace

BlockPartition::BlockPartition(const Model& model, const Constraints& constraints, ConstraintBlock block,
                               const FormulationSettings& settings, PartitionReporter report)
    : model_(model), cons_(constraints), block_(std::move(block)), settings_(settings), report_(std::move(report)),
      speeds_(block_.speeds(model)), phi_(VecX::Zero(block_.rows.size())), du_(VecX::Zero(block_.columns)),
      G_(MatX::Zero(block_.rows.size(), block_.columns)), G_allowed_(G_),
      full_lu_(block_.rows.size(), block_.columns) {
  for (int k : speeds_) {
    const bool pinned = model.joints[model.v_body[k]].independent;
    unpinned_.push_back(!pinned);
    has_pins_ = has_pins_ || pinned;
  }
  // Until the first analysis chooses (and always without rows): every speed independent.
  for (int k = 0; k < block_.columns; ++k) independent_.push_back(k);
}

int BlockPartition::pivot(const std::vector<char>* allowed, std::vector<int>& rows, std::vector<int>& dependent) {
  // Eq 11: full pivoting on G; P G Q = L U, row k of P G is G's row P⁻¹(k), column k of G Q is
  // G's column Q(k). Columns outside `allowed` are zeroed, so no pivot falls on them.
  if (allowed) {
    G_allowed_ = G_;
    for (int k = 0; k < block_.columns; ++k)
      if (!(*allowed)[k]) G_allowed_.col(k).setZero();
  }
  full_lu_.setThreshold(1e-10);
  full_lu_.compute(allowed ? G_allowed_ : G_);
  const int r = static_cast<int>(full_lu_.rank());
  const Eigen::PermutationMatrix<Eigen::Dynamic> row_order = full_lu_.permutationP().inverse();
  leading(row_order.indices(), r, rows);
  leading(full_lu_.permutationQ().indices(), r, dependent);
  return r;
}

void BlockPartition::choose(double t) {
  const std::vector<int> old_independent = independent_;
  const int r = pivot(nullptr, rows_, dependent_);
  most_rank_ = std::max(most_rank_, r);
  phi_rows_.resize(r);
  rhs_.resize(r);
  x_.resize(r);
  block_mat_.resize(r, r);
  block_lu_.resize(r);
  candidate_mat_.resize(r, r);
  candidate_lu_.resize(r);
  factor_dependent_block();
  chosen_condition_ = block_lu_.condition();
  if (has_pins_) prefer_pins(t, r);
  independent_.clear();
  for (int k = 0, d = 0; k < block_.columns; ++k) {
    if (d < r && dependent_[d] == k) ++d;
    else independent_.push_back(k);
  }
  const bool first = !chosen_;
  chosen_ = true;
  if (!first && old_independent != independent_ && report_) {
    std::ostringstream s;
    s << "independent speeds chosen again (" << loop_list() << "): " << speed_list(independent_) << " (were "
      << speed_list(old_independent) << "), constraint rank " << r << " of " << block_.rows.size()
      << ", dependent block condition number " << chosen_condition_;
    report_(t, s.str());
  }
}

void BlockPartition::prefer_pins(double t, int r) {
  std::vector<int> rows, dependent;
  if (pivot(&unpinned_, rows, dependent) != r) {
    if (report_)
      report_(t, "the speeds of joints marked independent cannot all stay independent here (" + loop_list() +
                     "): one of them is taken as dependent");
    return;
  }
  // A marked joint near a limit of its motion leaves the other columns a G_RD as ill conditioned
  // as the re-choice rule would not keep: the mark yields there (it is a preference). Kept, the
  // marked choice is held to the free one's condition, so that it yields before it degrades by
  // more than the growth factor.
  rows.swap(rows_);
  dependent.swap(dependent_);
  factor_dependent_block();
  const double pinned = block_lu_.condition();
  if (pinned <= settings_.partition_condition_growth * chosen_condition_) {
    chosen_condition_ = std::min(chosen_condition_, pinned);
    return;
  }
  rows.swap(rows_);
  dependent.swap(dependent_);
  factor_dependent_block();
  if (report_) {
    std::ostringstream s;
    s << "the speeds of joints marked independent are taken as dependent here (" << loop_list()
      << "): with them independent the dependent block's condition number would be " << pinned << ", "
      << pinned / chosen_condition_ << " times that of the free choice (a marked joint near a limit of its motion)";
    report_(t, s.str());
  }
}

void BlockPartition::factor_dependent_block() {
  const int r = rank();
  if (r == 0) return;
  for (int j = 0; j < r; ++j)
    for (int i = 0; i < r; ++i) block_mat_(i, j) = G_(rows_[i], dependent_[j]);
  block_lu_.compute(block_mat_);
}

void BlockPartition::update_positions_of_block(KinematicsData& kin) const {
  for (int b : block_.bodies) update_position(model_, kin, kin.q, b);
}

void BlockPartition::newton_step(KinematicsData& kin) {
  // Eqs 12-13: G_RD Δu_D = −Φ_R, then q ← integrate_q(q, Δu) on the block's joints.
  for (int i = 0; i < rank(); ++i) phi_rows_(i) = -phi_(rows_[i]);
  block_lu_.solve(phi_rows_, x_);
  du_.setZero();
  for (int j = 0; j < rank(); ++j) du_(dependent_[j]) = x_(j);
  for (std::size_t k = 0; k < block_.bodies.size(); ++k)
    integrate_joint_q(model_, kin.q, block_.bodies[k], du_.data() + block_.first_column[k]);
  update_positions_of_block(kin);
}

void BlockPartition::analyse(double t, KinematicsData& kin, ConstraintData& data, Eigen::Ref<VecX> u,
                             bool between_steps) {
  iterations_ = 0;
  update_positions_of_block(kin);
  if (!block_.rows.empty()) {
    close_positions(t, kin, data);
    close_velocities(t, u);
    // 001 §2.2's re-selection, between steps only, so that every step integrates one right-hand
    // side, and at the closed state, which the new partition keeps: (q, u) move by round-off.
    if (between_steps && worth_choosing_again()) {
      choose(t);
      close_velocities(t, u);
    }
  }
  for (int b : block_.bodies) update_velocity(model_, kin, kin.q, u, b);
}

void BlockPartition::close_positions(double t, KinematicsData& kin, ConstraintData& data) {
  const double tol = settings_.position_tolerance;
  bool rechosen_for_rank = false;
  for (;;) {
    block_position_jacobian(model_, cons_, block_, kin, t, data, phi_, G_);
    if (chosen_) factor_dependent_block();
    else choose(t);
    if (inf_norm(phi_) <= tol) break;
    double dependent_error = 0.0;
    for (int i = 0; i < rank(); ++i) dependent_error = std::max(dependent_error, std::abs(phi_(rows_[i])));
    if (dependent_error <= tol) {
      // Rows outside R are not satisfied: the rank has grown since R was chosen. Choose again once.
      if (rechosen_for_rank) break;
      choose(t);
      rechosen_for_rank = true;
      continue;
    }
    if (iterations_ == settings_.max_position_iterations) break;
    newton_step(kin);
    ++iterations_;
  }
  if (inf_norm(phi_) <= tol) {
    // A choice made where the loops had lost rank (a singular configuration, or the state of a
    // call that was refused) enforces fewer rows than the loops have once the rank is back: Φ
    // closes, but the rows outside R no longer bind the speeds and accelerations (a four-bar's
    // accelerations were off, without a word, at its start state after a call at q = 0 had
    // failed). Chosen again while the rank is below the most a choice found.
    if (rank() < most_rank_) choose(t);
    return;
  }
  Eigen::Index worst = 0;
  const double err = phi_.cwiseAbs().maxCoeff(&worst);
  std::ostringstream s;
  s << "position analysis did not converge at t = " << t << " after " << iterations_ << " Newton iterations: "
    << row_owner(model_, cons_.kept()[block_.rows[worst]]) << " residual " << err << " (tolerance " << tol
    << "); the loops cannot close for these independent coordinates";
  throw std::runtime_error(s.str());
}

void BlockPartition::close_velocities(double t, Eigen::Ref<VecX> u) {
  // Eq 14: G_RD u_D = −G_RI u_I − Φ_t,R (Φ_t: drives), with G and the LU of G_RD at the converged q.
  for (int i = 0; i < rank(); ++i) rhs_(i) = -detail::time_rate_row(model_, cons_.kept()[block_.rows[rows_[i]]], t);
  for (int k : independent_)
    for (int i = 0; i < rank(); ++i) rhs_(i) -= G_(rows_[i], k) * u(speeds_[k]);
  block_lu_.solve(rhs_, x_);
  for (int j = 0; j < rank(); ++j) u(speeds_[dependent_[j]]) = x_(j);
}

bool BlockPartition::worth_choosing_again() {
  // The reference is the best condition seen at an accepted state since the choice, so a block
  // that recovers and degrades again is compared with its own best.
  const double condition = block_lu_.condition();
  chosen_condition_ = std::min(chosen_condition_, condition);
  if (!(condition > settings_.partition_condition_growth * chosen_condition_)) return false;
  return kBetterChoice * candidate_condition() < condition;
}

double BlockPartition::candidate_condition() {
  if (pivot(nullptr, candidate_rows_, candidate_dependent_) != rank()) return 0.0;  // the rank changed
  for (int j = 0; j < rank(); ++j)
    for (int i = 0; i < rank(); ++i) candidate_mat_(i, j) = G_(candidate_rows_[i], candidate_dependent_[j]);
  candidate_lu_.compute(candidate_mat_);
  return candidate_lu_.condition();
}

void BlockPartition::partial_velocity_matrix(MatX& B) {
  const int r = rank(), ni = block_.columns - r;
  if (B.rows() != block_.columns || B.cols() != ni) B.resize(block_.columns, ni);
  B.setZero();
  for (int k = 0; k < ni; ++k) {
    B(independent_[k], k) = 1.0;
    if (r == 0) continue;
    // B_D = −G_RD⁻¹ G_RI (eq 18), one column at a time (a matrix right-hand side allocates
    // blocking space in Eigen's triangular solve at some sizes).
    for (int i = 0; i < r; ++i) rhs_(i) = -G_(rows_[i], independent_[k]);
    block_lu_.solve(rhs_, x_);
    for (int j = 0; j < r; ++j) B(dependent_[j], k) = x_(j);
  }
}

void BlockPartition::particular_solution(const VecX& gamma, VecX& x) {
  x.setZero(block_.columns);
  const int r = rank();
  if (r == 0) return;
  for (int i = 0; i < r; ++i) rhs_(i) = gamma(rows_[i]);
  block_lu_.solve(rhs_, x_);
  for (int j = 0; j < r; ++j) x(dependent_[j]) = x_(j);
}

void BlockPartition::multipliers(const VecX& b, VecX& lambda) {
  lambda.setZero(block_.rows.size());
  const int r = rank();
  if (r == 0) return;
  for (int j = 0; j < r; ++j) rhs_(j) = b(dependent_[j]);
  block_lu_.solve_transposed(rhs_, x_);  // eq 24: G_RDᵀ λ_R = b_D
  for (int i = 0; i < r; ++i) lambda(rows_[i]) = x_(i);
}

std::string BlockPartition::speed_list(const std::vector<int>& columns) const {
  std::vector<int> speeds;
  for (int k : columns) speeds.push_back(speeds_[k]);
  return model_.speed_names(speeds);
}

std::string BlockPartition::loop_list() const {
  std::vector<std::string> names;
  for (int r : block_.rows) {
    const ConstraintRow& row = cons_.kept()[r];
    const std::string& name =
        row.kind == ConstraintRow::Kind::coupling ? model_.couplings[row.loop].name : model_.loop_joints[row.loop].name;
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return "loops " + quoted_list(names);
}

CoordinatePartition::CoordinatePartition(const Model& model, const Constraints& constraints, KinematicsData& kin,
                                         const FormulationSettings& settings, PartitionReporter report)
    : CoordinatePartition(model, constraints, kin, {ConstraintBlock::whole(model, constraints)}, settings,
                          std::move(report)) {}

CoordinatePartition::CoordinatePartition(const Model& model, const Constraints& constraints, KinematicsData& kin,
                                         const std::vector<ConstraintBlock>& blocks,
                                         const FormulationSettings& settings, PartitionReporter report)
    : kin_(kin), data_(model), q_(model.neutral_q()), u_(VecX::Zero(model.nv)) {
  blocks_.reserve(blocks.size());
  for (const ConstraintBlock& b : blocks) blocks_.emplace_back(model, constraints, b, settings, report);
}

void CoordinatePartition::analyse(double t, Eigen::Ref<VecX> q, Eigen::Ref<VecX> u, bool between_steps) {
  analysed_ = false;  // until it has finished
  in_q_ = q;
  in_u_ = u;
  kin_.q = q;
  for (BlockPartition& b : blocks_) b.analyse(t, kin_, data_, u, between_steps);
  q = kin_.q;
}

void CoordinatePartition::complete(double t, Eigen::Ref<VecX> q, Eigen::Ref<VecX> u, bool between_steps) {
  const bool reused = between_steps && analysed_ && q == in_q_ && u == in_u_ &&
                     std::none_of(blocks_.begin(), blocks_.end(), [](BlockPartition& b) {
                       return !b.block().rows.empty() && b.worth_choosing_again();
                     });
  if (reused) {
    q = q_;
    u = u_;
  } else {
    analyse(t, q, u, between_steps);
    q_ = q;
    u_ = u;
  }
  analysed_ = true;
  fresh_ = true;
  completed_ = true;
}

void CoordinatePartition::prepare(double t, const VecX& q, const VecX& u) {
  const bool reuse = fresh_ && q == q_ && u == u_;
  fresh_ = false;
  if (reuse) return;
  completed_ = false;
  q_ = q;
  u_ = u;
  analyse(t, q_, u_, false);
  analysed_ = true;
}

}  // namespace loopdyn
