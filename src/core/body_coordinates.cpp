// Inverse joint kinematics and the joint state ↔ body state maps (body_coordinates.hpp has the
// conventions and the projection of each joint type).
#include "loopdyn/core/body_coordinates.hpp"

#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>
#include <numbers>

#include "loopdyn/core/kinematics.hpp"

namespace loopdyn {

namespace {

constexpr double two_pi = 2.0 * std::numbers::pi;

// a + 2πk, k the integer that puts it within π of near.
double unwrap(double a, double near) { return a + two_pi * std::round((near - a) / two_pi); }

Vec3 vee_antisymmetric(const Mat3& R) { return Vec3(R(2, 1) - R(1, 2), R(0, 2) - R(2, 0), R(1, 0) - R(0, 1)); }

// The maximizer of tr(Rot(a, θ)ᵀ R) = (tr R − aᵀRa) cos θ + (a·w) sin θ + aᵀRa, w = vee(R − Rᵀ),
// a unit: the angle about a of the rotation about a nearest R. atan2(0, 0) = 0 when all θ tie.
double axis_angle(const Vec3& a, const Mat3& R) {
  return std::atan2(a.dot(vee_antisymmetric(R)), R.trace() - a.dot(R * a));
}

// Rotation angle in [0, π] of a rotation matrix: sin θ = |w|/2, cos θ = (tr R − 1)/2.
double rotation_angle(const Mat3& R) { return std::atan2(0.5 * vee_antisymmetric(R).norm(), 0.5 * (R.trace() - 1.0)); }

// Unit quaternion [w, x, y, z] of R, signed so that its dot product with near is not negative.
void quaternion_coordinates(const Mat3& R, const double* near, double* q) {
  const Quat r = Quat(R).normalized();
  const double s = r.w() * near[0] + r.x() * near[1] + r.y() * near[2] + r.z() * near[3] < 0.0 ? -1.0 : 1.0;
  q[0] = s * r.w();
  q[1] = s * r.x();
  q[2] = s * r.y();
  q[3] = s * r.z();
}

void coordinates(const Revolute& j, const Transform& T, const double* near, double* q) {
  q[0] = unwrap(axis_angle(j.axis, T.R), near[0]);
}
void coordinates(const Prismatic& j, const Transform& T, const double*, double* q) { q[0] = j.axis.dot(T.p); }
void coordinates(const Cylindrical& j, const Transform& T, const double* near, double* q) {
  const double angle = unwrap(axis_angle(j.axis, T.R), near[1]);
  q[0] = j.axis.dot(T.p);
  q[1] = angle;
}
void coordinates(const Universal& j, const Transform& T, const double* near, double* q) {
  // For an allowed pose R b = Rot(a, q0) b = (a·b) a + cos q0 b⊥ + sin q0 (a × b) with
  // b⊥ = b − (a·b) a, |b⊥| = |a × b|: q0 = atan2((a × b)·Rb, b⊥·Rb).
  const Vec3& a = j.axis;
  const Vec3& b = j.axis2;
  const Vec3 Rb = T.R * b;
  const double q0 = unwrap(std::atan2(a.cross(b).dot(Rb), b.dot(Rb) - a.dot(b) * a.dot(Rb)), near[0]);
  const double q1 = unwrap(axis_angle(b, axis_rotation(a, -q0) * T.R), near[1]);
  q[0] = q0;
  q[1] = q1;
}
void coordinates(const Spherical&, const Transform& T, const double* near, double* q) {
  quaternion_coordinates(T.R, near, q);
}
void coordinates(const Planar&, const Transform& T, const double* near, double* q) {
  const double angle = unwrap(axis_angle(Vec3::UnitZ(), T.R), near[2]);
  q[0] = T.p.x();
  q[1] = T.p.y();
  q[2] = angle;
}
void coordinates(const Free&, const Transform& T, const double* near, double* q) {
  quaternion_coordinates(T.R, near + 3, q + 3);
  q[0] = T.p.x();
  q[1] = T.p.y();
  q[2] = T.p.z();
}
void coordinates(const Fixed&, const Transform&, const double*, double*) {}

}  // namespace

double joint_coordinates(const Joint& joint, const Transform& pose, const double* near, double* q) {
  return std::visit(
      [&](const auto& k) {
        coordinates(k, pose, near, q);
        const Transform T = k.transform(q);
        return rotation_angle(T.R.transpose() * pose.R) + (T.p - pose.p).norm();
      },
      joint);
}

double joint_speeds(const Joint& joint, const double* q, const Vec6& v, double* u) {
  return std::visit(
      [&](const auto& k) {
        constexpr int NV = std::decay_t<decltype(k)>::nv;
        if constexpr (NV == 0) {
          return v.norm();
        } else {
          const Subspace<NV> S = k.subspace(q);
          Eigen::Map<Eigen::Matrix<double, NV, 1>> x(u);
          x = (S.transpose() * S).ldlt().solve(S.transpose() * v);
          return (S * x - v).norm();
        }
      },
      joint);
}

void body_state(const Model& model, const VecX& q, const VecX& u, BodyState& out) {
  KinematicsData kin(model);
  update_positions(model, kin, q);
  update_velocities(model, kin, q, u);
  out.pose = kin.X_world;
  out.velocity = kin.v;
}

JointStateResidual joint_state(const Model& model, const BodyState& s, const VecX& q_near, VecX& q, VecX& u) {
  q.resize(model.nq);
  u.resize(model.nv);
  JointStateResidual r;
  for (int i = 0; i < model.nbodies; ++i) {
    const ModelJoint& mj = model.joints[i];
    const int p = model.parent[i];
    // The child joint frame in the parent body frame (the world for a root).
    const Transform child_joint_frame =
        p < 0 ? s.pose[i] * mj.child_frame : s.pose[p].inverse() * s.pose[i] * mj.child_frame;
    double* qi = q.data() + model.q_index[i];
    r.position = std::max(r.position, joint_coordinates(mj.joint, mj.parent_frame.inverse() * child_joint_frame,
                                                        q_near.data() + model.q_index[i], qi));
    Vec6 v = mj.child_frame.inv_act_motion(s.velocity[i]);
    if (p >= 0) v -= child_joint_frame.inv_act_motion(s.velocity[p]);
    r.velocity = std::max(r.velocity, joint_speeds(mj.joint, qi, v, u.data() + model.v_index[i]));
  }
  return r;
}

}  // namespace loopdyn
