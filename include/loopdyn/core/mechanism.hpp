// Mechanism: what the user describes (bodies, joints as a graph, force elements, markers, gravity,
// initial state). No formulation choices here. A Model (model.hpp) is built from it once.
#pragma once

#include <array>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "loopdyn/core/errors.hpp"
#include "loopdyn/core/spatial.hpp"
#include "loopdyn/core/time_function.hpp"

namespace loopdyn {

enum class JointType { revolute, prismatic, cylindrical, universal, spherical, planar, free, fixed };

/// Parses a model-file spelling ("revolute", ...); std::nullopt when unknown.
std::optional<JointType> parse_joint_type(std::string_view name);
std::string_view to_string(JointType type);

/// The name of the fixed world body; every mechanism hangs from it.
inline constexpr std::string_view ground_name = "ground";

/// A body's visual geometry: drawn by the viewer, no part of the dynamics. Kept from URDF and
/// MJCF files (and the model file's `visuals:`) so that a run can be shown as the file describes it.
struct VisualSpec {
  enum class Shape { box, sphere, cylinder, capsule, mesh };
  Shape shape = Shape::box;
  Vec3 size = Vec3::Zero();           ///< box: full edge lengths along the shape frame's axes
  double radius = 0.0;                ///< sphere, cylinder, capsule
  double length = 0.0;                ///< cylinder, capsule: along the shape frame's z axis (capsule: without its caps)
  std::string file;                   ///< mesh: a file path, relative paths from the model file's folder
  Vec3 scale = Vec3::Ones();          ///< mesh: per-axis scale of the file's coordinates
  Transform origin;                   ///< shape frame in the body frame
  std::array<double, 4> rgba{0.7, 0.7, 0.7, 1.0};
};

/// Parses a model-file spelling ("box", ...); std::nullopt when unknown.
std::optional<VisualSpec::Shape> parse_visual_shape(std::string_view name);
std::string_view to_string(VisualSpec::Shape shape);

struct BodySpec {
  std::string name;
  double mass = 0.0;
  Vec3 com = Vec3::Zero();            ///< centre of mass in the body frame
  Mat3 inertia = Mat3::Zero();        ///< rotational inertia about the centre of mass, body axes
  std::vector<VisualSpec> visuals;    ///< for the viewer only
  std::string where;                  ///< source location for messages ("file.yaml:12"), may be empty
};

struct JointSpec {
  std::string name;
  JointType type = JointType::revolute;
  std::string parent;                 ///< body name or "ground"
  std::string child;
  Transform parent_frame;             ///< joint frame in the parent body frame
  Transform child_frame;              ///< joint frame in the child body frame
  Vec3 axis = Vec3::UnitZ();          ///< revolute, prismatic, cylindrical, universal (first)
  Vec3 axis2 = Vec3::UnitY();         ///< universal (second, fixed in the child joint frame)
  std::vector<double> q;              ///< initial coordinates (nq), empty = neutral
  std::vector<double> u;              ///< initial speeds (nv), empty = zero
  bool cut = false;                   ///< pin as a loop-closing joint
  bool independent = false;           ///< keep its speeds independent (assembly, partitioned methods)
  /// Largest force or torque an actuator may apply on the joint (URDF <limit effort>, model file
  /// `effort`): the controllers on it (joint_pd) clamp their output to ±effort. ∞ = no limit.
  double effort = std::numeric_limits<double>::infinity();
  std::string where;
};

struct MarkerSpec {
  std::string name;
  std::string body;
  Vec3 point = Vec3::Zero();          ///< in the body frame
  std::string where;
};

/// Torque/force k (rest − q) − c q̇ on a 1-dof joint.
struct JointSpringDamperSpec {
  std::string joint;
  double stiffness = 0.0, damping = 0.0, rest = 0.0;
};
/// Spring-damper along the line between two body points (either body may be "ground").
struct PointSpringDamperSpec {
  std::string body1, body2;
  Vec3 point1 = Vec3::Zero(), point2 = Vec3::Zero();
  double stiffness = 0.0, damping = 0.0, rest_length = 0.0;
};
/// Constant generalized force on a joint (nv values).
struct JointForceSpec {
  std::string joint;
  std::vector<double> value;
};
/// Constant world-frame force applied at a body point (body frame).
struct BodyForceSpec {
  std::string body;
  Vec3 point = Vec3::Zero(), force = Vec3::Zero();
};
/// Constant world-frame torque on a body.
struct BodyTorqueSpec {
  std::string body;
  Vec3 torque = Vec3::Zero();
};
/// PD controller on a one-coordinate joint: τ = stiffness (q*(t) − q) + damping (q̇*(t) − q̇) with
/// q* = target, clamped to ±effort (none given: the joint's JointSpec::effort).
struct JointPdSpec {
  std::string joint;
  double stiffness = 0.0, damping = 0.0;
  TimeFunction target;
  std::optional<double> effort;
};

struct ForceSpec {
  using Element =
      std::variant<JointSpringDamperSpec, PointSpringDamperSpec, JointForceSpec, BodyForceSpec, BodyTorqueSpec, JointPdSpec>;
  ForceSpec() = default;
  // A constructor rather than an aggregate: `{element, where}` leaves the profile out without a
  // missing-initializer warning (-Wextra warned at 18 places when the profile came in).
  ForceSpec(Element e, std::string w = {}, std::optional<TimeFunction> p = std::nullopt)
      : element(std::move(e)), where(std::move(w)), profile(std::move(p)) {}

