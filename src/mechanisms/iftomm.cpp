// IFToMM benchmark mechanisms and their references (iftomm.hpp).
#include "loopdyn/mechanisms/iftomm.hpp"

#include <cmath>
#include <functional>
#include <numbers>
#include <stdexcept>
#include <string>

#include "mechanisms/rods.hpp"

namespace loopdyn {

namespace {

using detail::add_pin;
using detail::add_rod;
using detail::indexed;

constexpr double kGravity = 9.81;

// (I, K) of A02's pendulum I θ̈ + K cos θ = 0 (iftomm.hpp).
std::pair<double, double> nfourbar_pendulum(int n) {
  return {(n + 1) / 3.0 + n, kGravity * ((n + 1) / 2.0 + n)};
}

}  // namespace

Mechanism nfourbar_mechanism(int n) {
  if (n < 1) throw std::invalid_argument("nfourbar_mechanism: number of four-bars must be at least 1, got " +
                                         std::to_string(n));
  Mechanism m;
  m.name = indexed("nfourbar-", n);
  m.gravity = Vec3(0.0, -kGravity, 0.0);
  const double up = std::numbers::pi / 2;
  const Vec3 tip(1.0, 0.0, 0.0);
  for (int k = 0; k <= n; ++k) {
    const std::string crank = indexed("crank", k);
    add_rod(m, crank);
    add_pin(m, crank + "_pivot", std::string(ground_name), crank, Vec3(k, 0.0, 0.0), Vec3::Zero(), up, -1.0);
    m.markers.push_back({indexed("B", k), crank, tip, ""});
    if (k == 0) continue;
    // Coupler k from crank k−1's tip, horizontal (absolute angle 0), translating with the tips.
    const std::string coupler = indexed("coupler", k), left = indexed("crank", k - 1);
    add_rod(m, coupler);
    add_pin(m, coupler + "_left", left, coupler, tip, Vec3::Zero(), -up, 1.0);
    add_pin(m, coupler + "_right", coupler, crank, tip, tip, 0.0, 0.0).cut = true;
  }
  return m;
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
  const auto [inertia, k] = nfourbar_pendulum(n);
  return integrate_pendulum([&](double theta) { return -k * std::cos(theta) / inertia; },
                            {std::numbers::pi / 2, -1.0}, t_out, h);
}

}  // namespace loopdyn
