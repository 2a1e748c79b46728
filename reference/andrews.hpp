// An independent reference for IFToMM A03, Andrews' squeezing mechanism
// (models/iftomm_a03_andrews.yaml): Hairer & Wanner's own equations of motion (Solving ODEs II,
// 2nd ed., §VII.7; the Bari Test Set's problem "andrews") in their seven angles
// q = (β, Θ, γ, Φ, δ, Ω, ε), written out from the literature, sharing no code with loopdyn's model,
// kinematics, formulations or integrators:
//
//   M(q) q̈ = f(q, q̇) − G(q)ᵀλ,   0 = g(q)  (6 rows, the three loops closed at E),   G = ∂g/∂q.
//
// Index 1: G q̈ = −g_qq(q)(q̇, q̇), so at every stage one dense 13 × 13 KKT solve
//
//   [ M  Gᵀ ] [ q̈ ]   [ f              ]
//   [ G  0  ] [ λ ] = [ −g_qq(q)(q̇, q̇) ],
//
// classical RK4 with a fixed step and after every step an M-orthogonal projection of q onto
// g = 0 (Newton) and of q̇ onto G q̇ = 0, with the same KKT matrix. Slow and meant for the tests
// and bench/iftomm_results only.
#pragma once

#include <Eigen/Dense>

namespace loopdyn::reference::andrews {

using Angles = Eigen::Matrix<double, 7, 1>;  ///< (β, Θ, γ, Φ, δ, Ω, ε) [rad] or their rates

struct State {
  Angles q = Angles::Zero(), v = Angles::Zero();  ///< angles and angle rates
};

/// Hairer & Wanner's consistent initial state: the test set's angles (30 digits, rounded), at rest.
State initial_state();
/// The published solution at t = 0.03 s (test set, PSIDE at rtol = atol = 1e-14): the angles.
Angles published_angles_at_003();

/// RK4 steps of size (at most) h from t0 up to t, each followed by the projection.
void advance(State& s, double t0, double t, double h);

/// g(q): the three loop closures at E (6 rows, metres).
Eigen::Matrix<double, 6, 1> constraints(const Angles& q);
/// Kinetic energy ½ q̇ᵀM q̇ plus the spring's ½ c0 (L − l0)² (J). The torque's work mom·(β − β0)
/// is not included: the energy grows by it.
double energy(const State& s);
/// mom (N m), the constant torque on the crank.
double crank_torque();

/// World positions (z = 0) by Hairer & Wanner's geometry: F, the crank tip rr (cos β, sin β);
/// E, where the loops close; D, the spring's point on body 3.
Eigen::Vector3d crank_tip(const Angles& q);
Eigen::Vector3d point_e(const Angles& q);
Eigen::Vector3d point_d(const Angles& q);

}  // namespace loopdyn::reference::andrews
