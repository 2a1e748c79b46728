#include "loopdyn/formulations/loop_formulation.hpp"

#include <cmath>
#include <limits>
#include <sstream>

namespace loopdyn {

LoopFormulation::LoopFormulation(const Model& model, const FormulationSettings& settings)
    : model_(model), settings_(settings), cons_(model), cons_data_(model, cons_), phi_(VecX::Zero(cons_.rows())),
      G_(MatX::Zero(cons_.rows(), model.nv)), gamma_(VecX::Zero(cons_.rows())), lambda_(VecX::Zero(cons_.rows())),
      llt_(cons_.rows()), eig_(cons_.rows()), rank_(cons_.rows()) {}

void LoopFormulation::evaluate_constraints(const KinematicsData& kin, const VecX& u) {
  constraint_position(model_, cons_, kin, cons_data_, phi_);
  constraint_jacobian(model_, cons_, kin, cons_data_, G_);
  constraint_bias(model_, cons_, kin, cons_data_, gamma_);
  // γ̄ = γ − 2α Φ̇ − β² Φ with Φ̇ = G u (001 eq 9).
  const double a = settings_.baumgarte_alpha, b = settings_.baumgarte_beta;
  if (a != 0.0) gamma_.noalias() -= 2.0 * a * (G_ * u);
  if (b != 0.0) gamma_ -= b * b * phi_;
}

void LoopFormulation::solve_multipliers(double t, const MatX& A, const VecX& rhs) {
  const int m = cons_.rows();
  llt_.compute(A);
  bool regular = llt_.info() == Eigen::Success;
  if (regular) {
    const auto d = llt_.matrixLLT().diagonal().cwiseAbs();
    condition_ = m > 0 ? std::pow(d.maxCoeff() / d.minCoeff(), 2) : 1.0;
    regular = condition_ * settings_.rank_tolerance < 1.0;
  }
  if (regular) {
    lambda_.noalias() = llt_.solve(rhs);
    rank_ = m;
  } else {
    solve_rank_deficient(A, rhs);
  }
  const bool singular = rank_ < m;
  if (singular == singular_) return;
  singular_ = singular;
  std::ostringstream s;
  if (singular)
    s << "singular configuration: constraint rank " << rank_ << " of " << m << " (loops " << null_space_loops()
      << "), condition number " << condition_ << "; multipliers are minimum-norm";
  else
    s << "left the singular configuration (condition number " << condition_ << ")";
  report(t, s.str());
}

void LoopFormulation::solve_rank_deficient(const MatX& A, const VecX& rhs) {
  // λ = V diag(1/σ, σ > tol σ_max) Vᵀ rhs: the minimum-norm least-squares solution.
  eig_.compute(A);
  const VecX& s = eig_.eigenvalues();  // ascending
  const double cut = settings_.rank_tolerance * std::max(s(s.size() - 1), 0.0);
  lambda_.setZero();
  rank_ = 0;
  for (Eigen::Index k = 0; k < s.size(); ++k) {
    if (s(k) <= cut) continue;
    ++rank_;
    lambda_ += eig_.eigenvectors().col(k) * (eig_.eigenvectors().col(k).dot(rhs) / s(k));
  }
  const double smallest = s(0) > 0.0 ? s(0) : 0.0;
  condition_ = smallest > 0.0 ? s(s.size() - 1) / smallest : std::numeric_limits<double>::infinity();
}

std::string LoopFormulation::null_space_loops() const {
  // Loops of the rows with the largest weight in the null-space eigenvectors.
  VecX weight = VecX::Zero(cons_.rows());
  for (int k = 0; k < cons_.rows() - rank_; ++k) weight += eig_.eigenvectors().col(k).cwiseAbs2();
  std::vector<bool> named(model_.loop_joints.size(), false);
  std::string out;
  for (int r = 0; r < cons_.rows(); ++r) {
    const int loop = cons_.kept()[r].loop;
    if (weight(r) < 0.1 * weight.maxCoeff() || named[loop]) continue;
    named[loop] = true;
    out += (out.empty() ? "'" : ", '") + model_.loop_joints[loop].name + "'";
  }
  return out;
}

}  // namespace loopdyn
