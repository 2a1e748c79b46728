#include "loopdyn/formulations/lagrange_dense.hpp"

#include <sstream>

namespace loopdyn {

LagrangeDense::LagrangeDense(const Model& model, const FormulationSettings& settings)
    : LagrangeFormulation(model, settings), kin_(model), forces_(model), rnea_(model), crba_(model),
      mass_llt_(model.nv), M_(model.nv, model.nv), Y_(model.nv, constraints().rows()),
      A_(constraints().rows(), constraints().rows()), Q_(model.nv), MinvQ_(model.nv), rhs_(constraints().rows()),
      tmp_(model.nv), zero_(VecX::Zero(model.nv)) {}

void LagrangeDense::accelerations(double t, const VecX& q, const VecX& u, Eigen::Ref<VecX> udot) {
  update_positions(model_, kin_, q);
  update_velocities(model_, kin_, q, u);
  evaluate_forces(model_, kin_, t, q, u, forces_);
  // Q = τ − (C(q, u) − Jᵀ f_ext): RNEA at u̇ = 0 gives the bracket.
  rnea(model_, kin_, rnea_, zero_, &forces_.f_body, Q_);
  Q_ = forces_.applied.tau - Q_;
  crba(model_, kin_, crba_, M_);
  mass_llt_.compute(M_);
  if (mass_llt_.info() != Eigen::Success) {
    std::ostringstream s;
    s << "lagrange-dense: mass matrix not positive definite at t = " << t;
    throw std::runtime_error(s.str());
  }
  MinvQ_ = mass_llt_.solve(Q_);
  if (constraints().rows() > 0) {
    evaluate_constraints(t, kin_, u);
    schur_complement(mass_llt_, G_, Y_, A_);  // A = G M⁻¹ Gᵀ (001 eq 10, range-space elimination)
    rhs_.noalias() = G_ * MinvQ_;
    rhs_ -= gamma_;
    solve_multipliers(t, A_, rhs_);
  }
  // u̇ = M⁻¹ (Q − Gᵀ λ).
  tmp_ = Q_;
  if (constraints().rows() > 0) tmp_.noalias() -= G_.transpose() * lambda_;
  udot = mass_llt_.solve(tmp_);
}

}  // namespace loopdyn
