#include "pendulums.hpp"

#include <algorithm>
#include <numbers>
#include <stdexcept>

namespace loopdyn::reference {

SpatialLadderPendulum::SpatialLadderPendulum(int cells, LadderMasses masses) : cells_(cells), masses_(masses) {
  if (cells < 1) throw std::invalid_argument("SpatialLadderPendulum: number of cells must be at least 1");
}

void SpatialLadderPendulum::rhs(double /*t*/, const VecX& x, VecX& dx) {
  dx.head<2>() = x.tail<2>();
  dx.tail<2>() = spatial_ladder_pendulum_accelerations(x(0), x(1), x(2), x(3), cells_, masses_);
}

std::vector<Eigen::Vector4d> SpatialLadderPendulum::solve(const Eigen::Vector4d& x0, const std::vector<double>& t_out,
                                                          double tol) {
  IntegratorSettings settings;
  settings.kind = IntegratorKind::dopri5;
  settings.rtol = settings.atol = tol;
  std::vector<Eigen::Vector4d> out;
  out.reserve(t_out.size());
  integrate(*this, settings, 0.0, x0, t_out, [&](double, const VecX& x) { out.emplace_back(x); });
  return out;
}

Eigen::Vector4d SpatialLadderPendulum::state_of(const Model& model, const VecX& q, const VecX& u) {
  const int j = model.joint_index("post0_top");
  return {q(model.q_index[j]), q(model.q_index[j] + 1), u(model.v_index[j]), u(model.v_index[j] + 1)};
}

std::vector<PendulumSample> integrate_pendulum(const std::function<double(double)>& accel, PendulumSample start,
                                               const std::vector<double>& t_out, double h) {
  if (!(h > 0.0)) throw std::invalid_argument("integrate_pendulum: step must be > 0");
  double t = 0.0, x = start.theta, v = start.theta_dot;
  std::vector<PendulumSample> out;
  out.reserve(t_out.size());
  for (double target : t_out) {
    if (target < t) throw std::invalid_argument("integrate_pendulum: output times must be sorted and >= 0");
    while (t < target) {
      const double dt = std::min(h, target - t);
      // Classical RK4 on (θ, θ̇).
      const double k1x = v, k1v = accel(x);
      const double k2x = v + 0.5 * dt * k1v, k2v = accel(x + 0.5 * dt * k1x);
      const double k3x = v + 0.5 * dt * k2v, k3v = accel(x + 0.5 * dt * k2x);
      const double k4x = v + dt * k3v, k4v = accel(x + dt * k3x);
      x += dt / 6 * (k1x + 2 * k2x + 2 * k3x + k4x);
      v += dt / 6 * (k1v + 2 * k2v + 2 * k3v + k4v);
      t = (target - t <= h) ? target : t + dt;
    }
    out.push_back({x, v});
  }
  return out;
}

std::vector<PendulumSample> nfourbar_exact(int n, const std::vector<double>& t_out, double h) {
  if (n < 1) throw std::invalid_argument("nfourbar_exact: n must be at least 1");
  const double g = 9.81, inertia = (n + 1) / 3.0 + n, k = g * ((n + 1) / 2.0 + n);
  return integrate_pendulum([&](double theta) { return -k * std::cos(theta) / inertia; },
                            {std::numbers::pi / 2, -1.0}, t_out, h);
}

}  // namespace loopdyn::reference
