// An independent reference for mechanisms of revolute, prismatic, cylindrical, universal and
// spherical joints with joint and point spring-dampers: Newton–Euler equations of every body in
// absolute coordinates (centre-of-mass position, unit quaternion, velocity, world angular
// velocity), every joint, tree or loop-closing, a set of constraints on them, multipliers of least
// norm (so redundant rows and singular configurations give no NaN), classical RK4 with a fixed step,
// and after every step an M-orthogonal projection of positions and velocities onto the
// constraints. It shares no code with loopdyn's formulations, kinematics, force elements or
// integrators: it reads only the mechanism description (masses, centres of mass, inertias, joint
// frames and axes, force elements, gravity) and an initial pose and velocity of every body. It is
// slow (dense, O(m³) per call) and meant for the references of docs/results.md and the tests.
//
//   M ẍ + Jᵀλ = f,  J ẍ = γ   with ẍ = (a_i, ω̇_i) per body, f = (m_i g, −ω_i × J_i ω_i) + Σ Sᵀτ,
//   λ = (J M⁻¹Jᵀ)⁺ (J M⁻¹ f − γ),  ẍ = M⁻¹ (f − Jᵀλ),  γ = −J̇ẋ.
// Every joint between frames A (on body a) and B (on body b), with origins P_a, P_b and the joint
// frame's axis z (the joint's `axis`) and n1, n2 ⟂ z (z × n1 = n2), each carried by its body, is
// made of three kinds of rows:
//   point         P_a − P_b = 0                                  (3 rows)
//   perpendicular (R_a u)·(R_b w) = 0   for directions u on a, w on b          (1 row)
//   offset        (R_a u)·(P_b − P_a) = 0   for a direction u on a              (1 row)
// revolute:    point; perpendicular (n1_a, z_b), (n2_a, z_b)
// prismatic:   perpendicular (n1_a, z_b), (n2_a, z_b), (n1_a, n2_b); offset n1_a, n2_a
// cylindrical: perpendicular (n1_a, z_b), (n2_a, z_b); offset n1_a, n2_a
// universal:   point; perpendicular (axis_a, axis2_b) (axis in the parent's joint frame, axis2 in
//              the child's, as loopdyn's joint coordinates: R = Rot(axis, q0) Rot(axis2, q1))
// spherical:   point
// At the joint's neutral position the frames coincide, so the rows vanish there and the prismatic
// joint's third row holds its twist about z (rank 5 near it, as the joint).
//
// Spring-dampers (loopdyn's force elements, mechanism.hpp) act by the generalized force
//   τ = k (rest − q) − c q̇  along the coordinate q, with body forces Sᵀτ (S = ∂q̇/∂ẋ):
//   revolute joint    q = angle from n1_a to n1_b about z, unwrapped along the run (rad)
//   prismatic joint   q = z_a·(P_b − P_a) (m)
//   point pair        q = |x2 − x1| (m), τ = −tension: the spring pulls the points together
// with potential ½ k (q − rest)² in energy(), and the work of the dampers W = −∫ Σ c q̇² dt
// integrated by the same RK4 (State::work), so E − W is constant along the exact motion.
#pragma once

#include <Eigen/Dense>
#include <vector>

#include "loopdyn/core/mechanism.hpp"

