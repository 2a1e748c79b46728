// `lagrange-dense`: joint-space mass matrix by CRBA and the (n+m) KKT system of paper 001 eq 10
// (the CS method with Baumgarte terms, eqs 6-9), solved by the range-space method:
//   M = L Lᵀ,  Y = L⁻¹ Gᵀ,  (Yᵀ Y) λ = G M⁻¹ Q − γ̄,  u̇ = M⁻¹ (Q − Gᵀ λ),
// with Q = τ − C(q, u) + Jᵀ f_ext. Cost O(n² ) (CRBA, Cholesky of M is O(n³) but cheap for the
// sizes where this is the right method) + O(n² m + n m²) + O(m³).
#pragma once

#include <Eigen/Cholesky>

#include "loopdyn/formulations/lagrange.hpp"
#include "loopdyn/core/tree_dynamics.hpp"

namespace loopdyn {

class LagrangeDense final : public LagrangeFormulation {
 public:
  LagrangeDense(const Model& model, const FormulationSettings& settings);
  std::string_view name() const override { return "lagrange-dense"; }
  void accelerations(double t, const VecX& q, const VecX& u, Eigen::Ref<VecX> udot) override;
  std::optional<double> applied_power() const override { return forces_.power; }

 private:
  KinematicsData kin_;
  ForceData forces_;
  RneaData rnea_;
  CrbaData crba_;
  Eigen::LLT<MatX> mass_llt_;
  MatX M_, Y_, A_;           ///< (nv x nv), (nv x m), (m x m)
  VecX Q_, MinvQ_, rhs_, tmp_, zero_;
};

}  // namespace loopdyn
