// Tree dynamics: RNEA, CRBA and the articulated-body algorithm (Featherstone, Rigid Body Dynamics
// Algorithms, Tables 5.1, 6.2, 7.1; the ABA is Jain 002 eq 42 and Algorithm 6.1 (eq 49), in the
// notation map of docs/methods.md).
// Gravity enters as a base acceleration a_ground = [0; −g]. Every loop visits the joint variant
// once so that the kernels run with the joint's fixed number of speeds NV.
#include "loopdyn/core/tree_dynamics.hpp"

#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace loopdyn {

namespace {

// f(integral_constant<NV>) for joint i's number of speeds, by a switch: through std::visit's table
// of function pointers the sweeps' bodies stayed out-of-line and kept their 6-vectors on the
// stack.
template <class F>
void for_joint(const Model& model, int i, F&& f) {
  switch (model.nv_joint[i]) {
    case 0: return f(std::integral_constant<int, 0>{});
    case 1: return f(std::integral_constant<int, 1>{});
    case 2: return f(std::integral_constant<int, 2>{});
    case 3: return f(std::integral_constant<int, 3>{});
    case 6: return f(std::integral_constant<int, 6>{});
    default: throw std::logic_error("for_joint: a joint with " + std::to_string(model.nv_joint[i]) + " speeds");
  }
}

// Spatial acceleration of the ground expressed in body i's parent frame for a root body.
Vec6 ground_acceleration(const Model& model, Bias bias) {
  Vec6 a = Vec6::Zero();
  if (bias == Bias::yes) a.tail<3>() = -model.gravity;
  return a;
}

Vec6 fext_col(const Mat6X* fext, int i) { return fext ? Vec6(fext->col(i)) : Vec6::Zero(); }

// Last body that carries a load in aba_solve. Without bias and body forces only the joint forces
// load the tree; the bodies after the last nonzero τ (and their subtrees, which come after them)
// then keep pa = 0 and τ_eff = 0, and the backward sweep can start at that body.
int last_loaded_body(const Model& model, const Eigen::Ref<const VecX>& tau, const Mat6X* fext, Bias bias) {
  if (bias == Bias::yes || fext) return model.nbodies - 1;
  for (int k = model.nv - 1; k >= 0; --k)
    if (tau(k) != 0.0) return model.v_body[k];
  return -1;
}

AggregatedBodyData* aggregated(AggregatedTreeData* tree, int body) {
  if (!tree) return nullptr;
  const int n = tree->node_of_body[body];
  return n < 0 ? nullptr : &tree->nodes[n];
}

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
// (1 on a ladder cell).
void factor_aggregated(const Model& model, AbaData& d, AggregatedBodyData& g) {
  const int nb = static_cast<int>(g.bodies.size());
  const int nbeta = static_cast<int>(g.X.cols());
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
  if (nbeta == 1) {  // a ladder cell: through the dynamic Wt, 470 instructions more per cell
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
void bias_aggregated(const Model& model, AbaData& d, AggregatedBodyData& g, const Eigen::Ref<const VecX>& tau,
                     bool with_bias) {
  const int nb = static_cast<int>(g.bodies.size());
  const int nbeta = static_cast<int>(g.X.cols());
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

std::runtime_error singular_joint(const Model& model, int i) {
  const std::string& where = model.joints[i].where;
  return std::runtime_error((where.empty() ? "" : where + ": ") + "articulated inertia is singular at joint '" +
                            model.joints[i].name + "' (the bodies it carries have no inertia along its motion)");
}

// Table 7.1's U = Ia S, D = Sᵀ U and Ia_proj = Ia − U D⁻¹ Uᵀ for S = e_k (ModelJoint::unit_axis):
// U is column k of Ia and D its k-th entry, with no product. Ia_proj is formed column by column
// from a fixed-size copy of U: from the column of the dynamic d.U, Eigen took its generic
// outer-product path (31 instructions a body more on chain-128, and 2-4 % of the ABA's time).
void project_unit_axis(const Model& model, AbaData& d, int i) {
  const Vec6 U = d.Ia[i].col(model.joints[i].unit_axis);
  const double D = U(model.joints[i].unit_axis);
  if (!(D > 0.0) || !std::isfinite(D)) throw singular_joint(model, i);
  const double Dinv = 1.0 / D;
  d.U.col(model.v_index[i]) = U;
  d.Dinv[i](0, 0) = Dinv;
  const Vec6 W = Dinv * U;
  for (int c = 0; c < 6; ++c) d.Ia_proj[i].col(c) = d.Ia[i].col(c) - W * U(c);
}

// Backward sweep of articulated inertias (Featherstone Table 7.1; Jain 002 eq 42, and eq 50 at
// an aggregated body, which is visited at its top body, after every body below it).
void factor_sweep(const Model& model, AbaData& d, AggregatedTreeData* tree) {
  for (int i = 0; i < model.nbodies; ++i) d.Ia[i] = model.inertia[i];
  for (int i = model.nbodies - 1; i >= 0; --i) {
    if (AggregatedBodyData* g = aggregated(tree, i)) {
      if (i == g->bodies.front()) factor_aggregated(model, d, *g);
      continue;
    }
    for_joint(model, i, [&](auto nv) {
      constexpr int NV = decltype(nv)::value;
      if constexpr (NV == 0) d.Ia_proj[i] = d.Ia[i];
      if constexpr (NV == 1) {
        if (model.joints[i].unit_axis >= 0) return project_unit_axis(model, d, i);
      }
      if constexpr (NV > 0) {
        const auto S = d.kin.S.template middleCols<NV>(model.v_index[i]);
        auto U = d.U.template middleCols<NV>(model.v_index[i]);
        // U = Ia S, D = Sᵀ U, Ia_proj = Ia − U D⁻¹ Uᵀ (Featherstone Table 7.1; Jain 002 eq 42).
        U.noalias() = d.Ia[i] * S;
        const Eigen::Matrix<double, NV, NV> D = S.transpose() * U;
        const Eigen::LLT<Eigen::Matrix<double, NV, NV>> llt(D);
        if (llt.info() != Eigen::Success || !D.allFinite()) throw singular_joint(model, i);
        auto Dinv = d.Dinv[i].template topLeftCorner<NV, NV>();
        Dinv = llt.solve(Eigen::Matrix<double, NV, NV>::Identity());
        d.Ia_proj[i].noalias() = d.Ia[i] - U * Dinv * U.transpose();
      }
    });
    const int p = model.parent[i];
    if (p >= 0) d.Ia[p] += d.kin.X_parent[i].act_inertia(d.Ia_proj[i]);
  }
}

// Articulated bias forces tip to base, accelerations base to tip (Featherstone Table 7.1; Jain 002
// Algorithm 6.1, and eqs 54-57 at an aggregated body).
void solve_sweep(const Model& model, AbaData& d, AggregatedTreeData* tree, const Eigen::Ref<const VecX>& tau,
                 const Mat6X* fext, Bias bias, Eigen::Ref<VecX> udot) {
  const bool with_bias = bias == Bias::yes;
  const int last = tree ? model.nbodies - 1 : last_loaded_body(model, tau, fext, bias);
  for (int i = 0; i <= last; ++i) d.pa[i] = (with_bias ? d.pv[i] : Vec6::Zero()) - fext_col(fext, i);
  const int v_end = last < 0 ? 0 : model.v_index[last] + model.nv_joint[last];
  d.tau_eff.tail(model.nv - v_end).setZero();
  // Backward: τ_eff = τ − Sᵀ pa; pa_parent += X*(pa + Ia_proj c + U D⁻¹ τ_eff).
  for (int i = last; i >= 0; --i) {
    if (AggregatedBodyData* g = aggregated(tree, i)) {
      if (i == g->bodies.front()) bias_aggregated(model, d, *g, tau, with_bias);
      continue;
    }
    const int p = model.parent[i];
    for_joint(model, i, [&](auto nv) {
      constexpr int NV = decltype(nv)::value;
      const int vi = model.v_index[i];
      Vec6 pp = d.pa[i];
      if constexpr (NV > 0) {
        auto te = d.tau_eff.template segment<NV>(vi);
        te.noalias() = tau.template segment<NV>(vi) - d.kin.S.template middleCols<NV>(vi).transpose() * d.pa[i];
        pp.noalias() += d.U.template middleCols<NV>(vi) * (d.Dinv[i].template topLeftCorner<NV, NV>() * te);
      }
      if (p < 0) return;
      if (with_bias) pp.noalias() += d.Ia_proj[i] * d.kin.c[i];
      d.pa[p] += d.kin.X_parent[i].act_force(pp);
    });
  }
  // Forward: a' = X⁻¹ a_parent + c; u̇ = D⁻¹(τ_eff − Uᵀ a'); a = a' + S u̇.
  const Vec6 a_ground = ground_acceleration(model, bias);
  for (int i = 0; i < model.nbodies; ++i) {
    if (AggregatedBodyData* g = aggregated(tree, i)) {
      if (i == g->bodies.front()) accelerate_aggregated(model, d, *g, a_ground, with_bias, udot);
      continue;
    }
    const int p = model.parent[i];
    Vec6 ai = d.kin.X_parent[i].inv_act_motion(p < 0 ? a_ground : d.a[p]);
    if (with_bias) ai += d.kin.c[i];
    for_joint(model, i, [&](auto nv) {
      constexpr int NV = decltype(nv)::value;
      if constexpr (NV > 0) {
        const int vi = model.v_index[i];
        auto ud = udot.template segment<NV>(vi);
        ud.noalias() = d.Dinv[i].template topLeftCorner<NV, NV>() *
                       (d.tau_eff.template segment<NV>(vi) - d.U.template middleCols<NV>(vi).transpose() * ai);
        ai.noalias() += d.kin.S.template middleCols<NV>(vi) * ud;
      }
    });
    d.a[i] = ai;
  }
}

}  // namespace

AggregatedBodyData::AggregatedBodyData(const Model& model, std::vector<int> bodies_in)
    : bodies(std::move(bodies_in)), C(bodies.size()), abar(bodies.size()), z(bodies.size()) {
  parent_body = model.parent[bodies.front()];
  for (int b : bodies) {
    const auto it = std::find(bodies.begin(), bodies.end(), model.parent[b]);
    local_parent.push_back(it == bodies.end() ? -1 : static_cast<int>(it - bodies.begin()));
    first.push_back(static_cast<int>(speeds.size()));
    for (int k = 0; k < model.nv_joint[b]; ++k) speeds.push_back(model.v_index[b] + k);
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

AbaData::AbaData(const Model& model)
    : kin(model), Ia(model.nbodies), Ia_proj(model.nbodies), U(Mat6X::Zero(6, model.nv)),
      Dinv(model.nbodies, Mat6::Zero()), pv(model.nbodies), pa(model.nbodies), a(model.nbodies),
      tau_eff(VecX::Zero(model.nv)) {}

void aba_factor(const Model& model, AbaData& d, const Eigen::Ref<const VecX>& q) {
  update_positions(model, d.kin, q);
  factor_sweep(model, d, nullptr);
}

void aba_factor(const Model& model, AbaData& d, AggregatedTreeData& tree) { factor_sweep(model, d, &tree); }

void aba_velocity(const Model& model, AbaData& d, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& u) {
  update_velocities(model, d.kin, q, u);
  aba_velocity_products(model, d);
}

void aba_velocity_products(const Model& model, AbaData& d) {
  // pv = v ×* I v.
  for (int i = 0; i < model.nbodies; ++i) d.pv[i] = cross_force(d.kin.v[i], model.inertia[i] * d.kin.v[i]);
}

void aba_solve(const Model& model, AbaData& d, const Eigen::Ref<const VecX>& tau, const Mat6X* fext, Bias bias,
               Eigen::Ref<VecX> udot) {
  solve_sweep(model, d, nullptr, tau, fext, bias, udot);
}

void aba_solve(const Model& model, AbaData& d, AggregatedTreeData& tree, const Eigen::Ref<const VecX>& tau,
               const Mat6X* fext, Bias bias, Eigen::Ref<VecX> udot) {
  solve_sweep(model, d, &tree, tau, fext, bias, udot);
}

void aggregated_loop_forces(const Model& model, const AbaData& d, const AggregatedBodyData& g,
                            const Eigen::Ref<const VecX>& tau, std::vector<Vec6>& force, Eigen::Ref<VecX> rho) {
  const int nb = static_cast<int>(g.bodies.size());
  for (int j = 0; j < nb; ++j) force[j] = d.Ia[g.bodies[j]] * d.a[g.bodies[j]] + d.pa[g.bodies[j]];
  for (int j = nb - 1; j >= 0; --j) {
    const int b = g.bodies[j], nv = model.nv_joint[b];
    rho.segment(g.first[j], nv).noalias() =
        tau.segment(model.v_index[b], nv) - d.kin.S.middleCols(model.v_index[b], nv).transpose() * force[j];
    if (g.local_parent[j] >= 0) force[g.local_parent[j]] += d.kin.X_parent[b].act_force(force[j]);
  }
}

void aba(const Model& model, AbaData& d, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& u,
         const Eigen::Ref<const VecX>& tau, const Mat6X* fext, Eigen::Ref<VecX> udot) {
  aba_factor(model, d, q);
  aba_velocity(model, d, q, u);
  aba_solve(model, d, tau, fext, Bias::yes, udot);
}

RneaData::RneaData(const Model& model) : kin(model), a(model.nbodies), f(model.nbodies) {}

void rnea(const Model& model, RneaData& d, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& u,
          const Eigen::Ref<const VecX>& udot, const Mat6X* fext, Eigen::Ref<VecX> tau) {
  update_positions(model, d.kin, q);
  update_velocities(model, d.kin, q, u);
  rnea(model, d.kin, d, udot, fext, tau);
}

void rnea(const Model& model, const KinematicsData& kin, RneaData& d, const Eigen::Ref<const VecX>& udot,
          const Mat6X* fext, Eigen::Ref<VecX> tau) {
  const Vec6 a_ground = ground_acceleration(model, Bias::yes);
  // Forward: a = X⁻¹ a_parent + S u̇ + c; f = I a + v ×* I v − fext (Featherstone Table 5.1).
  for (int i = 0; i < model.nbodies; ++i) {
    const int p = model.parent[i];
    Vec6 ai = kin.X_parent[i].inv_act_motion(p < 0 ? a_ground : d.a[p]) + kin.c[i];
    for_joint(model, i, [&](auto nv) {
      constexpr int NV = decltype(nv)::value;
      if constexpr (NV > 0) {
        const int vi = model.v_index[i];
        ai.noalias() += kin.S.template middleCols<NV>(vi) * udot.template segment<NV>(vi);
      }
    });
    d.a[i] = ai;
    const Vec6 h = model.inertia[i] * kin.v[i];
    d.f[i].noalias() = model.inertia[i] * ai;
    d.f[i] += cross_force(kin.v[i], h) - fext_col(fext, i);
  }
  // Backward: τ = Sᵀ f; f_parent += X* f.
  for (int i = model.nbodies - 1; i >= 0; --i) {
    for_joint(model, i, [&](auto nv) {
      constexpr int NV = decltype(nv)::value;
      if constexpr (NV > 0) {
        const int vi = model.v_index[i];
        tau.template segment<NV>(vi).noalias() = kin.S.template middleCols<NV>(vi).transpose() * d.f[i];
      }
    });
    const int p = model.parent[i];
    if (p >= 0) d.f[p] += kin.X_parent[i].act_force(d.f[i]);
  }
}

CrbaData::CrbaData(const Model& model) : kin(model), Ic(model.nbodies) {}

void crba(const Model& model, CrbaData& d, const Eigen::Ref<const VecX>& q, Eigen::Ref<MatX> M) {
  update_positions(model, d.kin, q);
  crba(model, d.kin, d, M);
}

void crba(const Model& model, const KinematicsData& kin, CrbaData& d, Eigen::Ref<MatX> M) {
  M.setZero();
  for (int i = 0; i < model.nbodies; ++i) d.Ic[i] = model.inertia[i];
  // Composite inertias: Ic_parent += X* Ic X⁻¹ (Featherstone Table 6.2).
  for (int i = model.nbodies - 1; i >= 0; --i) {
    const int p = model.parent[i];
    if (p >= 0) d.Ic[p] += kin.X_parent[i].act_inertia(d.Ic[i]);
  }
  // Column block of joint i: F = Ic S_i carried up the ancestors j, M_ji = S_jᵀ F.
  for (int i = 0; i < model.nbodies; ++i) {
    for_joint(model, i, [&](auto nv) {
      constexpr int NV = decltype(nv)::value;
      if constexpr (NV > 0) {
        const int vi = model.v_index[i];
        Eigen::Matrix<double, 6, NV> F = d.Ic[i] * kin.S.template middleCols<NV>(vi);
        M.template block<NV, NV>(vi, vi).noalias() = kin.S.template middleCols<NV>(vi).transpose() * F;
        for (int j = i; model.parent[j] >= 0;) {
          for (int col = 0; col < NV; ++col) F.col(col) = kin.X_parent[j].act_force(F.col(col));
          j = model.parent[j];
          const int vj = model.v_index[j], nvj = model.nv_joint[j];
          M.block(vj, vi, nvj, NV).noalias() = kin.S.middleCols(vj, nvj).transpose() * F;
          M.block(vi, vj, NV, nvj) = M.block(vj, vi, nvj, NV).transpose();
        }
      }
    });
  }
}

}  // namespace loopdyn
