// Dense solvers (linalg.hpp has the math).
#include "loopdyn/core/linalg.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace loopdyn {

void orthonormalize_columns(Eigen::Ref<MatX> X) {
  for (Eigen::Index j = 0; j < X.cols(); ++j) {
    const double norm0 = X.col(j).norm();
    for (int pass = 0; pass < 2; ++pass)
      for (Eigen::Index k = 0; k < j; ++k) X.col(j) -= X.col(k).dot(X.col(j)) * X.col(k);
    const double norm = X.col(j).norm();
    // Below ε·‖x_j‖ what is left of x_j after removing its components along the others is round-off.
    if (!(norm > 64.0 * std::numeric_limits<double>::epsilon() * norm0))
      throw std::runtime_error("orthonormalize_columns: column " + std::to_string(j) +
                               " is in the span of the columns before it");
    X.col(j) /= norm;
  }
}

NumericalRank numerical_rank(const MatX& A) {
  NumericalRank r;
  if (A.size() == 0) return r;
  const VecX s = Eigen::JacobiSVD<MatX>(A).singularValues();
  r.tolerance = static_cast<double>(std::max(A.rows(), A.cols())) * std::numeric_limits<double>::epsilon() * s(0);
  r.rank = static_cast<int>((s.array() > r.tolerance).count());
  return r;
}

PsdSolver::PsdSolver(int n, double rank_tolerance)
    : rank_tolerance_(rank_tolerance), llt_(n), eig_(n), rank_(n) {}

void PsdSolver::compute(const MatX& A) {
  const Eigen::Index n = A.rows();
  llt_.compute(A);
  regular_ = llt_.info() == Eigen::Success;
  if (regular_) {
    const auto d = llt_.matrixLLT().diagonal().cwiseAbs();
    condition_ = n > 0 ? std::pow(d.maxCoeff() / d.minCoeff(), 2) : 1.0;
    regular_ = condition_ * rank_tolerance_ < 1.0;
  }
  if (regular_) {
    rank_ = static_cast<int>(n);
    return;
  }
  eig_.compute(A);
  const VecX& s = eig_.eigenvalues();  // ascending
  const double cut = rank_tolerance_ * std::max(s(n - 1), 0.0);
  rank_ = static_cast<int>((s.array() > cut).count());
  condition_ = s(0) > 0.0 ? s(n - 1) / s(0) : std::numeric_limits<double>::infinity();
}

void PsdSolver::solve(const VecX& b, VecX& x) const {
  if (regular_) {
    x.noalias() = llt_.solve(b);
    return;
  }
  // x = Σ v_k (v_kᵀ b) / s_k over the kept eigenvalues s_k: minimum norm.
  const VecX& s = eig_.eigenvalues();
  const Eigen::Index n = s.size();
  x.setZero();
  for (Eigen::Index k = n - rank_; k < n; ++k)
    x += eig_.eigenvectors().col(k) * (eig_.eigenvectors().col(k).dot(b) / s(k));
}

namespace {

// Consecutive rows of G whose triangular solves and products are done as one block.
constexpr int kBlock = 32;

// First nonzero column of row r of G (cols() for a zero row).
int first_nonzero(const MatX& G, int r) {
  int first = 0;
  while (first < G.cols() && G(r, first) == 0.0) ++first;
  return first;
}

}  // namespace

void schur_complement(const Eigen::LLT<MatX>& mass, const MatX& G, MatX& Y, MatX& A) {
  const int m = static_cast<int>(G.rows()), n = static_cast<int>(G.cols());
  Y = G.transpose();
  for (int r0 = 0; r0 < m; r0 += kBlock) {
    const int rows = std::min(kBlock, m - r0);
    int f = n;
    for (int r = r0; r < r0 + rows; ++r) f = std::min(f, first_nonzero(G, r));
    auto Yb = Y.block(f, r0, n - f, rows);
    mass.matrixLLT().bottomRightCorner(n - f, n - f).triangularView<Eigen::Lower>().solveInPlace(Yb);
    A.block(r0, 0, rows, r0 + rows).noalias() = Yb.transpose() * Y.block(f, 0, n - f, r0 + rows);
  }
  A.triangularView<Eigen::StrictlyUpper>() = A.transpose();
}

SquareLu::SquareLu(int n) { resize(n); }

void SquareLu::resize(int n) {
  if (n == size() && x_.size() == n) return;
  n_ = n;
  lu_ = Eigen::PartialPivLU<MatX>(n > kSmall ? n : 0);
  x_.resize(n);
  y_.resize(n);
  z_.resize(n);
  sign_.resize(n);
}

