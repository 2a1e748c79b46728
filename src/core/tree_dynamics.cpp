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

#include "core/aggregated_sweep.hpp"

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
      if (i == g->bodies.front()) detail::factor_aggregated(model, d, *g);
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
      if (i == g->bodies.front()) detail::bias_aggregated(model, d, *g, tau, with_bias);
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
      if (i == g->bodies.front()) detail::accelerate_aggregated(model, d, *g, a_ground, with_bias, udot);
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
