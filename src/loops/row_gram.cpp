// G Gᵀ of the kept rows on the loops' sparsity (row_gram.hpp).
#include "loopdyn/loops/row_gram.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "loops/constraint_rows.hpp"

namespace loopdyn {

std::vector<std::vector<int>> row_speeds(const Model& model, const Constraints& cons) {
  std::vector<std::vector<int>> speeds;
  for (const ConstraintRow& row : cons.kept()) speeds.push_back(detail::row_speeds(model, row));
  return speeds;
}

RowGram::RowGram(const Model& model, const Constraints& cons) {
  const int m = cons.rows();
  speeds_ = row_speeds(model, cons);
  path_speeds_ = detail::path_speeds(speeds_);
  std::size_t longest = 0;
  std::vector<std::vector<int>> rows_of(model.nv);
  for (int r = 0; r < m; ++r) {
    longest = std::max(longest, speeds_[r].size());
    for (int k : speeds_[r]) rows_of[k].push_back(r);
  }
  G_ = MatX::Zero(m, static_cast<Eigen::Index>(longest));
  // The pattern: (row, other) with other ≤ row sharing a speed, and the shared speeds.
  std::map<std::pair<int, int>, std::vector<int>> shared;
  for (int r = 0; r < m; ++r) shared[{r, r}];  // the diagonal, even for a row on no speed
  for (int k = 0; k < model.nv; ++k)
    for (int r : rows_of[k])
      for (int s : rows_of[k])
        if (s <= r) shared[{r, s}].push_back(k);
  fill_ = (2.0 * static_cast<double>(shared.size()) - m) / (static_cast<double>(m) * m);
  // The fill-reducing order of the pattern (AMD), applied once: A_ holds P A Pᵀ's upper triangle.
  Eigen::SparseMatrix<double> pattern(m, m);
  std::vector<Eigen::Triplet<double>> entries;
  for (const auto& [rs, k] : shared) entries.emplace_back(rs.first, rs.second, 1.0);
  pattern.setFromTriplets(entries.begin(), entries.end());
  Eigen::PermutationMatrix<Eigen::Dynamic, Eigen::Dynamic, int> order;
  Eigen::AMDOrdering<int>()(pattern.selfadjointView<Eigen::Lower>(), order);
  const Eigen::PermutationMatrix<Eigen::Dynamic, Eigen::Dynamic, int> placement = order.inverse();
  place_ = placement.indices();
  const Eigen::VectorXi& place = place_;
  entries.clear();
  for (const auto& [rs, k] : shared) {
    const int i = place(rs.first), j = place(rs.second);
    entries.emplace_back(std::min(i, j), std::max(i, j), 1.0);
  }
  A_.resize(m, m);
  A_.setFromTriplets(entries.begin(), entries.end());
  A_.makeCompressed();
  const auto column = [&](int row, int speed) {  // of the speed in G_'s row
    const std::vector<int>& s = speeds_[row];
    return static_cast<int>(std::lower_bound(s.begin(), s.end(), speed) - s.begin());
  };
  for (const auto& [rs, k] : shared) {
    const int i = place(rs.first), j = place(rs.second);
    const int value = static_cast<int>(&A_.coeffRef(std::min(i, j), std::max(i, j)) - A_.valuePtr());
    for (int speed : k) terms_.push_back({value, rs.first, rs.second, column(rs.first, speed), column(rs.second, speed)});
  }
  ldlt_.analyzePattern(A_);
  // A start without the symmetries of the mechanism (a vector of ones is orthogonal to the top
  // eigenvector of each of the planar ladder's 2 x 2 blocks).
  smallest_vector_.resize(m);
  for (int k = 0; k < m; ++k) smallest_vector_(k) = 1.0 + 0.5 * std::sin(1.7 * k + 0.3);
  smallest_vector_.normalize();
  largest_vector_ = smallest_vector_;
  work_.resize(m);
  solved_.resize(m);
}

void RowGram::assemble(const MatX& G) {
  for (std::size_t r = 0; r < speeds_.size(); ++r)
    for (std::size_t j = 0; j < speeds_[r].size(); ++j) G_(r, j) = G(r, speeds_[r][j]);
  form();
}

void RowGram::assemble(const Model& model, const Constraints& cons, const KinematicsData& kin, ConstraintData& data) {
  detail::update_frames(model, kin, data);
  detail::update_motion_columns(model, kin, path_speeds_, data);  // once per speed, not once per row on it
  G_.setZero();
  for (int r = 0; r < cons.rows(); ++r) detail::jacobian_row_on_path(model, cons.kept()[r], data, speeds_[r], G_, r);
  form();
}

void RowGram::form() {
  double* a = A_.valuePtr();
  std::fill(a, a + A_.nonZeros(), 0.0);
  for (const Term& t : terms_) a[t.value] += G_(t.row, t.at_row) * G_(t.other, t.at_other);
  // Absolute row sums of A: a stored (upper) entry counts in its row and, off the diagonal, in the
  // row of its column.
  work_.setZero();
  for (int j = 0; j < A_.outerSize(); ++j)
    for (Eigen::SparseMatrix<double>::InnerIterator it(A_, j); it; ++it) {
      work_(it.row()) += std::abs(it.value());
      if (it.row() != j) work_(j) += std::abs(it.value());
    }
  norm_ = work_.maxCoeff();
}

bool RowGram::smallest_above(double tau) {
  ldlt_.setShift(-tau);
  ldlt_.factorize_ordered(A_);
  return ldlt_.info() == Eigen::Success && ldlt_.vectorD().minCoeff() > 0.0;
}

double RowGram::smallest_estimate(int iterations) {
  for (int k = 0; k < iterations; ++k) {
    work_ = ldlt_.solve(smallest_vector_);
    smallest_vector_ = work_.normalized();
  }
  work_.noalias() = A_.selfadjointView<Eigen::Upper>() * smallest_vector_;
  return smallest_vector_.dot(work_);
}

void RowGram::smallest_vector(Eigen::Ref<VecX> out) const {
  for (Eigen::Index r = 0; r < out.size(); ++r) out(r) = smallest_vector_(place_(r));
}

void RowGram::solve(const VecX& b, VecX& x) {
  for (Eigen::Index r = 0; r < b.size(); ++r) work_(place_(r)) = b(r);
  solved_ = ldlt_.solve(work_);
  for (Eigen::Index r = 0; r < b.size(); ++r) x(r) = solved_(place_(r));
}

double RowGram::largest_estimate(int iterations) {
  for (int k = 0; k < iterations; ++k) {
    work_.noalias() = A_.selfadjointView<Eigen::Upper>() * largest_vector_;
    largest_vector_ = work_.normalized();
  }
  work_.noalias() = A_.selfadjointView<Eigen::Upper>() * largest_vector_;
  return largest_vector_.dot(work_);
}

}  // namespace loopdyn
