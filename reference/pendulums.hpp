// Exact motions of generated mechanisms that reduce to a pendulum (tests and results programs
// only): the spatial ladder of 000 §4.3 as a 2-dof pendulum, the IFToMM N-four-bar (A02) and the
// other cases that move as one angle. Each is integrated here, apart from every loopdyn
// formulation; the N-four-bar's and the scalar pendulums' integrator is a classical RK4 of its own.
#pragma once

#include <Eigen/Dense>
#include <functional>
#include <vector>

#include "loopdyn/core/model.hpp"
#include "loopdyn/mechanisms/generators.hpp"
#include "loopdyn/run/integrators.hpp"

namespace loopdyn::reference {

/// The 2-dof pendulum of loopdyn::spatial_ladder_pendulum_accelerations (generators.hpp) as a
/// first-order system x = (α, β, α̇, β̇) for integrate(): an independent reference for the
/// ladder's post0_top trajectory (000 Fig. 10).
class SpatialLadderPendulum final : public OdeSystem {
 public:
  explicit SpatialLadderPendulum(int cells, LadderMasses masses = LadderMasses::uniform);
  int size() const override { return 4; }
  void rhs(double t, const VecX& x, VecX& dx) override;
  /// x at the times t_out (sorted, >= 0) from x0 at t = 0: dopri5 at rtol = atol = tol.
  std::vector<Eigen::Vector4d> solve(const Eigen::Vector4d& x0, const std::vector<double>& t_out, double tol = 1e-12);
  /// The pendulum state of a spatial-ladder state: (α, β, α̇, β̇) = q and u of "post0_top".
  static Eigen::Vector4d state_of(const Model& model, const VecX& q, const VecX& u);

 private:
  int cells_;
  LadderMasses masses_;
};

/// θ and θ̇ of a scalar pendulum at one time.
struct PendulumSample {
  double theta = 0.0, theta_dot = 0.0;
};

/// The exact motion of A02 (loopdyn/mechanisms/iftomm.hpp): θ(t), θ̇(t) of every crank at the
/// times t_out (sorted, >= 0), the pendulum I θ̈ + K cos θ = 0 with I = (N + 1)/3 + N,
/// K = g ((N + 1)/2 + N), from θ = π/2, θ̇ = −1 rad/s, by classical RK4 with step h (default
/// 1e-4 s; tests/test_iftomm.cpp checks the energy integral to 1e-9 relative over 20 s for N = 40).
std::vector<PendulumSample> nfourbar_exact(int n, const std::vector<double>& t_out, double h = 1e-4);

/// θ(t), θ̇(t) at the times t_out (sorted, >= 0) of a scalar pendulum θ̈ = accel(θ) from `start`
/// at t = 0, by classical RK4 with step h (shortened to land on each output time): the exact
/// 1-dof motions of nfourbar_exact and of the reference cases that reduce to one angle.
std::vector<PendulumSample> integrate_pendulum(const std::function<double(double)>& accel, PendulumSample start,
                                               const std::vector<double>& t_out, double h);

}  // namespace loopdyn::reference