namespace loopdyn::reference {

struct BodyState {
  Eigen::Vector3d r = Eigen::Vector3d::Zero();          ///< centre of mass, world
  Eigen::Quaterniond p = Eigen::Quaterniond::Identity();  ///< orientation of the body frame
  Eigen::Vector3d v = Eigen::Vector3d::Zero();          ///< centre-of-mass velocity, world
  Eigen::Vector3d w = Eigen::Vector3d::Zero();          ///< angular velocity, world
};

/// The bodies and what the force elements need along a run.
struct State {
  std::vector<BodyState> bodies;
  double work = 0.0;           ///< work of the dampers since start() (J, at most 0)
  /// One per spring-damper, in the mechanism's order: a revolute joint spring's q (rad),
  /// unwrapped from its joint's initial q along the run; 0 for the others.
  std::vector<double> angles;
};

class AbsoluteCoordinates {
 public:
  /// Throws std::invalid_argument for planar, free and fixed joints, couplings, force callbacks,
  /// applied forces other than spring-dampers and joint springs on joints other than revolute
  /// and prismatic.
  explicit AbsoluteCoordinates(const Mechanism& mechanism);
  /// The state of these bodies with no work done: revolute spring angles taken within ±π of
  /// their joint's initial q (JointSpec::q).
  State start(std::vector<BodyState> bodies) const;
  /// RK4 steps of size h from s up to time t (from t0), each followed by the projection.
  void advance(State& s, double t0, double t, double h) const;
  /// The same for a mechanism without force elements (else std::invalid_argument: their work
  /// and angles live in a State).
  void advance(std::vector<BodyState>& s, double t0, double t, double h) const;
  /// World position of a point given in a body's frame.
  Eigen::Vector3d point(const std::vector<BodyState>& s, int body, const Eigen::Vector3d& in_body) const;
  /// Kinetic energy (J).
  double kinetic(const std::vector<BodyState>& s) const;
  /// Kinetic + gravity + spring potential (J); E − s.work is constant along the exact motion.
  double energy(const State& s) const;
  /// energy(start(s)).
  double energy(const std::vector<BodyState>& s) const;
  /// max |Φ| and max |J ẋ| of the constraints.
  std::pair<double, double> residuals(const std::vector<BodyState>& s) const;
  int body(const std::string& name) const;

 private:
  enum class Kind { point, perpendicular, offset };
  /// A joint's rows of one kind (point: 3 rows), or a spring's coordinate (point: the distance).
  struct Row {
    Kind kind = Kind::point;
    int a = -1, b = -1;               ///< body indices (−1 = ground)
    Eigen::Vector3d rho_a, rho_b;     ///< P_a, P_b from the centre of mass, body frames
    Eigen::Vector3d u_a, w_b;         ///< directions on a and b, body frames
  };
  enum class Coordinate { angle, offset, distance };
  struct Spring {
    Coordinate coordinate = Coordinate::angle;
    Row row;                          ///< angle: u_a = z, w_b = n1; offset: u_a = z; distance: points
    Eigen::Vector3d n1_a;             ///< angle: n1 on a, body frame
    double stiffness = 0.0, damping = 0.0, rest = 0.0;
    double q0 = 0.0;                  ///< angle: the joint's initial q, around which start() reads it
  };
  void add_joint(const JointSpec& j);
  void add_spring(const Mechanism& m, const ForceSpec& f);
  Row row(Kind kind, const JointSpec& j, const Eigen::Vector3d& u, const Eigen::Vector3d& w) const;
  int rows_count() const;
  void rows(const std::vector<BodyState>& s, Eigen::VectorXd& phi, Eigen::MatrixXd& J, Eigen::VectorXd* gamma) const;
  /// Each spring's q (angles unwrapped around `angles`) and its rate row S.
  void spring_coordinates(const std::vector<BodyState>& s, const std::vector<double>& angles, Eigen::VectorXd& q,
                          Eigen::MatrixXd& S) const;
  Eigen::MatrixXd inverse_mass(const std::vector<BodyState>& s) const;
  /// ẍ and the dampers' power.
  double accelerations(const std::vector<BodyState>& s, const std::vector<double>& angles, Eigen::VectorXd& xdd) const;
  void project(std::vector<BodyState>& s) const;

  std::vector<std::string> names_;
  std::vector<double> mass_;
  std::vector<Eigen::Vector3d> com_;        ///< centre of mass in the body frame
  std::vector<Eigen::Matrix3d> inertia_;    ///< about the centre of mass, body axes
  std::vector<Row> rows_;
  std::vector<Spring> springs_;
  Eigen::Vector3d gravity_;
};

}  // namespace loopdyn::reference
