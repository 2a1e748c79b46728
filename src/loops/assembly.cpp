// Assembly of closed loops: exact coordinate increments, GCP partition, damped Newton on Φ,
// velocity projection (assembly.hpp has the math).
#include "loopdyn/loops/assembly.hpp"

#include <Eigen/QR>
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "loopdyn/core/linalg.hpp"
#include "loopdyn/loops/loop_structure.hpp"
#include "loops/constraint_rows.hpp"
#include "loops/sparse_qr.hpp"

namespace loopdyn {

namespace {

using detail::SparseMat;
using detail::Spqr;

// Largest m · nv · min(m, nv) (rows, speeds) for which the partition and the least-squares solves
// with G_d are dense (column-pivoted QR, complete orthogonal decomposition: about that many flops
// each); beyond, SuiteSparseQR on the sparse G. Dense, the 1024-cell spatial ladder (4096 rows)
// spent a minute choosing its dependent speeds.
constexpr double kDenseBudget = 1e8;
// Largest estimated condition number of G_d accepted from the sparse partition, whose column
// order minimizes fill, not conditioning; beyond, the dense column-pivoted QR chooses. The velocity
// solve G_d u_d = −G_i u_i loses about log10(cond) digits.
constexpr double kSparseConditionLimit = 1e8;
// Without marks, the speeds the initial state sets are kept as given when the partition that keeps
// them is conditioned within this factor of the best-conditioned one (a crank given a speed near
// its dead centre is not: its dependent speeds would be that much larger than its own).
constexpr double kGivenConditionRatio = 1e2;
// Power and inverse iterations of the condition estimate (a factor of a few is all it must tell).
constexpr int kConditionIterations = 20;

bool dense_affordable(const SparseMat& G) {
  const double m = static_cast<double>(G.rows()), n = static_cast<double>(G.cols());
  return m * n * std::min(m, n) <= kDenseBudget;
}

SparseMat columns_of(const SparseMat& G, const std::vector<int>& cols) {
  SparseMat out(G.rows(), static_cast<Eigen::Index>(cols.size()));
  Eigen::Index entries = 0;
  for (int c : cols) entries += G.col(c).nonZeros();
  out.reserve(entries);
  for (std::size_t k = 0; k < cols.size(); ++k) {
    out.startVec(static_cast<Eigen::Index>(k));
    for (SparseMat::InnerIterator it(G, cols[k]); it; ++it) out.insertBack(it.row(), static_cast<Eigen::Index>(k)) = it.value();
  }
  out.finalize();
  return out;
}

MatX columns_of(const MatX& G, const std::vector<int>& cols) {
  MatX out(G.rows(), static_cast<Eigen::Index>(cols.size()));
  for (std::size_t c = 0; c < cols.size(); ++c) out.col(c) = G.col(cols[c]);
  return out;
}

double max_abs(const SparseMat& G) { return G.nonZeros() == 0 ? 0.0 : G.coeffs().cwiseAbs().maxCoeff(); }

// The speeds not fixed and the fixed ones (fixed empty: none is), ascending.
std::pair<std::vector<int>, std::vector<int>> split_fixed(int nv, const std::vector<bool>& fixed) {
  std::vector<int> unfixed, pinned;
  for (int k = 0; k < nv; ++k) (!fixed.empty() && fixed[k] ? pinned : unfixed).push_back(k);
  return {unfixed, pinned};
}

// Number of leading diagonal entries of a column-pivoted QR factor above an absolute threshold.
int pivots_above(const Eigen::ColPivHouseholderQR<MatX>& qr, double threshold) {
  const Eigen::Index n = std::min(qr.rows(), qr.cols());
  int r = 0;
  while (r < n && std::abs(qr.matrixQR()(r, r)) > threshold) ++r;
  return r;
}

// Dependent speeds (001 eq 11): pivot columns of G by column-pivoted QR, unfixed columns first.
std::vector<int> dependent_speeds(const MatX& G, const std::vector<bool>& fixed) {
  const auto [unfixed, pinned] = split_fixed(static_cast<int>(G.cols()), fixed);
  std::vector<int> dep;
  if (G.rows() == 0) return dep;
  const double threshold = detail::pivot_threshold(G.cwiseAbs().maxCoeff());
  // Unfixed columns: G_u P = Q R; the first r1 pivots are dependent.
  int r1 = 0;
  Eigen::ColPivHouseholderQR<MatX> qr1;
  if (!unfixed.empty()) {
    qr1.compute(columns_of(G, unfixed));
    r1 = pivots_above(qr1, threshold);
    for (int k = 0; k < r1; ++k) dep.push_back(unfixed[qr1.colsPermutation().indices()(k)]);
  }
  // Fixed columns, only for the rank the unfixed ones miss: pivots of the part of G_f outside the
  // span of the chosen columns, (Qᵀ G_f) rows r1.., which is G_f's block after eliminating them.
  if (!pinned.empty() && r1 < G.rows()) {
    MatX Gf = columns_of(G, pinned);
    if (!unfixed.empty()) Gf = qr1.householderQ().transpose() * Gf;
    Eigen::ColPivHouseholderQR<MatX> qr2(Gf.bottomRows(G.rows() - r1));
    const int r2 = pivots_above(qr2, threshold);
    for (int k = 0; k < r2; ++k) dep.push_back(pinned[qr2.colsPermutation().indices()(k)]);
  }
  std::sort(dep.begin(), dep.end());
  return dep;
}

// The columns SuiteSparseQR keeps of A at the pivot threshold, in its order (sparse_qr.hpp).
std::vector<int> kept_columns(const SparseMat& A, double threshold, int ordering) {
  Spqr qr;
  qr.setPivotThreshold(threshold);
  qr.setSPQROrdering(ordering);
  qr.compute(A);
  std::vector<int> kept;
  for (Eigen::Index j = 0; j < qr.rank(); ++j) kept.push_back(static_cast<int>(qr.column(j)));
  return kept;
}

// dependent_speeds by SuiteSparseQR: the columns it keeps among the unfixed ones (in its
// fill-reducing order), then, for the rank they miss, among the fixed ones, after the chosen
// columns in a fixed order (which it keeps, being independent). Same threshold.
std::vector<int> sparse_dependent_speeds(const SparseMat& G, const std::vector<bool>& fixed) {
  const auto [unfixed, pinned] = split_fixed(static_cast<int>(G.cols()), fixed);
  std::vector<int> dep;
  if (G.rows() == 0) return dep;
  const double threshold = detail::pivot_threshold(max_abs(G));
  if (!unfixed.empty())
    for (int c : kept_columns(columns_of(G, unfixed), threshold, SPQR_ORDERING_DEFAULT)) dep.push_back(unfixed[c]);
  if (!pinned.empty() && static_cast<Eigen::Index>(dep.size()) < G.rows()) {
    std::vector<int> cols = dep;
    cols.insert(cols.end(), pinned.begin(), pinned.end());
    const std::size_t chosen = dep.size();
    for (int c : kept_columns(columns_of(G, cols), threshold, SPQR_ORDERING_FIXED))
      if (static_cast<std::size_t>(c) >= chosen) dep.push_back(cols[c]);
  }
  std::sort(dep.begin(), dep.end());
  return dep;
}

// Estimate of cond(A) = σ_max / σ_min for A (m x r) of full column rank factored as A P = Q R:
// σ(A) = σ(R), the largest by power iterations on RᵀR, the smallest by inverse ones (two
// triangular solves each), from the same fixed start. Its entries differ from each other: a start
// of ones can be orthogonal to an antisymmetric mode of a symmetric mechanism (a ladder's), and
// the inverse iterations would then not see that mode's σ.
double condition_estimate(const Spqr& qr) {
  const Eigen::Index r = qr.rank();
  if (r == 0) return 1.0;
  const SparseMat R = qr.matrixR().topLeftCorner(r, r);
  const auto upper = R.triangularView<Eigen::Upper>();
  const VecX start = VecX::NullaryExpr(r, [](Eigen::Index k) { return 1.0 + 0.5 * std::sin(1.0 + static_cast<double>(k)); });
  VecX big = start, small = start;
  double largest = 0.0, smallest_inverse = 0.0;
  for (int k = 0; k < kConditionIterations; ++k) {
    big /= big.norm();
    big = R.transpose() * VecX(R * big);
    largest = big.norm();  // → σ_max²
    small /= small.norm();
    small = upper.solve(VecX(upper.transpose().solve(small)));
    smallest_inverse = small.norm();  // → 1 / σ_min²
  }
  return std::sqrt(largest * smallest_inverse);
}

// cond(G_d) over G's columns dep, estimated from SuiteSparseQR's factor of G_d (condition_estimate),
// ∞ where G_d has lost rank (a pivot under the loops layer's threshold).
double condition(const SparseMat& G, const std::vector<int>& dep) {
  if (dep.empty()) return 1.0;
  Spqr qr;
  qr.setPivotThreshold(detail::pivot_threshold(max_abs(G)));
  qr.compute(columns_of(G, dep));
  if (qr.rank() < static_cast<Eigen::Index>(dep.size())) return std::numeric_limits<double>::infinity();
  return condition_estimate(qr);
}

// Minimum-norm least-squares solver for a dependent block, with a relative rank threshold.
Eigen::CompleteOrthogonalDecomposition<MatX> factor(const MatX& A) {
  Eigen::CompleteOrthogonalDecomposition<MatX> cod;
  cod.setThreshold(1e-10);
  cod.compute(A);
  return cod;
}

// Φ and G at one configuration.
struct Evaluator {
  const Model& model;
  const Constraints& cons;
  KinematicsData kin;
  ConstraintData data;
  double t;  ///< of the drives' rows
  Evaluator(const Model& m, const Constraints& c, double time) : model(m), cons(c), kin(m), data(m), t(time) {}

