#include "loopdyn/formulations/lagrange_on.hpp"

namespace loopdyn {

namespace {

// Columns [first, end) holding every nonzero of row r of G (empty for a zero row). G is zero off
// the tree path of the row's loop (constraints.cpp), so products with G cost O(path) per row.
std::pair<int, int> row_support(const MatX& G, int r) {
  int first = 0, end = static_cast<int>(G.cols());
  while (first < end && G(r, first) == 0.0) ++first;
  while (end > first && G(r, end - 1) == 0.0) --end;
  return {first, end};
}

}  // namespace

LagrangeOn::LagrangeOn(const Model& model, const FormulationSettings& settings)
    : LagrangeFormulation(model, settings), aba_(model), forces_(model), eta_(model.nv), load_(VecX::Zero(model.nv)),
      rhs_(constraints().rows()), zeta_(model.nv, constraints().rows()),
      A_(constraints().rows(), constraints().rows()), support_(constraints().rows()) {}

void LagrangeOn::accelerations(double t, const VecX& q, const VecX& u, Eigen::Ref<VecX> udot) {
  aba_factor(model_, aba_, q);
  aba_velocity(model_, aba_, q, u);
  evaluate_forces(model_, aba_.kin, t, q, u, forces_);
  // η: the tree's accelerations under the applied forces (000 eqs 24, 26, 27).
  aba_solve(model_, aba_, forces_.applied.tau, &forces_.f_body, Bias::yes, eta_);
  udot = eta_;
  const int m = constraints().rows();
  if (m == 0) return;
  evaluate_constraints(t, aba_.kin, u);
  // ζ e_r: response to the unit constraint load −Gᵀ e_r (000 eqs 25, 28, 29); load_ is zero
  // outside the row's support.
  for (int r = 0; r < m; ++r) {
    support_[r] = row_support(G_, r);
    const auto [first, end] = support_[r];
    load_.segment(first, end - first) = -G_.row(r).segment(first, end - first).transpose();
    aba_solve(model_, aba_, load_, nullptr, Bias::no, zeta_.col(r));
    load_.segment(first, end - first).setZero();
  }
  // [G ζ] λ = γ̄ − G η (000 eq 32), solved as (−G ζ) λ = G η − γ̄ with −G ζ = G M⁻¹ Gᵀ ⪰ 0,
  // row by row over the support of G's row.
  for (int r = 0; r < m; ++r) {
    const auto [first, end] = support_[r];
    const auto g = G_.row(r).segment(first, end - first);
    A_.row(r).noalias() = -g * zeta_.middleRows(first, end - first);
    rhs_(r) = g.dot(eta_.segment(first, end - first)) - gamma_(r);
  }
  solve_multipliers(t, A_, rhs_);
  udot.noalias() += zeta_ * lambda_;  // u̇ = η + ζ λ (000 eq 13)
}

}  // namespace loopdyn
