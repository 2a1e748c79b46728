// Inverse joint kinematics, and the map between the joint state (q, u) of a Model and absolute body
// coordinates (world pose and spatial velocity of every body), so that methods in absolute
// coordinates can report the joint coordinates of Model::coordinate_names(). Joint coordinates as
// in joints.hpp and docs/model-format.md; spatial vectors and Transforms as in spatial.hpp.
#pragma once

#include <vector>

#include "loopdyn/core/model.hpp"

namespace loopdyn {

/// Coordinates q (the joint's nq) with joint.transform(q) = pose, `pose` being the child joint
/// frame in the parent joint frame. For a pose the joint does not allow, the projection of each
/// type (R = pose.R, p = pose.p, a = axis):
///  * revolute: the angle about a that maximizes tr(Rot(a, q)ᵀ R), i.e. the rotation about a
///    nearest R (Frobenius): q = atan2(a·w, tr R − aᵀRa), w = vee(R − Rᵀ); p is ignored;
///  * prismatic: q = a·p; R is ignored;
///  * cylindrical: [a·p, revolute angle];
///  * universal: q0 from the direction of R·axis2 in the plane normal to axis (for an allowed
///    pose R·axis2 = Rot(axis, q0)·axis2), then q1 the revolute angle about axis2 of
///    Rot(axis, −q0) R. Exact for allowed poses with any two non-parallel axes, and unique modulo
///    2π (no second branch; with perpendicular axes, R·axis2 has unit length in that plane, so no
///    gimbal lock). For other poses it fits axis2's direction first, which is not the joint
///    least-squares minimum; when R·axis2 is (nearly) along axis, q0 is ill-determined (any
///    value is as far) but finite;
///  * spherical: the unit quaternion of R (scalar first);
///  * planar: [p.x, p.y, revolute angle about z];
///  * free: [p, unit quaternion of R];
///  * fixed: no coordinates.
/// Among the equivalent coordinates the one nearest `near` (the joint's previous coordinates, nq
/// values, finite) is chosen, so that output over time is continuous: angles within π of near's,
/// the quaternion's sign with a non-negative dot product with near's. `near` may alias q.
/// Returns the residual θ(R(q)ᵀR) + |p(q) − p|, with θ the rotation angle in [0, π] (radians plus
/// length units): round-off for an allowed pose, the distance to the returned coordinates
/// otherwise.
double joint_coordinates(const Joint& joint, const Transform& pose, const double* near, double* q);

/// Speeds u (the joint's nv) with S(q) u = v, v = relative spatial velocity [ω; v] of the child
/// joint frame in its own axes: the least-squares solution of the normal equations SᵀS u = Sᵀv
/// (fixed-size LDLT). S must have full column rank, as it has for every joint Model::build accepts
/// (orthonormal columns). Returns the residual |S(q) u − v|.
double joint_speeds(const Joint& joint, const double* q, const Vec6& v, double* u);

/// Absolute state of the bodies, model body order.
struct BodyState {
  std::vector<Transform> pose;   ///< (nbodies) world pose of each body frame
  std::vector<Vec6> velocity;    ///< (nbodies) spatial velocity of each body, body frame (as KinematicsData::v)
};

/// The BodyState of (q, u) by forward kinematics (update_positions, update_velocities). Allocates
/// its KinematicsData.
void body_state(const Model& model, const VecX& q, const VecX& u, BodyState& out);

/// Largest residuals of joint_state over the tree joints.
struct JointStateResidual {
  double position = 0.0;  ///< of joint_coordinates
  double velocity = 0.0;  ///< of joint_speeds
};

/// (q, u) of a BodyState, joint by joint: for tree joint i with parent p (−1 = ground, the world
/// frame), the child joint frame in the parent joint frame is
/// (pose[p] · parent_frame)⁻¹ · pose[i] · child_frame, whose coordinates joint_coordinates gives
/// (near: q_near's entries, nq); the relative velocity of the child joint frame, in its own axes,
/// is the child body's velocity minus the parent body's carried to that frame, whose speeds
/// joint_speeds gives. Both residuals are zero to round-off exactly when the joints allow the
/// state. q_near may be q. No allocation when q and u are already sized nq and nv.
JointStateResidual joint_state(const Model& model, const BodyState& s, const VecX& q_near, VecX& q, VecX& u);

}  // namespace loopdyn
