// Mass-orthogonal projection onto the constraint manifold and the initial-state consistency check
// (projection.hpp has the math).
#include "loopdyn/loops/projection.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "loopdyn/loops/assembly.hpp"

namespace loopdyn {

namespace {

// Index of the entry of largest magnitude (0 for an empty vector).
Eigen::Index worst(const VecX& x) {
  Eigen::Index k = 0;
  if (x.size() > 0) x.cwiseAbs().maxCoeff(&k);
  return k;
}

}  // namespace

Projector::Projector(const Model& model, const Constraints& constraints, const ProjectionSettings& settings)
    : model_(model), constraints_(constraints), settings_(settings), kin_(model), cons_data_(model),
      crba_(model), M_(model.nv, model.nv), mass_llt_(model.nv), G_(constraints_.rows(), model.nv),
      Y_(model.nv, constraints_.rows()), A_(constraints_.rows(), constraints_.rows()), solver_(constraints_.rows(), settings.rank_tolerance),
      phi_(constraints_.rows()), phi_t_(constraints_.rows()), r_(constraints_.rows()), mu_(constraints_.rows()), dx_(model.nv), total_(model.nv) {
  if (!(settings.position_tolerance > 0.0) || !(settings.velocity_tolerance > 0.0))
    throw std::invalid_argument("projection tolerances must be > 0");
  if (settings.max_iterations < 1) throw std::invalid_argument("projection max_iterations must be >= 1");
}

void Projector::factor_mass() {
  crba(model_, kin_, crba_, M_);
  mass_llt_.compute(M_);
  if (mass_llt_.info() != Eigen::Success) throw std::runtime_error("projection: mass matrix not positive definite");
}

void Projector::correction(const VecX& r) {
  schur_complement(mass_llt_, G_, Y_, A_);  // A = G M⁻¹Gᵀ = YᵀY, Y = L⁻¹Gᵀ
  // μ = A⁺ r (minimum norm when A is singular).
  solver_.compute(A_);
  solver_.solve(r, mu_);
  // Δu = −M⁻¹Gᵀμ = −L⁻ᵀ(Y μ).
  dx_.setZero();
  dx_.noalias() -= Y_ * mu_;  // (a negated product would be evaluated into a temporary)
  mass_llt_.matrixU().solveInPlace(dx_);
}

double Projector::velocity_tolerance(const Eigen::Ref<const VecX>& u) const {
  return settings_.velocity_tolerance * velocity_scale(G_, u);
}

int Projector::project_positions(double t, Eigen::Ref<VecX> q) {
  if (constraints_.rows() == 0) return 0;
  total_.setZero();
  int it = 0;
  for (;; ++it) {
    update_positions(model_, kin_, q);
    constraint_position(model_, constraints_, kin_, t, cons_data_, phi_);
    const double residual = inf_norm(phi_);
    if (residual <= settings_.position_tolerance) {
      stats_.max_position_residual = std::max(stats_.max_position_residual, residual);
      break;
    }
    if (it == settings_.max_iterations || !std::isfinite(residual)) {
      std::ostringstream s;
      s << "position projection at t = " << t << " did not converge: residual |Phi| = " << residual << " at "
        << row_owner(model_, constraints_.kept()[worst(phi_)]) << " after " << it << " iterations (tolerance "
        << settings_.position_tolerance << "); the step left the constraint manifold too far (reduce the step) "
        << "or the mechanism is at a singular configuration";
      throw std::runtime_error(s.str());
    }
    if (it == 0) factor_mass();  // M fixed over one projection (004 Appendix, eq 95)
    constraint_jacobian(model_, constraints_, kin_, cons_data_, G_);
    correction(phi_);  // Δu = −M⁻¹Gᵀ(G M⁻¹Gᵀ)⁺Φ
    integrate_q(model_, q, dx_);
    total_ += dx_;
  }
  if (it > 0) {
    ++stats_.position_projections;
    stats_.position_iterations += it;
    stats_.max_position_correction = std::max(stats_.max_position_correction, inf_norm(total_));
  }
  return it;
}

void Projector::project_velocities(double t, const Eigen::Ref<const VecX>& q, Eigen::Ref<VecX> u) {
  if (constraints_.rows() == 0) return;
  update_positions(model_, kin_, q);
  constraint_jacobian(model_, constraints_, kin_, cons_data_, G_);
  constraint_time_rate(model_, constraints_, t, phi_t_);
  r_.noalias() = G_ * u;
  r_ += phi_t_;
  if (inf_norm(r_) > velocity_tolerance(u)) {
    // u ← u − M⁻¹Gᵀ(G M⁻¹Gᵀ)⁺ (G u + Φ_t) (004 eq 106).
    factor_mass();
    correction(r_);
    u += dx_;
    ++stats_.velocity_projections;
    stats_.max_velocity_correction = std::max(stats_.max_velocity_correction, inf_norm(dx_));
    r_.noalias() = G_ * u;
    r_ += phi_t_;
  }
  stats_.max_velocity_residual = std::max(stats_.max_velocity_residual, inf_norm(r_));
}

void Projector::project(double t, Eigen::Ref<VecX> q, Eigen::Ref<VecX> u) {
  ++stats_.calls;
  project_positions(t, q);
  project_velocities(t, q, u);
}

void check_consistent(const Model& model, const Constraints& constraints, const VecX& q, const VecX& u,
                      double tolerance) {
  if (q.size() != model.nq || u.size() != model.nv) {
    std::ostringstream s;
    s << "check_consistent: state has the wrong size (q " << q.size() << ", u " << u.size() << "; nq = " << model.nq
      << ", nv = " << model.nv << ")";
    throw std::invalid_argument(s.str());
  }
  // A NaN or negative tolerance blamed the state ("2.2e-16 exceeds the tolerance nan").
  if (!(tolerance > 0.0) || !std::isfinite(tolerance))
    throw std::invalid_argument("check_consistent: the tolerance must be finite and > 0, got " +
                                std::to_string(tolerance));
  const int m = constraints.rows();
  if (m == 0) return;
  KinematicsData kin(model);
  update_positions(model, kin, q);
  ConstraintData d(model);
  VecX phi(m);
  MatX G(m, model.nv);
  constraint_position(model, constraints, kin, 0.0, d, phi);  // runs start at t = 0
  constraint_jacobian(model, constraints, kin, d, G);
  VecX Gu(m);
  constraint_time_rate(model, constraints, 0.0, Gu);
  Gu.noalias() += G * u;
  const double position_residual = inf_norm(phi), velocity_residual = inf_norm(Gu);
  const double velocity_tol = tolerance * velocity_scale(G, u);
  const bool position_bad = !(position_residual <= tolerance);
  if (!position_bad && velocity_residual <= velocity_tol) return;
  std::ostringstream s;
  if (position_bad)
    s << "inconsistent initial state: position residual |Phi| = " << position_residual << " at "
      << row_owner(model, constraints.kept()[worst(phi)]) << " exceeds the tolerance " << tolerance;
  else
    s << "inconsistent initial state: velocity residual |G u| = " << velocity_residual << " at "
      << row_owner(model, constraints.kept()[worst(Gu)]) << " exceeds the tolerance " << velocity_tol << " ("
      << tolerance << " * max(1, max|G| |u|))";
  s << "; close the loops first: assemble the initial state (`loopdyn assemble`; library: loopdyn::assemble), as "
       "`loopdyn simulate` and Python's simulate() do unless told not to";
  throw std::runtime_error(s.str());
}

}  // namespace loopdyn
