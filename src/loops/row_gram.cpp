// G Gᵀ of the kept rows on the loops' sparsity (row_gram.hpp).
#include "loopdyn/loops/row_gram.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace loopdyn {

namespace {

// Bodies from b up to ground, b first.
std::vector<int> to_ground(const Model& model, int b) {
  std::vector<int> chain;
  for (; b >= 0; b = model.parent[b]) chain.push_back(b);
  return chain;
}

}  // namespace

std::vector<std::vector<int>> row_speeds(const Model& model, const Constraints& cons) {
  std::vector<std::vector<int>> speeds;
  for (const ConstraintRow& row : cons.kept()) {
    std::vector<int> s;
    if (row.kind == ConstraintRow::Kind::coupling) {
      for (const ModelCoupling::Term& t : model.couplings[row.loop].terms) s.push_back(t.v_index);
    } else {
      const ModelJoint& j = model.loop_joints[row.loop];
      std::vector<int> a = to_ground(model, j.parent), c = to_ground(model, j.child);
      // The common ancestors (the loop's base and above) move both frames alike.
      while (!a.empty() && !c.empty() && a.back() == c.back()) a.pop_back(), c.pop_back();
      for (const std::vector<int>* side : {&a, &c})
        for (int b : *side)
          for (int k = 0; k < model.nv_joint[b]; ++k) s.push_back(model.v_index[b] + k);
    }
    std::sort(s.begin(), s.end());
    s.erase(std::unique(s.begin(), s.end()), s.end());
    speeds.push_back(std::move(s));
  }
  return speeds;
}

RowGram::RowGram(const Model& model, const Constraints& cons) {
  const int m = cons.rows();
  const std::vector<std::vector<int>> speeds = row_speeds(model, cons);
  std::vector<std::vector<int>> rows_of(model.nv);
  for (int r = 0; r < m; ++r)
    for (int k : speeds[r]) rows_of[k].push_back(r);
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
  for (const auto& [rs, k] : shared) {
    const int i = place(rs.first), j = place(rs.second);
    const int value = static_cast<int>(&A_.coeffRef(std::min(i, j), std::max(i, j)) - A_.valuePtr());
    for (int speed : k) terms_.push_back({value, rs.first, rs.second, speed});
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
  double* a = A_.valuePtr();
  std::fill(a, a + A_.nonZeros(), 0.0);
  for (const Term& t : terms_) a[t.value] += G(t.row, t.speed) * G(t.other, t.speed);
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