  Element element;
  std::string where;
  /// joint_force, body_force, body_torque: the load is its value times profile(t) (model file
  /// `profile:`); none = constant.
  std::optional<TimeFunction> profile;
};

/// Linear coupling of one-coordinate joint coordinates: Σ coefficient_k q(joint_k) = value.
/// A gear `q(joint2) = ratio · q(joint1)` is the coupling {(joint1, ratio), (joint2, −1)} = 0.
struct CouplingSpec {
  struct Term {
    std::string joint;
    double coefficient = 0.0;
  };
  std::string name;
  std::vector<Term> terms;
  double value = 0.0;
  std::string where;
};

/// A drive (rheonomic constraint): the coordinate of a one-coordinate tree joint prescribed as a
/// function of time, q(joint) = motion(t). Its multiplier is the force or torque the drive applies
/// (CSV column `drive.<joint>`).
struct DriveSpec {
  std::string joint;
  TimeFunction motion;
  std::string where;
};

struct Model;
struct KinematicsData;

/// What a user force callback may add to: generalized forces (nv) and world-frame spatial
/// forces on bodies about the world origin (6 x nbodies, model body order).
struct AppliedForces {
  VecX tau;       ///< (nv) generalized forces
  Mat6X f_world;  ///< (6 x nbodies) [moment about world origin; force], world frame
};

/// User force callback: called at every evaluation with up-to-date kinematics (positions and
/// velocities); it adds its contribution to `out`.
using ForceCallback = std::function<void(double t, const Model& model, const KinematicsData& kin,
                                         const VecX& q, const VecX& u, AppliedForces& out)>;

struct Mechanism {
  std::string name = "mechanism";
  Vec3 gravity = Vec3(0.0, 0.0, -9.81);
  std::vector<BodySpec> bodies;
  std::vector<JointSpec> joints;
  std::vector<MarkerSpec> markers;
  std::vector<ForceSpec> forces;
  std::vector<CouplingSpec> couplings;  ///< model file `constraints:` (gears, linear couplings)
  std::vector<DriveSpec> drives;        ///< model file `drives:` (prescribed motions)
  std::vector<ForceCallback> callbacks;

  BodySpec& add_body(std::string name, double mass, const Vec3& com, const Mat3& inertia);
  JointSpec& add_joint(std::string name, JointType type, std::string parent, std::string child,
                       const Transform& parent_frame = {}, const Transform& child_frame = {});
};

}  // namespace loopdyn
