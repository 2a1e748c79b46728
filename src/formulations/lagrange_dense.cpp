#include "loopdyn/formulations/lagrange_dense.hpp"

#include <algorithm>
#include <sstream>

namespace loopdyn {

namespace {

// Consecutive rows of G whose triangular solves and products are done as one block.
constexpr int kBlock = 32;

// First nonzero column of row r of G (cols() for a zero row).
int first_nonzero(const MatX& G, int r) {
  int first = 0;
  while (first < G.cols() && G(r, first) == 0.0) ++first;
  return first;
}

}  // namespace

LagrangeDense::LagrangeDense(const Model& model, const FormulationSettings& settings)
    : LoopFormulation(model, settings), kin_(model), forces_(model), rnea_(model), crba_(model),
      mass_llt_(model.nv), M_(model.nv, model.nv), Y_(model.nv, constraints().rows()),
      A_(constraints().rows(), constraints().rows()), Q_(model.nv), MinvQ_(model.nv), rhs_(constraints().rows()),
      tmp_(model.nv), zero_(VecX::Zero(model.nv)) {}

void LagrangeDense::accelerations(double t, const VecX& q, const VecX& u, Eigen::Ref<VecX> udot) {
  update_positions(model_, kin_, q);
  update_velocities(model_, kin_, q, u);
  evaluate_forces(model_, kin_, t, q, u, forces_);
  // Q = τ − (C(q, u) − Jᵀ f_ext): RNEA at u̇ = 0 gives the bracket.
  rnea(model_, rnea_, q, u, zero_, &forces_.f_body, Q_);
  Q_ = forces_.applied.tau - Q_;
  crba(model_, crba_, q, M_);
  mass_llt_.compute(M_);
  if (mass_llt_.info() != Eigen::Success) {
    std::ostringstream s;
    s << "lagrange-dense: mass matrix not positive definite at t = " << t;
    throw std::runtime_error(s.str());
  }
  MinvQ_ = mass_llt_.solve(Q_);
  if (constraints().rows() > 0) {
    evaluate_constraints(kin_, u);
    schur_complement();
    rhs_.noalias() = G_ * MinvQ_;
    rhs_ -= gamma_;
    solve_multipliers(t, A_, rhs_);
  }
  // u̇ = M⁻¹ (Q − Gᵀ λ).
  tmp_ = Q_;
  if (constraints().rows() > 0) tmp_.noalias() -= G_.transpose() * lambda_;
  udot = mass_llt_.solve(tmp_);
}

// Schur complement A = G M⁻¹ Gᵀ = Yᵀ Y with Y = L⁻¹ Gᵀ (001 eq 10 eliminated by the range-space
// method). G is zero off each row's loop path, so column r of Gᵀ, and of Y since L is lower
// triangular, is zero above the row's first nonzero f_r. For a block of rows B with f = min f_r:
// Y(f:, B) = L(f:, f:)⁻¹ Gᵀ(f:, B), and A(B, 0:end(B)) = Y(f:, B)ᵀ Y(f:, 0:end(B)) (the lower block
// row); the strictly upper triangle is mirrored.
void LagrangeDense::schur_complement() {
  const int m = constraints().rows(), n = model_.nv;
  Y_ = G_.transpose();
  for (int r0 = 0; r0 < m; r0 += kBlock) {
    const int rows = std::min(kBlock, m - r0);
    int f = n;
    for (int r = r0; r < r0 + rows; ++r) f = std::min(f, first_nonzero(G_, r));
    auto Yb = Y_.block(f, r0, n - f, rows);
    mass_llt_.matrixLLT().bottomRightCorner(n - f, n - f).triangularView<Eigen::Lower>().solveInPlace(Yb);
    A_.block(r0, 0, rows, r0 + rows).noalias() = Yb.transpose() * Y_.block(f, 0, n - f, r0 + rows);
  }
  A_.triangularView<Eigen::StrictlyUpper>() = A_.transpose();
}

}  // namespace loopdyn
