// The aggregated body's steps of the articulated-body sweeps (Jain 002 eqs 50-57; the ABA around
// them is tree_dynamics.cpp's). In a translation unit of their own: compiled beside the tree's
// sweeps, their templates changed GCC's inlining there, and a 6x6 product of tree ABA's backward
// sweep went out of line (callgrind, tree on ladder-serial/64).
#include "core/aggregated_sweep.hpp"

#include <Eigen/Cholesky>
#include <algorithm>
#include <stdexcept>
#include <string>

namespace loopdyn {

namespace {

// D_S (eq 51, lower triangle of g.D) factored as L Lᵀ; one independent speed (a ladder cell, a
// geared joint) keeps D_S itself. D_S⁻¹ is never formed: on a floppy chain hanging from one body
// (paper 003's square chain, 256 bars in motion) G = U D⁻¹ and ν = D⁻¹ ε through an explicit
// inverse carried cond(D_S) ε into the hand-over to the body it hangs from, whose acceleration was
// 1.3e-7 relative off; the speeds were 1.0e-8 off a long-double solve of the same equations, 20
// times what one rounding of the data moves it, and are 2.6e-10 with solves, as the other methods'
// (tests/test_embedding.cpp, FloppyChainInMotionKeepsItsDigits).
void factor_d(AggregatedBodyData& g, const Model& model) {
  const bool regular = g.D.rows() == 1 ? g.D(0, 0) > 0.0 : (g.llt.compute(g.D), g.llt.info() == Eigen::Success);
  if (!regular || !g.D.allFinite())
    throw std::runtime_error("articulated inertia of the aggregated body of '" + model.body_name[g.bodies.front()] +
                             "' is singular along its independent speeds");
}

// x ← D_S⁻¹ x by the factor (column by column: a matrix solve allocates Eigen's blocking space).
template <class Vector>
void solve_d(const AggregatedBodyData& g, Vector&& x) {
  if (g.D.rows() == 1) x /= g.D(0, 0);
  else g.llt.solveInPlace(x);
}

// τ̄_S P_S = C − U D⁻¹ Uᵀ (eq 50) with C = Σ φ P φ* in g.Ia_proj. The difference can cancel most of
// C: on a mechanism hanging from p, little of its composite inertia resists p's motion (square net
// 16 x 16 hanging from its first bar: 26.7 of 94293 left about that bar's axis). Through an
// explicit D⁻¹, U D⁻¹ Uᵀ carried cond(D) ε of C's size, and the net's accelerations were 1e-9 to
// 3e-8 relative off; as C − W Wᵀ with W = U L⁻ᵀ, D = L Lᵀ (column by column: a matrix solve
// allocates Eigen's blocking space), it is symmetric and the net's are within 5e-12 of
// lagrange-dense's (tests/test_embedding.cpp, NetOfLoopsKeepsItsDigits).
void subtract_projected_inertia(AggregatedBodyData& g) {
  const Eigen::Index nbeta = g.D.rows();
  if (nbeta == 1) {
    g.Ia_proj.noalias() -= Vec6(g.G.col(0)) * Vec6(g.U.col(0)).transpose();
    return;
  }
  g.Wt = g.U.transpose();
  for (int c = 0; c < 6; ++c) {
    auto column = g.Wt.col(c);
    g.llt.matrixL().solveInPlace(column);
  }
  for (int c = 0; c < 6; ++c)
    for (int r = 0; r < 6; ++r) g.Ia_proj(r, c) -= g.Wt.col(r).dot(g.Wt.col(c));
}

// Eq 50 for aggregated body S hanging from p: P_S of its bodies (their articulated inertias,
// children included, block diagonal over the bodies), D_S = H_RSᵀ P_S H_RS (eq 51), and
// τ̄_S P_S = Σ φ P φ* − G Uᵀ (subtract_projected_inertia) with U = Σ φ P H carried to p's frame
// and G = U D⁻¹. Small fixed-size kernels column by column: nβ is the aggregated body's mobility
// (1 on a ladder cell). NB is nβ when fixed at compile time (1), Eigen::Dynamic otherwise: with one
// independent speed the loops over the columns unroll.
template <int NB>
void factor_node(const Model& model, AbaData& d, AggregatedBodyData& g) {
  const int nb = static_cast<int>(g.bodies.size());
  const int nbeta = NB == Eigen::Dynamic ? static_cast<int>(g.X.cols()) : NB;
  if (g.U.cols() != nbeta) {
    g.H.resize(6, nb * nbeta);
    g.F.resize(6, nb * nbeta);
    g.U.resize(6, nbeta);
    g.G.resize(6, nbeta);
    g.D.resize(nbeta, nbeta);
    g.Wt.resize(nbeta, 6);
    g.eps.resize(nbeta);
    g.nu.resize(nbeta);
  }
  // H of each body from the top down: H_b = φ* H_parent + S_b X_b (eq 29 with eq 25).
  for (int j = 0; j < nb; ++j) {
    const int b = g.bodies[j], lp = g.local_parent[j], vb = model.v_index[b];
    for (int c = 0; c < nbeta; ++c) {
      Vec6 h = lp >= 0 ? d.kin.X_parent[b].inv_act_motion(g.H.col(lp * nbeta + c)) : Vec6::Zero();
      for (int k = 0; k < model.nv_joint[b]; ++k) h += d.kin.S.col(vb + k) * g.X(g.first[j] + k, c);
      g.H.col(j * nbeta + c) = h;
    }
  }
  // Bottom up: D = Σ Hᵀ P H; C and F gather P and P H towards the top, then into p's frame. Each
  // sum starts at its first contribution (first_into_parent), written in place: zeroing the 6 x 6
  // blocks first, then copying into them, were a quarter of this function's time on the ladder
  // cells (perf: `rep stos`, `rep movsq`).
  g.D.setZero();
  for (int j = nb - 1; j >= 0; --j) {
    const int b = g.bodies[j], lp = g.local_parent[j];
    const bool inner = g.has_children[j], first = g.first_into_parent[j];
    const Transform& X = d.kin.X_parent[b];
    for (int c = 0; c < nbeta; ++c) {
      const Vec6 own = d.Ia[b] * g.H.col(j * nbeta + c);
      for (int r = 0; r <= c; ++r) g.D(c, r) += g.H.col(j * nbeta + r).dot(own);  // lower triangle
      const Vec6 f = X.act_force(inner ? Vec6(g.F.col(j * nbeta + c) + own) : own);
      auto into = lp >= 0 ? g.F.col(lp * nbeta + c) : g.U.col(c);
      if (first) into = f;
      else into += f;
    }
    const Mat6& C = inner ? (g.C[j] += d.Ia[b]) : d.Ia[b];  // a leaf's is its own, uncopied
    Mat6& into = lp >= 0 ? g.C[lp] : g.Ia_proj;
    if (first) X.act_inertia(C, into);
    else into += X.act_inertia(C);
  }
  factor_d(g, model);
  if constexpr (NB == 1) {  // a ladder cell: through the dynamic Wt, 470 instructions more per cell
    g.G.col(0) = Vec6(g.U.col(0)) / g.D(0, 0);
  } else {
    g.Wt = g.U.transpose();  // Gᵀ = D⁻¹ Uᵀ
    for (int c = 0; c < 6; ++c) solve_d(g, g.Wt.col(c));
    g.G = g.Wt.transpose();
  }
  subtract_projected_inertia(g);
  if (g.parent_body >= 0) d.Ia[g.parent_body] += g.Ia_proj;
}

// Eqs 54-55 at aggregated body S: a_S (abar) from the top down, z = P a_S + b summed towards the
// top, ε_S = Xᵀ τ_S − H_RSᵀ z (own terms of each body), ν_S = D⁻¹ ε_S, and the bias force
// passed to p: Σ φ z + G ε.
template <int NB>
void bias_node(const Model& model, AbaData& d, AggregatedBodyData& g, const Eigen::Ref<const VecX>& tau,
               bool with_bias) {
  const int nb = static_cast<int>(g.bodies.size());
  const int nbeta = NB == Eigen::Dynamic ? static_cast<int>(g.X.cols()) : NB;
  for (int j = 0; j < nb; ++j) {
    const int b = g.bodies[j], lp = g.local_parent[j], vb = model.v_index[b];
    Vec6& ab = g.abar[j];
    ab = lp >= 0 ? d.kin.X_parent[b].inv_act_motion(g.abar[lp]) : Vec6::Zero();
    if (!with_bias) continue;
    ab += d.kin.c[b];
    for (int k = 0; k < model.nv_joint[b]; ++k) ab += d.kin.S.col(vb + k) * g.x(g.first[j] + k);
  }
  for (int c = 0; c < nbeta; ++c) {
    double e = 0.0;
    for (std::size_t r = 0; r < g.speeds.size(); ++r) e += g.X(r, c) * tau(g.speeds[r]);
    g.eps(c) = e;
  }
  for (Vec6& z : g.z) z.setZero();
  Vec6 z_top = Vec6::Zero();
  for (int j = nb - 1; j >= 0; --j) {
    const int b = g.bodies[j], lp = g.local_parent[j];
    const Vec6 own = d.Ia[b] * g.abar[j] + d.pa[b];
    for (int c = 0; c < nbeta; ++c) g.eps(c) -= g.H.col(j * nbeta + c).dot(own);
    g.z[j] += own;
    (lp >= 0 ? g.z[lp] : z_top) += d.kin.X_parent[b].act_force(g.z[j]);
  }
  g.nu = g.eps;
  solve_d(g, g.nu);
  for (int c = 0; c < nbeta; ++c) z_top += g.G.col(c) * g.eps(c);
  if (g.parent_body >= 0) d.pa[g.parent_body] += z_top;
}

}  // namespace

namespace detail {

// NB = 1 for one independent speed (a ladder cell, a four-bar), Eigen::Dynamic otherwise.
void factor_aggregated(const Model& model, AbaData& d, AggregatedBodyData& g) {
  if (g.X.cols() == 1) factor_node<1>(model, d, g);
  else factor_node<Eigen::Dynamic>(model, d, g);
}

void bias_aggregated(const Model& model, AbaData& d, AggregatedBodyData& g, const Eigen::Ref<const VecX>& tau,
                     bool with_bias) {
  if (g.X.cols() == 1) bias_node<1>(model, d, g, tau, with_bias);
  else bias_node<Eigen::Dynamic>(model, d, g, tau, with_bias);
}

// Eq 56 at aggregated body S: θ̈_RS = ν − Gᵀ α_p, θ̈_S = X θ̈_RS + x, and the accelerations of
// its bodies from the top down.
void accelerate_aggregated(const Model& model, AbaData& d, AggregatedBodyData& g, const Vec6& a_ground, bool with_bias,
                           Eigen::Ref<VecX> udot) {
  const int nbeta = static_cast<int>(g.X.cols());
  const Vec6& ap = g.parent_body < 0 ? a_ground : d.a[g.parent_body];
  for (int c = 0; c < nbeta; ++c) g.nu(c) -= g.G.col(c).dot(ap);  // ν becomes θ̈_RS
  for (Eigen::Index r = 0; r < g.theta_dd.size(); ++r) {
    double v = with_bias ? g.x(r) : 0.0;
    for (int c = 0; c < nbeta; ++c) v += g.X(r, c) * g.nu(c);
    g.theta_dd(r) = v;
  }
  for (std::size_t j = 0; j < g.bodies.size(); ++j) {
    const int b = g.bodies[j], lp = g.local_parent[j], nv = model.nv_joint[b], vb = model.v_index[b];
    Vec6 ab = d.kin.X_parent[b].inv_act_motion(lp >= 0 ? d.a[g.bodies[lp]] : ap);
    if (with_bias) ab += d.kin.c[b];
    for (int k = 0; k < nv; ++k) ab += d.kin.S.col(vb + k) * g.theta_dd(g.first[j] + k);
    d.a[b] = ab;
    udot.segment(vb, nv) = g.theta_dd.segment(g.first[j], nv);
  }
}

}  // namespace detail

AggregatedBodyData::AggregatedBodyData(const Model& model, std::vector<int> bodies_in)
    : bodies(std::move(bodies_in)), C(bodies.size()), abar(bodies.size()), z(bodies.size()) {
  parent_body = model.parent[bodies.front()];
  for (int b : bodies) {
    const auto it = std::find(bodies.begin(), bodies.end(), model.parent[b]);
    local_parent.push_back(it == bodies.end() ? -1 : static_cast<int>(it - bodies.begin()));
    first.push_back(static_cast<int>(speeds.size()));
    model.append_speeds(b, speeds);
  }
  theta_dd.resize(speeds.size());
  // Bottom up (descending j) the first contribution into a slot comes from its largest child.
  const int n = static_cast<int>(bodies.size());
  has_children.assign(n, 0);
  first_into_parent.assign(n, 0);
  std::vector<char> seen(n + 1, 0);  // slot n: the top
  for (int j = n - 1; j >= 0; --j) {
    const int slot = local_parent[j] >= 0 ? local_parent[j] : n;
    first_into_parent[j] = !seen[slot];
    seen[slot] = 1;
    if (local_parent[j] >= 0) has_children[local_parent[j]] = 1;
  }
}

void aggregated_loop_forces(const Model& model, const AbaData& d, const AggregatedBodyData& g,
                            const Eigen::Ref<const VecX>& tau, std::vector<Vec6>& force, Eigen::Ref<VecX> rho) {
  const int nb = static_cast<int>(g.bodies.size());
  for (int j = 0; j < nb; ++j) force[j] = d.Ia[g.bodies[j]] * d.a[g.bodies[j]] + d.pa[g.bodies[j]];
  for (int j = nb - 1; j >= 0; --j) {
    const int b = g.bodies[j], vb = model.v_index[b];
    // Speed by speed: the dynamic Sᵀ F product went through Eigen's general matrix-vector kernel.
    for (int k = 0; k < model.nv_joint[b]; ++k) rho(g.first[j] + k) = tau(vb + k) - d.kin.S.col(vb + k).dot(force[j]);
    if (g.local_parent[j] >= 0) force[g.local_parent[j]] += d.kin.X_parent[b].act_force(force[j]);
  }
}

}  // namespace loopdyn
