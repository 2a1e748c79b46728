// SuiteSparseQR through Eigen::SPQR, for the loops layer's sparse factorizations (the structural
// rank check, structural_rank.cpp; the partition and Newton steps of large assemblies,
// assembly.cpp). Private to the loops layer, which links SuiteSparse.
#pragma once

#include <Eigen/SPQRSupport>
#include <Eigen/SparseCore>
#include <algorithm>
#include <vector>

#include "loopdyn/core/linalg.hpp"

namespace loopdyn::detail {

using SparseMat = Eigen::SparseMatrix<double>;

/// Pivots of a factorization of G count above 1e-10 · max(1, max|G|): the loops layer's rank rule
/// for QR (the structural check, the assembly's choice of dependent speeds, jacobian_rank), absolute
/// near G ≡ 0.
inline double pivot_threshold(double largest_entry) { return 1e-10 * std::max(1.0, largest_entry); }

/// Eigen::SPQR with its column permutation readable. SuiteSparseQR (multifrontal, in a
/// fill-reducing column order, with Heath's rank detection) keeps a column when its part outside
/// the span of the columns kept before it is longer than the pivot threshold and moves the others
/// after them, so places 0 .. rank − 1 hold the kept columns. It returns no permutation where its
/// order is the identity, which Eigen::SPQR::colsPermutation() would read through a null pointer.
class Spqr : public Eigen::SPQR<SparseMat> {
 public:
  using RFactor = Eigen::SPQR<SparseMat>::MatrixType;  // R's storage (SuiteSparse's index type)
  /// The column of the factored matrix at place j of R.
  Eigen::Index column(Eigen::Index j) const { return m_E ? static_cast<Eigen::Index>(m_E[j]) : j; }
  /// The x of least ‖A x − b‖₂ that is zero on the columns not kept: Qᵀ b, back substitution
  /// with R's leading rank x rank block, the column order undone (Eigen::SPQR::solve reads the
  /// permutation's null pointer where the order is the identity).
  Eigen::VectorXd basic_solution(const Eigen::VectorXd& b) const {
    const Eigen::Index rank = this->rank();
    Eigen::VectorXd y = matrixQ().transpose() * b;
    const RFactor R = matrixR();  // a copy (Eigen::SPQR returns it by value)
    const Eigen::VectorXd z = R.topLeftCorner(rank, rank).triangularView<Eigen::Upper>().solve(y.head(rank));
    Eigen::VectorXd x = Eigen::VectorXd::Zero(cols());
    for (Eigen::Index j = 0; j < rank; ++j) x(column(j)) = z(j);
    return x;
  }
};

/// Rank of a constraint Jacobian G (m x n, dense): numerical_rank's SVD where m · n · min(m, n) is
/// at most 2e7 (`loopdyn info` of the 256-bar square chain, 7.4e6, took 0.07 s in all), else the
/// rank SuiteSparseQR finds in Gᵀ at pivot_threshold, returned as `tolerance`. JacobiSVD is cubic
/// with a large constant: `loopdyn info` of paper 003's 1024-bar square chain spent 6 s in it, and
/// the 4096-bar one did not finish in 7 minutes.
inline NumericalRank jacobian_rank(const MatX& G) {
  const double m = static_cast<double>(G.rows()), n = static_cast<double>(G.cols());
  if (m * n * std::min(m, n) <= 2e7) return numerical_rank(G);
  NumericalRank r;
  r.tolerance = pivot_threshold(G.cwiseAbs().maxCoeff());
  // Rows shorter than the threshold are dependent whatever the others, and each zero pivot would
  // cost the QR a pass over its pattern (RowRank::factor, structural_rank.cpp): they stay out.
  std::vector<Eigen::Index> rows;
  for (Eigen::Index i = 0; i < G.rows(); ++i)
    if (G.row(i).norm() >= r.tolerance) rows.push_back(i);
  if (rows.empty()) return r;
  const SparseMat Gt = G(rows, Eigen::all).transpose().sparseView();
  Spqr qr;
  qr.setPivotThreshold(r.tolerance);
  qr.compute(Gt);
  r.rank = static_cast<int>(qr.rank());
  return r;
}

}  // namespace loopdyn::detail