  VecX phi(const VecX& q) {
    update_positions(model, kin, q);
    VecX out(cons.rows());
    constraint_position(model, cons, kin, t, data, out);
    return out;
  }
  // G at q, each row's entries on the speeds it acts on (row_speeds): O(nnz) where a dense G
  // would be m x nv.
  SparseMat jacobian(const VecX& q) {
    if (speeds.empty()) {
      Eigen::Index longest = 0;
      for (const ConstraintRow& row : cons.kept()) {
        speeds.push_back(detail::row_speeds(model, row));
        longest = std::max(longest, static_cast<Eigen::Index>(speeds.back().size()));
      }
      scratch = MatX::Zero(1, longest);
      on_paths = detail::path_speeds(speeds);
    }
    update_positions(model, kin, q);
    detail::update_frames(model, kin, data);
    detail::update_motion_columns(model, kin, on_paths, data);
    std::vector<Eigen::Triplet<double>> entries;
    for (int r = 0; r < cons.rows(); ++r) {
      detail::jacobian_row_on_path(model, cons.kept()[r], data, speeds[r], scratch, 0);
      for (std::size_t j = 0; j < speeds[r].size(); ++j) {
        entries.emplace_back(r, speeds[r][j], scratch(0, static_cast<Eigen::Index>(j)));
        scratch(0, static_cast<Eigen::Index>(j)) = 0.0;
      }
    }
    SparseMat G(cons.rows(), model.nv);
    G.setFromTriplets(entries.begin(), entries.end());
    return G;
  }

