// Tree dynamics: RNEA, CRBA and the articulated-body algorithm (Featherstone, Rigid Body Dynamics
// Algorithms, Tables 5.1, 6.2, 7.1; the ABA is Jain 002 eq 42 and Algorithm 6.1 (eq 49), in the
// notation map of docs/methods.md).
// Gravity enters as a base acceleration a_ground = [0; −g]. Every loop visits the joint variant
// once so that the kernels run with the joint's fixed number of speeds NV.
#include "loopdyn/tree_dynamics.hpp"

#include <Eigen/Cholesky>
#include <stdexcept>

namespace loopdyn {

namespace {

template <class F>
void for_joint(const Model& model, int i, F&& f) {
  std::visit([&](const auto& k) { f(std::integral_constant<int, std::decay_t<decltype(k)>::nv>{}); },
             model.joints[i].joint);
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

}  // namespace

AbaData::AbaData(const Model& model)
    : kin(model), Ia(model.nbodies), Ia_proj(model.nbodies), U(Mat6X::Zero(6, model.nv)),
      Dinv(model.nbodies, Mat6::Zero()), pv(model.nbodies), pa(model.nbodies), a(model.nbodies),
      tau_eff(VecX::Zero(model.nv)) {}

void aba_factor(const Model& model, AbaData& d, const Eigen::Ref<const VecX>& q) {
  update_positions(model, d.kin, q);
  for (int i = 0; i < model.nbodies; ++i) d.Ia[i] = model.inertia[i];
  for (int i = model.nbodies - 1; i >= 0; --i) {
    for_joint(model, i, [&](auto nv) {
      constexpr int NV = decltype(nv)::value;
      d.Ia_proj[i] = d.Ia[i];
      if constexpr (NV > 0) {
        const auto S = d.kin.S.template middleCols<NV>(model.v_index[i]);
        auto U = d.U.template middleCols<NV>(model.v_index[i]);
        // U = Ia S, D = Sᵀ U, Ia_proj = Ia − U D⁻¹ Uᵀ (Featherstone Table 7.1; Jain 002 eq 42).
        U.noalias() = d.Ia[i] * S;
        const Eigen::Matrix<double, NV, NV> D = S.transpose() * U;
        const Eigen::LLT<Eigen::Matrix<double, NV, NV>> llt(D);
        if (llt.info() != Eigen::Success || !D.allFinite())
          throw std::runtime_error("articulated inertia is singular at joint '" + model.joints[i].name +
                                   "' (the bodies it carries have no inertia along its motion)");
        auto Dinv = d.Dinv[i].template topLeftCorner<NV, NV>();
        Dinv = llt.solve(Eigen::Matrix<double, NV, NV>::Identity());
        d.Ia_proj[i].noalias() -= U * Dinv * U.transpose();
      }
    });
    const int p = model.parent[i];
    if (p >= 0) d.Ia[p] += d.kin.X_parent[i].act_inertia(d.Ia_proj[i]);
  }
}

void aba_velocity(const Model& model, AbaData& d, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& u) {
  update_velocities(model, d.kin, q, u);
  // pv = v ×* I v.
  for (int i = 0; i < model.nbodies; ++i) d.pv[i] = cross_force(d.kin.v[i], model.inertia[i] * d.kin.v[i]);
}

void aba_solve(const Model& model, AbaData& d, const Eigen::Ref<const VecX>& tau, const Mat6X* fext, Bias bias,
               Eigen::Ref<VecX> udot) {
  const bool with_bias = bias == Bias::yes;
  const int last = last_loaded_body(model, tau, fext, bias);
  for (int i = 0; i <= last; ++i) d.pa[i] = (with_bias ? d.pv[i] : Vec6::Zero()) - fext_col(fext, i);
  const int v_end = last < 0 ? 0 : model.v_index[last] + model.nv_joint[last];
  d.tau_eff.tail(model.nv - v_end).setZero();
  // Backward: τ_eff = τ − Sᵀ pa; pa_parent += X*(pa + Ia_proj c + U D⁻¹ τ_eff).
  for (int i = last; i >= 0; --i) {
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
  const Vec6 a_ground = ground_acceleration(model, Bias::yes);
  // Forward: a = X⁻¹ a_parent + S u̇ + c; f = I a + v ×* I v − fext (Featherstone Table 5.1).
  for (int i = 0; i < model.nbodies; ++i) {
    const int p = model.parent[i];
    Vec6 ai = d.kin.X_parent[i].inv_act_motion(p < 0 ? a_ground : d.a[p]) + d.kin.c[i];
    for_joint(model, i, [&](auto nv) {
      constexpr int NV = decltype(nv)::value;
      if constexpr (NV > 0) {
        const int vi = model.v_index[i];
        ai.noalias() += d.kin.S.template middleCols<NV>(vi) * udot.template segment<NV>(vi);
      }
    });
    d.a[i] = ai;
    const Vec6 h = model.inertia[i] * d.kin.v[i];
    d.f[i].noalias() = model.inertia[i] * ai;
    d.f[i] += cross_force(d.kin.v[i], h) - fext_col(fext, i);
  }
  // Backward: τ = Sᵀ f; f_parent += X* f.
  for (int i = model.nbodies - 1; i >= 0; --i) {
    for_joint(model, i, [&](auto nv) {
      constexpr int NV = decltype(nv)::value;
      if constexpr (NV > 0) {
        const int vi = model.v_index[i];
        tau.template segment<NV>(vi).noalias() = d.kin.S.template middleCols<NV>(vi).transpose() * d.f[i];
      }
    });
    const int p = model.parent[i];
    if (p >= 0) d.f[p] += d.kin.X_parent[i].act_force(d.f[i]);
  }
}

CrbaData::CrbaData(const Model& model) : kin(model), Ic(model.nbodies) {}

void crba(const Model& model, CrbaData& d, const Eigen::Ref<const VecX>& q, Eigen::Ref<MatX> M) {
  update_positions(model, d.kin, q);
  M.setZero();
  for (int i = 0; i < model.nbodies; ++i) d.Ic[i] = model.inertia[i];
  // Composite inertias: Ic_parent += X* Ic X⁻¹ (Featherstone Table 6.2).
  for (int i = model.nbodies - 1; i >= 0; --i) {
    const int p = model.parent[i];
    if (p >= 0) d.Ic[p] += d.kin.X_parent[i].act_inertia(d.Ic[i]);
  }
  // Column block of joint i: F = Ic S_i carried up the ancestors j, M_ji = S_jᵀ F.
  for (int i = 0; i < model.nbodies; ++i) {
    for_joint(model, i, [&](auto nv) {
      constexpr int NV = decltype(nv)::value;
      if constexpr (NV > 0) {
        const int vi = model.v_index[i];
        Eigen::Matrix<double, 6, NV> F = d.Ic[i] * d.kin.S.template middleCols<NV>(vi);
        M.template block<NV, NV>(vi, vi).noalias() = d.kin.S.template middleCols<NV>(vi).transpose() * F;
        for (int j = i; model.parent[j] >= 0;) {
          for (int col = 0; col < NV; ++col) F.col(col) = d.kin.X_parent[j].act_force(F.col(col));
          j = model.parent[j];
          const int vj = model.v_index[j], nvj = model.nv_joint[j];
          M.block(vj, vi, nvj, NV).noalias() = d.kin.S.middleCols(vj, nvj).transpose() * F;
          M.block(vi, vj, NV, nvj) = M.block(vj, vi, nvj, NV).transpose();
        }
      }
    });
  }
}

}  // namespace loopdyn