void SquareLu::compute(const MatX& A) {
  if (n_ > kSmall) {
    norm1_ = A.cwiseAbs().colwise().sum().maxCoeff();
    return void(lu_.compute(A));
  }
  // Partial pivoting as Eigen's: the column's largest remaining entry is the pivot. A zero pivot
  // leaves its column uneliminated (U has a zero on its diagonal: condition() is infinite). The
  // copy and ‖A‖₁ in one pass: Eigen's dynamic reductions cost more than the 2 x 2 arithmetic.
  norm1_ = 0.0;
  for (int j = 0; j < n_; ++j) {
    double column = 0.0;
    for (int i = 0; i < n_; ++i) column += std::abs(small_(i, j) = A(i, j));
    norm1_ = std::max(norm1_, column);
  }
  for (int i = 0; i < n_; ++i) row_[i] = i;
  for (int k = 0; k < n_; ++k) {
    int p = k;
    for (int i = k + 1; i < n_; ++i)
      if (std::abs(small_(i, k)) > std::abs(small_(p, k))) p = i;
    if (p != k) {
      small_.row(p).swap(small_.row(k));
      std::swap(row_[p], row_[k]);
    }
    if (small_(k, k) == 0.0) continue;
    for (int i = k + 1; i < n_; ++i) {
      const double l = small_(i, k) /= small_(k, k);
      for (int j = k + 1; j < n_; ++j) small_(i, j) -= l * small_(k, j);
    }
  }
}

void SquareLu::solve_transposed(const VecX& b, VecX& x) const {
  // Aᵀ = (P⁻¹ L U)ᵀ = Uᵀ Lᵀ P: Uᵀ y = b, Lᵀ z = y, x = Pᵀ z (out of place: no permutation mask).
  if (n_ <= kSmall) {
    double y[kSmall];
    for (int i = 0; i < n_; ++i) {
      y[i] = b(i);
      for (int k = 0; k < i; ++k) y[i] -= small_(k, i) * y[k];
      y[i] /= small_(i, i);
    }
    for (int i = n_ - 1; i >= 0; --i) {
      for (int k = i + 1; k < n_; ++k) y[i] -= small_(k, i) * y[k];
      x(row_[i]) = y[i];
    }
    return;
  }
  y_ = b;
  lu_.matrixLU().triangularView<Eigen::Upper>().transpose().solveInPlace(y_);
  lu_.matrixLU().triangularView<Eigen::UnitLower>().transpose().solveInPlace(y_);
  x.noalias() = lu_.permutationP().transpose() * y_;
}

double SquareLu::condition() {
  const Eigen::Index n = size();
  if (n == 0) return 1.0;
  const double smallest_pivot = n > kSmall ? lu_.matrixLU().diagonal().cwiseAbs().minCoeff()
                                           : small_.diagonal().head(n).cwiseAbs().minCoeff();
  if (!(smallest_pivot > 0.0)) return std::numeric_limits<double>::infinity();
  if (n <= kSmall) {
    // ‖A⁻¹‖₁ exactly, column by column: n solves, fewer than Hager's iterations take.
    double inverse_norm = 0.0;
    for (Eigen::Index j = 0; j < n; ++j) {
      x_.setZero();
      x_(j) = 1.0;
      solve(x_, z_);
      inverse_norm = std::max(inverse_norm, z_.lpNorm<1>());
    }
    return std::max(norm1_ * inverse_norm, 1.0);
  }
  // Hager: maximize ‖A⁻¹x‖₁ over ‖x‖₁ = 1 by a gradient step over the vertices e_j.
  x_.setConstant(1.0 / static_cast<double>(n));
  double estimate = 0.0;
  for (int iteration = 0; iteration < 5; ++iteration) {
    solve(x_, z_);  // z = A⁻¹ x
    const double norm = z_.lpNorm<1>();
    if (iteration > 0 && norm <= estimate) break;
    estimate = norm;
    for (Eigen::Index i = 0; i < n; ++i) sign_(i) = z_(i) >= 0.0 ? 1.0 : -1.0;
    solve_transposed(sign_, z_);  // z = A⁻ᵀ sign(A⁻¹x): the gradient
    Eigen::Index j = 0;
    const double largest = z_.cwiseAbs().maxCoeff(&j);
    if (largest <= z_.dot(x_)) break;  // x is a local maximum
    x_.setZero();
    x_(j) = 1.0;
  }
  // Higham's test vector x_i = (−1)^i (1 + i/(n − 1)), for matrices that fool the gradient steps.
  if (n > 1) {
    for (Eigen::Index i = 0; i < n; ++i)
      x_(i) = (i % 2 ? -1.0 : 1.0) * (1.0 + static_cast<double>(i) / static_cast<double>(n - 1));
    solve(x_, z_);
    estimate = std::max(estimate, 2.0 * z_.lpNorm<1>() / (3.0 * static_cast<double>(n)));
  }
  return std::max(norm1_ * estimate, 1.0);
}

}  // namespace loopdyn
