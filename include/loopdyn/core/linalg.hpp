// Dense solvers shared by the loop formulations and the projection, with every workspace sized
// at construction so that the regular path of a step allocates nothing.
//
// PsdSolver: x = A⁺ b for a symmetric positive semi-definite A (G M⁻¹ Gᵀ of the multipliers and
// of the projection). Regular case: Cholesky, condition estimated as (max Lᵢᵢ / min Lᵢᵢ)².
// When Cholesky fails or that estimate exceeds 1/rank_tolerance: symmetric eigendecomposition,
// eigenvalues below rank_tolerance · λ_max count as zero, x is the minimum-norm least-squares
// solution (no NaN at singular configurations or with rows redundant at run time). The
// eigendecomposition allocates its Householder workspace: only the rank-deficient path does.
//
// schur_complement: A = G M⁻¹ Gᵀ = YᵀY with Y = L⁻¹Gᵀ for M = LLᵀ (the range-space elimination
// of 001 eq 10). Loop rows of G are zero off their loop's tree path, so column r of Gᵀ, and of Y
// since L is lower triangular, is zero above the row's first nonzero column f_r. For a block B of
// rows with f = min f_r: Y(f:, B) = L(f:, f:)⁻¹ Gᵀ(f:, B) and A(B, 0:end(B)) = Y(f:, B)ᵀ Y(f:, 0:end(B));
// the strictly upper triangle is mirrored.
//
// SquareLu: LU with partial pivoting of a square block whose size may change (the dependent
// block G_RD of coordinate partitioning; written out up to 4 x 4, Eigen's above), solves with A
// and Aᵀ into caller vectors, and the
// 1-norm condition number: exact for blocks up to 4 x 4 (from the columns of A⁻¹), above that
// estimated by Hager's method (W. W. Hager, "Condition estimates", SIAM
// J. Sci. Stat. Comput. 5 (1984) 311-316) with N. J. Higham's extra test vector (ACM TOMS 14
// (1988) 381-396): a lower bound of ‖A⁻¹‖₁, almost always within a factor 3, from a few solves.
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <Eigen/LU>
#include <Eigen/SVD>

#include "loopdyn/core/spatial.hpp"

namespace loopdyn {

/// ‖x‖∞ (0 for an empty vector).
inline double inf_norm(const Eigen::Ref<const VecX>& x) { return x.size() == 0 ? 0.0 : x.cwiseAbs().maxCoeff(); }

/// Replaces the columns of X (full column rank) by an orthonormal basis of their span, in place:
/// Gram-Schmidt (modified) applied twice ("twice is enough": L. Giraud, J. Langou, M. Rozložník,
/// Comput. Math. Appl. 50 (2005) 1069-1075, orthogonal to round-off when X is numerically of full
/// rank). Each column j becomes the j-th column of Q in X = Q R. Written out because Eigen's
/// HouseholderQR allocates its block workspace above 48 columns, and forming its thin Q allocates.
/// Throws std::runtime_error when a column is (numerically) in the span of those before it.
void orthonormalize_columns(Eigen::Ref<MatX> X);

/// Rank of A by SVD: singular values at or below max(rows, cols) · ε · σ_max count as zero (the
/// LAPACK/NumPy matrix_rank rule). `tolerance` is that threshold.
struct NumericalRank {
  int rank = 0;
  double tolerance = 0.0;
};
NumericalRank numerical_rank(const MatX& A);

class PsdSolver {
 public:
  PsdSolver(int n, double rank_tolerance);
  /// Factors A (n x n, symmetric positive semi-definite; only its lower triangle is read).
  void compute(const MatX& A);
  /// x = A⁺ b (x sized n).
  void solve(const VecX& b, VecX& x) const;
  /// n when regular, else the number of eigenvalues above the cut.
  int rank() const { return rank_; }
  /// Estimated 2-norm condition number (infinite when A is singular).
  double condition() const { return condition_; }
  /// After a rank-deficient compute(): columns 0 .. n − rank − 1 span the null space.
  const MatX& eigenvectors() const { return eig_.eigenvectors(); }

 private:
  double rank_tolerance_;
  Eigen::LLT<MatX> llt_;
  Eigen::SelfAdjointEigenSolver<MatX> eig_;
  bool regular_ = true;
  int rank_ = 0;
  double condition_ = 1.0;
};

/// Y (nv x m) and A (m x m), sized by the caller, from the factored M and G (m x nv).
void schur_complement(const Eigen::LLT<MatX>& mass, const MatX& G, MatX& Y, MatX& A);

class SquareLu {
 public:
  explicit SquareLu(int n = 0);
  /// Sizes the workspaces for n x n (allocates only when n changes).
  void resize(int n);
  int size() const { return n_; }
  /// Factors A (size() x size()).
  void compute(const MatX& A);
  /// x = A⁻¹ b.
  template <class Rhs, class Out>
  void solve(const Rhs& b, Out& x) const {
    if (n_ > kSmall) {
      x.noalias() = lu_.solve(b);
      return;
    }
    // P A = L U: L y = P b, then U x = y.
    double y[kSmall];
    for (int i = 0; i < n_; ++i) {
      y[i] = b(row_[i]);
      for (int k = 0; k < i; ++k) y[i] -= small_(i, k) * y[k];
    }
    for (int i = n_ - 1; i >= 0; --i) {
      for (int k = i + 1; k < n_; ++k) y[i] -= small_(i, k) * y[k];
      y[i] /= small_(i, i);
    }
    for (int i = 0; i < n_; ++i) x(i) = y[i];
  }
  /// x = A⁻ᵀ b (x must not alias b).
  void solve_transposed(const VecX& b, VecX& x) const;
  /// ‖A‖₁ ‖A⁻¹‖₁: exact up to 4 x 4 (n solves), Hager's estimate above (infinite for a singular A).
  double condition();

 private:
  /// Up to this size the factors are written out in a fixed 4 x 4 array: the blocks of aggregated
  /// bodies (a 4-bar cell's is 2 x 2), where Eigen's dynamic-size LU and its triangular solves
  /// cost several times the arithmetic.
  static constexpr int kSmall = 4;
  int n_ = 0;
  Eigen::Matrix4d small_;  ///< L (unit, strictly lower) and U of P A, n <= kSmall
  int row_[kSmall] = {};   ///< row i of P A is row row_[i] of A
  Eigen::PartialPivLU<MatX> lu_;
  double norm1_ = 0.0;  ///< ‖A‖₁ of the factored matrix
  mutable VecX x_, y_, z_, sign_;
};

}  // namespace loopdyn
