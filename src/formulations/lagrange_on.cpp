#include "loopdyn/formulations/lagrange_on.hpp"

namespace loopdyn {

LagrangeOn::LagrangeOn(const Model& model, const FormulationSettings& settings)
    : LoopFormulation(model, settings), aba_(model), forces_(model), eta_(model.nv), load_(model.nv),
      rhs_(constraints().rows()), zeta_(model.nv, constraints().rows()),
      A_(constraints().rows(), constraints().rows()) {}

void LagrangeOn::accelerations(double t, const VecX& q, const VecX& u, Eigen::Ref<VecX> udot) {
  aba_factor(model_, aba_, q);
  aba_velocity(model_, aba_, q, u);
  evaluate_forces(model_, aba_.kin, t, q, u, forces_);
  // η: the tree's accelerations under the applied forces (000 eqs 24, 26, 27).
  aba_solve(model_, aba_, forces_.applied.tau, &forces_.f_body, Bias::yes, eta_);
  udot = eta_;
  const int m = constraints().rows();
  if (m == 0) return;
  evaluate_constraints(aba_.kin, u);
  // ζ e_r: response to the unit constraint load −Gᵀ e_r (000 eqs 25, 28, 29).
  for (int r = 0; r < m; ++r) {
    load_ = -G_.row(r).transpose();
    aba_solve(model_, aba_, load_, nullptr, Bias::no, zeta_.col(r));
  }
  // [G ζ] λ = γ̄ − G η (000 eq 32), solved as (−G ζ) λ = G η − γ̄ with −G ζ = G M⁻¹ Gᵀ ⪰ 0.
  A_.noalias() = -G_ * zeta_;
  rhs_.noalias() = G_ * eta_;
  rhs_ -= gamma_;
  solve_multipliers(t, A_, rhs_);
  udot.noalias() += zeta_ * lambda_;  // u̇ = η + ζ λ (000 eq 13)
}

}  // namespace loopdyn