 private:
  std::vector<std::vector<int>> speeds;  // row_speeds of each row
  std::vector<int> on_paths;             // path_speeds(speeds)
  MatX scratch;                          // (1 x longest row) one row of G, zero between rows
};

// The dependent speeds at G (001 eq 11): dense_affordable, by column-pivoted QR
// (dependent_speeds); else by SuiteSparseQR, unless the block it picks is worse conditioned than
// kSparseConditionLimit.
std::vector<int> choose_dependent_speeds(const SparseMat& G, const std::vector<bool>& fixed) {
  if (dense_affordable(G)) return dependent_speeds(MatX(G), fixed);
  std::vector<int> dep = sparse_dependent_speeds(G, fixed);
  if (condition(G, dep) <= kSparseConditionLimit) return dep;
  return dependent_speeds(MatX(G), fixed);
}

// No speed marked: the speeds u0 sets (≠ 0; the others left 0, unknown to the user) become the
// fixed ones, and `dep` the partition that keeps them (chosen as choose_dependent_speeds chooses),
// when some but not all are set and that partition is conditioned within kGivenConditionRatio of
// `dep`'s, the partition chosen for the best conditioning; else both stay as they are. The
// conditions are estimates from sparse factors: the dense SVDs they replace (2 x 145 M
// instructions for the 64-cell spatial ladder's 256 x 256 blocks) made its start state cost more
// than its 1 s run, and larger mechanisms did not keep the given speeds at all.
void prefer_given_speeds(const SparseMat& G, const VecX& u0, std::vector<bool>& fixed, std::vector<int>& dep) {
  std::vector<bool> given(static_cast<std::size_t>(u0.size()));
  for (Eigen::Index k = 0; k < u0.size(); ++k) given[static_cast<std::size_t>(k)] = u0(k) != 0.0;
  const auto set = std::count(given.begin(), given.end(), true);
  if (set == 0 || set == u0.size()) return;
  std::vector<int> kept = choose_dependent_speeds(G, given);
  if (kept != dep && condition(G, kept) > kGivenConditionRatio * condition(G, dep)) return;
  fixed = std::move(given);
  dep = std::move(kept);
}

// x of least ‖G_d x − b‖₂ (G_d: G's columns dep): SuiteSparseQR's basic solution where G_d has
// full column rank and is conditioned within kSparseConditionLimit (the unique least-squares
// solution, as it is away from singular configurations); else minimum-norm by complete orthogonal
// decomposition where dense_affordable, and the basic solution beyond. The dense decomposition of
// the 64-cell spatial ladder's 256 x 256 block cost 50 M instructions, a third of its start state.
VecX solve_dependent(const SparseMat& G, const std::vector<int>& dep, const VecX& b) {
  Spqr qr;
  qr.setPivotThreshold(detail::pivot_threshold(max_abs(G)));
  qr.compute(columns_of(G, dep));
  const bool regular = qr.rank() == static_cast<Eigen::Index>(dep.size()) && condition_estimate(qr) <= kSparseConditionLimit;
  if (!regular && dense_affordable(G)) return factor(columns_of(MatX(G), dep)).solve(b);
  return qr.basic_solution(b);
}

std::vector<int> complement(const std::vector<int>& dep, int nv) {
  std::vector<int> out;
  for (int k = 0, d = 0; k < nv; ++k) {
    if (d < static_cast<int>(dep.size()) && dep[d] == k) ++d;
    else out.push_back(k);
  }
  return out;
}

// "loop joint 'C' (row C.along.x) residual 0.31": the loop joints with the largest |Φ| first
// (row_owner names the rows).
std::string worst_loops(const Model& model, const Constraints& cons, const VecX& phi, double tolerance) {
  const int nloops = static_cast<int>(model.loop_joints.size());
  auto in_loop = [&](int r) {
    const ConstraintRow& row = cons.kept()[r];
    return (row.kind == ConstraintRow::Kind::dot || row.kind == ConstraintRow::Kind::along) && row.loop >= 0 &&
           row.loop < nloops;
  };
  std::map<int, int> worst;  // loop joint (or nloops + row) -> its row of largest |Φ|
  for (int r = 0; r < cons.rows(); ++r) {
    const int key = in_loop(r) ? cons.kept()[r].loop : nloops + r;
    const auto [it, fresh] = worst.emplace(key, r);
    if (!fresh && std::abs(phi(r)) > std::abs(phi(it->second))) it->second = r;
  }
  std::vector<int> rows;
  for (const auto& [key, r] : worst) rows.push_back(r);
  std::sort(rows.begin(), rows.end(), [&](int a, int b) { return std::abs(phi(a)) > std::abs(phi(b)); });
  std::ostringstream s;
  s.precision(3);
  for (std::size_t k = 0; k < rows.size() && k < 3; ++k) {
    const int r = rows[k];
    if (k > 0 && std::abs(phi(r)) <= tolerance) break;
    s << (k == 0 ? "" : ", ");
    s << row_owner(model, cons.kept()[r]) << " residual " << std::abs(phi(r));
  }
  return s.str();
}

// Where the largest residual is a rotation row (`dot`) of a loop joint, its frames cannot turn into
// line: most often a wrong `axis`, or a rotation of its parent_frame or child_frame.
std::string rotation_hint(const Model& model, const Constraints& cons, const VecX& phi) {
  if (phi.size() == 0) return {};
  Eigen::Index r = 0;
  phi.cwiseAbs().maxCoeff(&r);
  const ConstraintRow& row = cons.kept()[r];
  if (row.kind != ConstraintRow::Kind::dot) return {};
  const ModelJoint& j = model.loop_joints[row.loop];
  return "; the largest residual is a rotation row: loop joint '" + j.name + "'" +
         (j.where.empty() ? "" : " (" + j.where + ")") +
         " cannot turn its two frames into line, check its axis and the rotations of its parent_frame and "
         "child_frame";
}

}  // namespace

std::vector<bool> marked_independent_speeds(const Model& model) {
  std::vector<bool> marked;
  for (int i = 0; i < model.nbodies; ++i) {
    if (!model.joints[i].independent) continue;
    marked.resize(model.nv, false);
    for (int k = 0; k < model.nv_joint[i]; ++k) marked[model.v_index[i] + k] = true;
  }
  return marked;
}

AssemblyResult assemble(const Model& model, const Constraints& cons, const VecX& q0, const VecX& u0,
                        const AssemblySettings& settings) {
  if (q0.size() != model.nq || u0.size() != model.nv)
    throw std::invalid_argument("assemble: expected q0 of size " + std::to_string(model.nq) + " and u0 of size " +
                                std::to_string(model.nv) + ", got " + std::to_string(q0.size()) + " and " +
                                std::to_string(u0.size()));
  if (!settings.fixed_speeds.empty() && static_cast<int>(settings.fixed_speeds.size()) != model.nv)
    throw std::invalid_argument("assemble: fixed_speeds must be empty or have nv = " + std::to_string(model.nv) +
                                " entries, got " + std::to_string(settings.fixed_speeds.size()));
  if (!(settings.tolerance > 0.0) || settings.max_iterations < 0)
    throw std::invalid_argument("assemble: tolerance must be positive and max_iterations not negative");

  AssemblyResult res;
  res.q = q0;
  model.normalize(res.q);
  res.u = u0;
  const int nv = model.nv;
  // Φ and G on every row, the structurally redundant (dropped) ones included: they are consistent
  // at a closed configuration, and checking them rejects a root of the kept rows on another branch
  // where a loop is not closed. The minimum-norm solves below tolerate the redundancy.
  const Constraints& all = cons.dropped().empty() ? cons : model.loops().unreduced;
  if (all.rows() == 0) {
    for (int k = 0; k < nv; ++k) res.independent_speeds.push_back(k);
    return res;
  }
  Evaluator ev(model, all, settings.time);

  // Partition at q0 (001 eq 11), from the kept (independent) rows.
  const SparseMat G0 = Evaluator(model, cons, settings.time).jacobian(res.q);
  std::vector<bool> fixed = settings.fixed_speeds.empty() ? marked_independent_speeds(model) : settings.fixed_speeds;
  std::vector<int> dep = choose_dependent_speeds(G0, fixed);
  if (fixed.empty()) prefer_given_speeds(G0, u0, fixed, dep);

  // Positions (001 eq 12-13): Δu_d = −G_d⁺ Φ, step halved until ‖Φ‖₂ decreases.
  VecX phi = ev.phi(res.q);
  bool stalled = false;
  while (inf_norm(phi) > settings.tolerance && res.iterations < settings.max_iterations) {
    if (dep.empty()) {  // nothing may move
      stalled = true;
      break;
    }
    const VecX step_d = -solve_dependent(ev.jacobian(res.q), dep, phi);
    VecX du = VecX::Zero(nv);
    for (std::size_t c = 0; c < dep.size(); ++c) du(dep[c]) = step_d(c);
    ++res.iterations;
    const double norm0 = phi.norm();
    bool accepted = false;
    for (double alpha = 1.0; alpha > 1e-9; alpha *= 0.5) {
      VecX trial = res.q;
      integrate_q(model, trial, alpha * du);
      const VecX phi_trial = ev.phi(trial);
      if (phi_trial.norm() < norm0) {
        res.q = trial;
        phi = phi_trial;
        accepted = true;
        break;
      }
    }
    if (!accepted) {
      stalled = true;
      break;
    }
  }
  res.position_residual = inf_norm(phi);
  if (res.position_residual > settings.tolerance) {
    std::ostringstream s;
    s.precision(3);
    s << "assembly did not converge: " << worst_loops(model, all, phi, settings.tolerance) << " after "
      << res.iterations << " iterations"
      << (stalled ? " (no step along the Newton direction reduces the residual)" : "")
      << "; the loop may not be able to close with the given independent coordinates" << rotation_hint(model, all, phi);
    throw std::runtime_error(s.str());
  }

  // Velocities (001 eq 14): G_d u_d = −G_i u_i − Φ_t at the assembled q (Φ_t: the drives' rates).
  const SparseMat G = ev.jacobian(res.q);
  VecX phi_t(ev.cons.rows());
  constraint_time_rate(model, ev.cons, settings.time, phi_t);
  const double scale = std::max(1.0, max_abs(G) * inf_norm(u0));  // velocity_scale
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (attempt == 1) dep = choose_dependent_speeds(G, fixed);  // G_d lost rank since q0
    VecX u = u0;
    for (int k : dep) u(k) = 0.0;
    if (dep.empty()) {
      res.u = u;
      res.velocity_residual = inf_norm(VecX(G * u + phi_t));
      break;
    }
    const VecX ud = solve_dependent(G, dep, VecX(-(G * u + phi_t)));
    for (std::size_t c = 0; c < dep.size(); ++c) u(dep[c]) = ud(c);
    res.u = u;
    res.velocity_residual = inf_norm(VecX(G * u + phi_t));
    if (res.velocity_residual <= settings.tolerance * scale) break;
  }
  res.independent_speeds = complement(dep, nv);
  return res;
}

}  // namespace loopdyn
