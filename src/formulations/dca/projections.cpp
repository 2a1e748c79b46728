// The mass-orthogonal projections of positions, then velocities, onto the constraints (004 §3,
// eqs 41-72, Appendix 87-110; formulations/dca.hpp, "Projections"): the same divide-and-conquer
// solve as the accelerations', with other right-hand sides.
#include <algorithm>

#include "formulations/dca/engine.hpp"

namespace loopdyn::dca {

namespace {

// Rotation vector θ with Rot(θ) = R (log map), for the small rotations of a projection.
Vec3 rotation_vector(const Mat3& R) {
  const Eigen::AngleAxisd aa(R);
  return aa.angle() * aa.axis();
}

Mat3 rotation_of(const Vec3& theta) {
  const double angle = theta.norm();
  return angle > 0.0 ? Mat3(Eigen::AngleAxisd(angle, theta / angle)) : Mat3::Identity();
}

}  // namespace

int Engine::project_positions(Eigen::Ref<VecX> x) {
  const int nb = model.nbodies;
  // 004 eqs 48-49, 56, 99: matrices at q*, Δ from −M(q − q*) and ν = Φ(q).
  load_bodies(x, false);
  r_star_ = r_;
  R_star_ = R_;
  const Factorization at_q_star = factor(update_rows(false));  // and the inertia at q*, the metric
  lambda_.setZero();
  int k = 0;
  while (k < parameters.max_iterations) {
    // Residuals of M (q − q*) + Gᵀλ = 0 and Φ(q) = 0 at the current q and λ; the correction Δ of
    // the modified Newton iteration (eq 99), with the matrices at q*, solves for them.
    parallel.for_each(nb, [&](int i) {
      Vec6 d;
      d << rotation_vector(R_[i] * R_star_[i].transpose()), r_[i] - r_star_[i];
      BodyVector::body(res_, i) = -solver.mass_times(i, d);
      subtract_constraint_forces(i);
    });
    solver.solve(at_q_star, res_, nullptr, nullptr, phi_, out_);
    lambda_ += solver.dlambda();
    ++k;
    parallel.for_each(nb, [&](int i) {
      R_[i] = rotation_of(BodyVector::angular(out_, i)) * R_[i];
      r_[i] += BodyVector::linear(out_, i);
    });
    update_rows(false);
    double reach = 1.0;  // radians, and the farthest centre of mass
    for (int i = 0; i < nb; ++i) reach = std::max(reach, r_[i].cwiseAbs().maxCoeff());
    if (out_.cwiseAbs().maxCoeff() < floor_of(parameters.eps_p, reach)) break;
  }
  store_positions(x);
  return k;
}

void Engine::store_positions(Eigen::Ref<VecX> x) const {
  for (int i = 0; i < model.nbodies; ++i) {
    layout.r(x, i) = r_[i];
    const Quat p(R_[i]);
    auto xp = layout.p(x, i);
    Quat old(xp(0), xp(1), xp(2), xp(3));
    const double sign = p.coeffs().dot(old.coeffs()) < 0.0 ? -1.0 : 1.0;  // keep the sign: continuous p
    xp(0) = sign * p.w();
    xp.tail<3>() = sign * p.vec();
  }
}

void Engine::project_velocities(Eigen::Ref<VecX> x) {
  const int nb = model.nbodies;
  // 004 eqs 64-65, 72: matrices at the (projected) q, v from M v* and ν = 0.
  load_bodies(x, true);
  const Factorization at_q = factor(update_rows(true));
  for (int i = 0; i < nb; ++i) {  // F = M v*, x from v*
    BodyVector::angular(prev_, i) = w_[i];
    BodyVector::linear(prev_, i) = v_[i];
    BodyVector::body(rhs_, i) = solver.mass_times(i, BodyVector::body(prev_, i));
  }
  out_ = prev_;
  nu_.setZero();
  lambda_.setZero();
  diagnostics_.velocity_iterations = solver.refine(at_q, rhs_, nu_, parameters.eps_v, out_, lambda_);
  layout.velocities(x) = out_;
  load_bodies(x, true);
  update_rows(true);
  diagnostics_.velocity_residual = max_abs(phidot_);
}

void Engine::project_stage(const Factorization& f, Eigen::Ref<VecX> x) {
  const int nb = model.nbodies;
  // Positions: eq 99's first step from q = q*, λ = 0: M Δ + Gᵀλ = 0, λ = α (G Δ + Φ(q*)).
  res_.setZero();
  solver.solve(f, res_, nullptr, nullptr, phi_, out_);
  parallel.for_each(nb, [&](int i) {
    R_[i] = rotation_of(BodyVector::angular(out_, i)) * R_[i];
    r_[i] += BodyVector::linear(out_, i);
    BodyVector::angular(prev_, i) = w_[i];
    BodyVector::linear(prev_, i) = v_[i];
  });
  store_positions(x);
  // Velocities: eq 72's first step from v = v*: M δ + Gᵀλ = 0, λ = α (G δ + G v*), G at the
  // projected positions.
  update_rows(false);
  nu_.setZero();
  constraint_residual(prev_, nu_);
  solver.solve(f, res_, nullptr, nullptr, c_, out_);
  prev_ += out_;
  layout.velocities(x) = prev_;
  load_bodies(x, true);
}

void Engine::project(Eigen::Ref<VecX> x) {
  diagnostics_.position_iterations = project_positions(x);
  diagnostics_.position_residual = max_abs(phi_);
  project_velocities(x);
}

}  // namespace loopdyn::dca
