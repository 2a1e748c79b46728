#include "loopdyn/formulations/coordinate_partition.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "loopdyn/assembly.hpp"

namespace loopdyn {

namespace {


// The first r entries of a permutation's order, ascending.
std::vector<int> leading(const Eigen::VectorXi& order, int r) {
  std::vector<int> out(order.data(), order.data() + r);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

CoordinatePartition::CoordinatePartition(const Model& model, const Constraints& constraints,
                                         const FormulationSettings& settings, Reporter report)
    : model_(model), cons_(constraints), settings_(settings), report_(std::move(report)), kin_(model),
      data_(model, constraints), q_(model.neutral_q()), u_(VecX::Zero(model.nv)), phi_(VecX::Zero(constraints.rows())), du_(VecX::Zero(model.nv)),
      G_(MatX::Zero(constraints.rows(), model.nv)), full_lu_(constraints.rows(), model.nv) {
  // Until the first analysis chooses (and always without constraints): every speed independent.
  for (int k = 0; k < model.nv; ++k) independent_.push_back(k);
  rhs_block_.resize(0, model.nv);
  sol_block_.resize(0, model.nv);
}

void CoordinatePartition::choose(double t) {
  // Eq 11: full pivoting on G; P G Q = L U, row k of P G is G's row P⁻¹(k), column k of G Q is
  // G's column Q(k).
  full_lu_.setThreshold(1e-10);
  full_lu_.compute(G_);
  const int r = static_cast<int>(full_lu_.rank());
  const std::vector<int> old_independent = independent_;
  const Eigen::PermutationMatrix<Eigen::Dynamic> row_order = full_lu_.permutationP().inverse();
  rows_ = leading(row_order.indices(), r);
  dependent_ = leading(full_lu_.permutationQ().indices(), r);
  independent_.clear();
  for (int k = 0, d = 0; k < model_.nv; ++k) {
    if (d < r && dependent_[d] == k) ++d;
    else independent_.push_back(k);
  }
  const int ni = model_.nv - r;
  phi_rows_.resize(r);
  rhs_.resize(r);
  x_.resize(r);
  block_.resize(r, r);
  rhs_block_.resize(r, ni);
  sol_block_.resize(r, ni);
  block_lu_.resize(r);
  const bool first = !chosen_;
  chosen_ = true;
  chosen_condition_ = factor_dependent_block();
  if (!first && old_independent != independent_ && report_) {
    std::ostringstream s;
    s << "independent speeds chosen again: " << speed_list(independent_) << " (were " << speed_list(old_independent)
      << "), constraint rank " << r << " of " << cons_.rows() << ", dependent block condition number "
      << chosen_condition_;
    report_(t, s.str());
  }
}

double CoordinatePartition::factor_dependent_block() {
  const int r = rank();
  if (r == 0) return 1.0;
  for (int j = 0; j < r; ++j)
    for (int i = 0; i < r; ++i) block_(i, j) = G_(rows_[i], dependent_[j]);
  block_lu_.compute(block_);
  return block_lu_.condition();
}

void CoordinatePartition::factor_or_choose(double t) {
  if (!chosen_) return choose(t);
  // The reference is the best condition seen since the choice, so a block that recovers and
  // degrades again is compared with its own best.
  const double condition = factor_dependent_block();
  chosen_condition_ = std::min(chosen_condition_, condition);
  if (condition > settings_.partition_condition_growth * chosen_condition_) choose(t);
}

void CoordinatePartition::analyse(double t, Eigen::Ref<VecX> q, Eigen::Ref<VecX> u) {
  const int m = cons_.rows();
  iterations_ = 0;
  update_positions(model_, kin_, q);
  if (m > 0) {
    const double tol = settings_.position_tolerance;
    bool rechosen_for_rank = false;
    for (;;) {
      constraint_position(model_, cons_, kin_, data_, phi_);
      constraint_jacobian(model_, cons_, kin_, data_, G_);
      factor_or_choose(t);  // 001 §2.2: re-selection when G_RD becomes ill conditioned
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
      // Eqs 12-13: G_RD Δu_D = −Φ_R.
      for (int i = 0; i < rank(); ++i) phi_rows_(i) = -phi_(rows_[i]);
      block_lu_.solve(phi_rows_, x_);
      du_.setZero();
      for (int j = 0; j < rank(); ++j) du_(dependent_[j]) = x_(j);
      integrate_q(model_, q, du_);
      update_positions(model_, kin_, q);
      ++iterations_;
    }
    if (!(inf_norm(phi_) <= tol)) {
      Eigen::Index worst = 0;
      const double err = phi_.cwiseAbs().maxCoeff(&worst);
      std::ostringstream s;
      s << "position analysis did not converge at t = " << t << " after " << iterations_ << " Newton iterations: "
        << row_owner(model_, cons_.kept()[worst]) << " residual " << err << " (tolerance " << tol
        << "); the loops cannot close for these independent coordinates";
      throw std::runtime_error(s.str());
    }
    // Eq 14 (Φ_t = 0): G_RD u_D = −G_RI u_I, with G and the LU of G_RD at the converged q.
    rhs_.setZero();
    for (int k : independent_)
      for (int i = 0; i < rank(); ++i) rhs_(i) -= G_(rows_[i], k) * u(k);
    block_lu_.solve(rhs_, x_);
    for (int j = 0; j < rank(); ++j) u(dependent_[j]) = x_(j);
  }
  update_velocities(model_, kin_, q, u);
}

void CoordinatePartition::complete(double t, Eigen::Ref<VecX> q, Eigen::Ref<VecX> u) {
  analyse(t, q, u);
  q_ = q;
  u_ = u;
  fresh_ = true;
}

void CoordinatePartition::prepare(double t, const VecX& q, const VecX& u) {
  const bool reuse = fresh_ && q == q_ && u == u_;
  fresh_ = false;
  if (reuse) return;
  q_ = q;
  u_ = u;
  analyse(t, q_, u_);
}

void CoordinatePartition::partial_velocity_matrix(MatX& B) {
  const int r = rank(), ni = model_.nv - r;
  if (B.rows() != model_.nv || B.cols() != ni) B.resize(model_.nv, ni);
  B.setZero();
  for (int k = 0; k < ni; ++k) {
    B(independent_[k], k) = 1.0;
    for (int i = 0; i < r; ++i) rhs_block_(i, k) = -G_(rows_[i], independent_[k]);
  }
  if (r == 0) return;
  block_lu_.solve(rhs_block_, sol_block_);  // B_D = −G_RD⁻¹ G_RI (eq 18)
  for (int k = 0; k < ni; ++k)
    for (int j = 0; j < r; ++j) B(dependent_[j], k) = sol_block_(j, k);
}

void CoordinatePartition::multipliers(const VecX& b, VecX& lambda) {
  lambda.setZero(cons_.rows());
  const int r = rank();
  if (r == 0) return;
  for (int j = 0; j < r; ++j) rhs_(j) = b(dependent_[j]);
  block_lu_.solve_transposed(rhs_, x_);  // eq 24: G_RDᵀ λ_R = b_D
  for (int i = 0; i < r; ++i) lambda(rows_[i]) = x_(i);
}

std::string CoordinatePartition::speed_list(const std::vector<int>& speeds) const {
  const std::vector<std::string> names = model_.coordinate_names();
  std::string out;
  for (int k : speeds) out.append(out.empty() ? "" : ", ").append(names[model_.nq + k]);
  return out;
}

}  // namespace loopdyn
