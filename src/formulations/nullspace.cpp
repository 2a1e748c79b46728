#include "loopdyn/formulations/nullspace.hpp"

#include "loopdyn/loops/loop_structure.hpp"

namespace loopdyn {

Nullspace::Nullspace(const Model& model, const FormulationSettings& settings)
    : Formulation(model), rows_(model), cons_(rows_.constraints()), kin_(model),
      partition_(model, cons_, kin_, settings,
                 [this](double t, std::string message) { report(t, message.insert(0, "nullspace: ")); }),
      forces_(model), rnea_(model), crba_(model), M_(model.nv, model.nv), A_(model.nv, model.nv), Q_(model.nv),
      gamma_(cons_.rows()), rhs_(model.nv), b_(model.nv), lambda_(VecX::Zero(cons_.rows())),
      zero_(VecX::Zero(model.nv)), lu_(model.nv) {}

void Nullspace::complete_state(double t, Eigen::Ref<VecX> q, Eigen::Ref<VecX> u) { partition_.complete(t, q, u, false); }

void Nullspace::complete_accepted_state(double t, Eigen::Ref<VecX> q, Eigen::Ref<VecX> u) {
  if (choose_rows_again(rows_, t, q)) partition_.forget();  // other rows: a new analysis
  partition_.complete(t, q, u, true);
}

void Nullspace::accelerations(double t, const VecX& q_in, const VecX& u_in, Eigen::Ref<VecX> udot) {
  partition_.prepare(t, q_in, u_in);  // eqs 11-14
  const VecX& q = partition_.state_q();
  const VecX& u = partition_.state_u();
  const KinematicsData& kin = partition_.kinematics();
  evaluate_forces(model_, kin, t, q, u, forces_);
  rnea(model_, kin, rnea_, zero_, &forces_.f_body, Q_);
  Q_ = forces_.applied.tau - Q_;  // Q = τ − (C − Jᵀ f_ext)
  crba(model_, kin, crba_, M_);
  const int r = partition_.rank(), ni = model_.nv - r;
  partition_.partial_velocity_matrix(B_);  // eq 18
  if (r > 0) constraint_bias(model_, cons_, kin, t, partition_.constraint_data(), gamma_);
  // Eq 21: rows 0..ni−1 Bᵀ M u̇ = Bᵀ Q (eq 20), rows ni.. G_R u̇ = γ_R (eq 4).
  A_.topRows(ni).noalias() = B_.transpose() * M_;
  rhs_.head(ni).noalias() = B_.transpose() * Q_;
  const MatX& G = partition_.jacobian();
  for (int i = 0; i < r; ++i) {
    A_.row(ni + i) = G.row(partition_.rows()[i]);
    rhs_(ni + i) = gamma_(partition_.rows()[i]);
  }
  lu_.compute(A_);
  udot = lu_.solve(rhs_);
  // Eqs 22-24: Gᵀλ = b = Q − M u̇, its D rows solved with the LU of G_RD.
  b_ = Q_;
  b_.noalias() -= M_ * udot;
  partition_.multipliers(b_, lambda_);
}

}  // namespace loopdyn
