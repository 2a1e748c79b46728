// An independent reference for mechanisms of revolute joints: Newton–Euler equations of every body
// in absolute coordinates (centre-of-mass position, unit quaternion, velocity, world angular
// velocity), every joint, tree or loop-closing, a set of constraints on them, multipliers of least
// norm (so redundant rows and singular configurations give no NaN), classical RK4 with a fixed step,
// and after every step an M-orthogonal projection of positions and velocities onto the
// constraints. It shares no code with loopdyn's formulations, kinematics or integrators: it reads
// only the mechanism description (masses, centres of mass, inertias, joint frames and axes,
// gravity) and an initial pose and velocity of every body. It is slow (dense, O(m³) per call) and
// meant for the IFToMM benchmark references of docs/results.md and the tests.
//
//   M ẍ + Jᵀλ = f,  J ẍ = γ   with ẍ = (a_i, ω̇_i) per body, f = (m_i g, −ω_i × J_i ω_i),
//   λ = (J M⁻¹Jᵀ)⁺ (J M⁻¹ f − γ),  ẍ = M⁻¹ (f − Jᵀλ).
// Revolute joint between frames A (on body a) and B (on body b), joint origin ρ and axis z:
//   r_a + R_a ρ_a − r_b − R_b ρ_b = 0                      (3 rows)
//   (R_a n1)·(R_b z_b) = 0,  (R_a n2)·(R_b z_b) = 0          (2 rows; n1, n2 ⟂ z_a)
#pragma once

#include <Eigen/Dense>
#include <vector>

#include "loopdyn/mechanism.hpp"

namespace loopdyn::reference {

struct BodyState {
  Eigen::Vector3d r = Eigen::Vector3d::Zero();          ///< centre of mass, world
  Eigen::Quaterniond p = Eigen::Quaterniond::Identity();  ///< orientation of the body frame
  Eigen::Vector3d v = Eigen::Vector3d::Zero();          ///< centre-of-mass velocity, world
  Eigen::Vector3d w = Eigen::Vector3d::Zero();          ///< angular velocity, world
};

class AbsoluteCoordinates {
 public:
  /// Throws std::invalid_argument for joints other than revolute.
  explicit AbsoluteCoordinates(const Mechanism& mechanism);
  /// RK4 steps of size h from s up to time t (from t0), each followed by the projection.
  void advance(std::vector<BodyState>& s, double t0, double t, double h) const;
  /// World position of a point given in a body's frame.
  Eigen::Vector3d point(const std::vector<BodyState>& s, int body, const Eigen::Vector3d& in_body) const;
  double energy(const std::vector<BodyState>& s) const;
  /// max |Φ| and max |J ẋ| of the constraints.
  std::pair<double, double> residuals(const std::vector<BodyState>& s) const;
  int body(const std::string& name) const;

 private:
  struct Pin {
    int a = -1, b = -1;                      ///< body indices (−1 = ground)
    Eigen::Vector3d rho_a, rho_b;            ///< joint origin from the centre of mass, body frames
    Eigen::Vector3d n1_a, n2_a, z_b;         ///< body frames
  };
  void position_rows(const std::vector<BodyState>& s, Eigen::VectorXd& phi, Eigen::MatrixXd& J) const;
  void accelerations(const std::vector<BodyState>& s, Eigen::VectorXd& xdd) const;
  void project(std::vector<BodyState>& s) const;

  std::vector<std::string> names_;
  std::vector<double> mass_;
  std::vector<Eigen::Vector3d> com_;        ///< centre of mass in the body frame
  std::vector<Eigen::Matrix3d> inertia_;    ///< about the centre of mass, body axes
  std::vector<Pin> pins_;
  Eigen::Vector3d gravity_;
};

}  // namespace loopdyn::reference
