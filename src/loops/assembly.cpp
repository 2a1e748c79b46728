// Assembly of closed loops: exact coordinate increments, GCP partition, damped Newton on Φ,
// velocity projection (assembly.hpp has the math).
#include "loopdyn/loops/assembly.hpp"

#include <Eigen/QR>
#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <stdexcept>

#include "loopdyn/core/linalg.hpp"
#include "loopdyn/loops/loop_structure.hpp"

namespace loopdyn {

namespace {

MatX columns_of(const MatX& G, const std::vector<int>& cols) {
  MatX out(G.rows(), static_cast<Eigen::Index>(cols.size()));
  for (std::size_t c = 0; c < cols.size(); ++c) out.col(c) = G.col(cols[c]);
  return out;
}

// Number of leading diagonal entries of a column-pivoted QR factor above an absolute threshold.
int pivots_above(const Eigen::ColPivHouseholderQR<MatX>& qr, double threshold) {
  const Eigen::Index n = std::min(qr.rows(), qr.cols());
  int r = 0;
  while (r < n && std::abs(qr.matrixQR()(r, r)) > threshold) ++r;
  return r;
}

// Dependent speeds (001 eq 11): pivot columns of G by column-pivoted QR, unfixed columns first.
// Pivots count above 1e-10 · max(1, max|G|) (the rule of the structural redundancy check).
std::vector<int> dependent_speeds(const MatX& G, const std::vector<bool>& fixed) {
  const int nv = static_cast<int>(G.cols());
  std::vector<int> unfixed, pinned, dep;
  for (int k = 0; k < nv; ++k) (!fixed.empty() && fixed[k] ? pinned : unfixed).push_back(k);
  if (G.rows() == 0) return dep;
  const double threshold = 1e-10 * std::max(1.0, G.cwiseAbs().maxCoeff());
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
  Evaluator(const Model& m, const Constraints& c) : model(m), cons(c), kin(m), data(m) {}

  VecX phi(const VecX& q) {
    update_positions(model, kin, q);
    VecX out(cons.rows());
    constraint_position(model, cons, kin, data, out);
    return out;
  }
  MatX jacobian(const VecX& q) {
    update_positions(model, kin, q);
    MatX out(cons.rows(), model.nv);
    constraint_jacobian(model, cons, kin, data, out);
    return out;
  }
};

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
  Evaluator ev(model, all);

  // Partition at q0 (001 eq 11), from the kept (independent) rows.
  const std::vector<bool> fixed =
      settings.fixed_speeds.empty() ? marked_independent_speeds(model) : settings.fixed_speeds;
  std::vector<int> dep = dependent_speeds(Evaluator(model, cons).jacobian(res.q), fixed);

  // Positions (001 eq 12-13): Δu_d = −G_d⁺ Φ, step halved until ‖Φ‖₂ decreases.
  VecX phi = ev.phi(res.q);
  bool stalled = false;
  while (inf_norm(phi) > settings.tolerance && res.iterations < settings.max_iterations) {
    if (dep.empty()) {  // nothing may move
      stalled = true;
      break;
    }
    const VecX step_d = -factor(columns_of(ev.jacobian(res.q), dep)).solve(phi);
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
      << "; the loop may not be able to close with the given independent coordinates";
    throw std::runtime_error(s.str());
  }

  // Velocities (001 eq 14): G_d u_d = −G_i u_i at the assembled q.
  const MatX G = ev.jacobian(res.q);
  const double scale = velocity_scale(G, u0);
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (attempt == 1) dep = dependent_speeds(G, fixed);  // G_d lost rank since q0
    VecX u = u0;
    for (int k : dep) u(k) = 0.0;
    if (dep.empty()) {
      res.u = u;
      res.velocity_residual = inf_norm(G * u);
      break;
    }
    const VecX ud = factor(columns_of(G, dep)).solve(VecX(-(G * u)));
    for (std::size_t c = 0; c < dep.size(); ++c) u(dep[c]) = ud(c);
    res.u = u;
    res.velocity_residual = inf_norm(G * u);
    if (res.velocity_residual <= settings.tolerance * scale) break;
  }
  res.independent_speeds = complement(dep, nv);
  return res;
}

}  // namespace loopdyn
