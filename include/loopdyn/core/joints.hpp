// Joint types: a std::variant of fixed-size structs, each with inline kernels so that the tree
// sweeps (kinematics.cpp, tree_dynamics.cpp) run fixed-size code per joint type via std::visit.
//
// Every kernel works in the joint's own frames: `transform(q)` is the pose of the child joint
// frame in the parent joint frame (identity at the neutral q), `subspace(q)` is the motion
// subspace S (6 x nv) and `bias(q, u)` the term Ṡu, both in the child joint frame, so that the
// relative spatial velocity of the child joint frame is S u and its relative acceleration
// S u̇ + Ṡ u (convention of spatial.hpp). Coordinates are the model file's contract
// (docs/model-format.md).
#pragma once

#include <array>
#include <string_view>
#include <variant>

#include "loopdyn/core/spatial.hpp"

namespace loopdyn {

template <int NV>
using Subspace = Eigen::Matrix<double, 6, NV>;

namespace detail {
/// q̇ of a unit quaternion [w, x, y, z] for angular velocity ω in the rotated (child) frame:
/// q̇ = ½ q ⊗ (0, ω).
inline void quaternion_rate(const double* q, const Vec3& w, double* qd) {
  qd[0] = 0.5 * (-q[1] * w.x() - q[2] * w.y() - q[3] * w.z());
  qd[1] = 0.5 * (q[0] * w.x() + q[2] * w.z() - q[3] * w.y());
  qd[2] = 0.5 * (q[0] * w.y() + q[3] * w.x() - q[1] * w.z());
  qd[3] = 0.5 * (q[0] * w.z() + q[1] * w.y() - q[2] * w.x());
}
inline Mat3 quaternion_matrix(const double* q) {
  return Quat(q[0], q[1], q[2], q[3]).normalized().toRotationMatrix();
}
inline void normalize_quaternion(double* q) {
  const double n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  for (int k = 0; k < 4; ++k) q[k] /= n;
}
}  // namespace detail

/// Rotation q about `axis` (unit, joint frame); u = q̇.
struct Revolute {
  static constexpr int nq = 1, nv = 1;
  static constexpr std::string_view type_name = "revolute";
  Vec3 axis = Vec3::UnitZ();
  Transform transform(const double* q) const { return Transform::rotation(axis_rotation(axis, q[0])); }
  Subspace<1> subspace(const double*) const { return (Subspace<1>() << axis, Vec3::Zero()).finished(); }
  Vec6 bias(const double*, const double*) const { return Vec6::Zero(); }
  void qdot(const double*, const double* u, double* qd) const { qd[0] = u[0]; }
  void normalize(double*) const {}
  void neutral(double* q) const { q[0] = 0.0; }
};

/// Translation q along `axis`; u = q̇.
struct Prismatic {
  static constexpr int nq = 1, nv = 1;
  static constexpr std::string_view type_name = "prismatic";
  Vec3 axis = Vec3::UnitZ();
  Transform transform(const double* q) const { return Transform::translation(q[0] * axis); }
  Subspace<1> subspace(const double*) const { return (Subspace<1>() << Vec3::Zero(), axis).finished(); }
  Vec6 bias(const double*, const double*) const { return Vec6::Zero(); }
  void qdot(const double*, const double* u, double* qd) const { qd[0] = u[0]; }
  void normalize(double*) const {}
  void neutral(double* q) const { q[0] = 0.0; }
};

/// q = [translation along `axis`, rotation about `axis`]; u = q̇ (the two commute).
struct Cylindrical {
  static constexpr int nq = 2, nv = 2;
  static constexpr std::string_view type_name = "cylindrical";
  Vec3 axis = Vec3::UnitZ();
  Transform transform(const double* q) const { return {axis_rotation(axis, q[1]), q[0] * axis}; }
  Subspace<2> subspace(const double*) const {
    Subspace<2> S = Subspace<2>::Zero();
    S.block<3, 1>(3, 0) = axis;
    S.block<3, 1>(0, 1) = axis;
    return S;
  }
  Vec6 bias(const double*, const double*) const { return Vec6::Zero(); }
  void qdot(const double*, const double* u, double* qd) const { qd[0] = u[0]; qd[1] = u[1]; }
  void normalize(double*) const {}
  void neutral(double* q) const { q[0] = q[1] = 0.0; }
};

/// q = [rotation about `axis` (fixed in the parent joint frame), then about `axis2` (fixed in the
/// child joint frame)]; R = Rot(axis, q0) Rot(axis2, q1); u = q̇.
struct Universal {
  static constexpr int nq = 2, nv = 2;
  static constexpr std::string_view type_name = "universal";
  Vec3 axis = Vec3::UnitX();
  Vec3 axis2 = Vec3::UnitY();
  Transform transform(const double* q) const {
    return Transform::rotation(axis_rotation(axis, q[0]) * axis_rotation(axis2, q[1]));
  }
  // ω (child frame) = q̇0 R2ᵀ axis + q̇1 axis2, R2 = Rot(axis2, q1).
  Subspace<2> subspace(const double* q) const {
    Subspace<2> S = Subspace<2>::Zero();
    S.block<3, 1>(0, 0) = axis_rotation(axis2, -q[1]) * axis;
    S.block<3, 1>(0, 1) = axis2;
    return S;
  }
  // Ṡu = [q̇0 q̇1 (R2ᵀ axis) × axis2; 0].
  Vec6 bias(const double* q, const double* u) const {
    Vec6 c = Vec6::Zero();
    c.head<3>() = u[0] * u[1] * (axis_rotation(axis2, -q[1]) * axis).cross(axis2);
    return c;
  }
  void qdot(const double*, const double* u, double* qd) const { qd[0] = u[0]; qd[1] = u[1]; }
  void normalize(double*) const {}
  void neutral(double* q) const { q[0] = q[1] = 0.0; }
};

/// q = unit quaternion [w, x, y, z] of the child joint frame in the parent joint frame;
/// u = relative angular velocity in the child joint frame.
struct Spherical {
  static constexpr int nq = 4, nv = 3;
  static constexpr std::string_view type_name = "spherical";
  Transform transform(const double* q) const { return Transform::rotation(detail::quaternion_matrix(q)); }
  Subspace<3> subspace(const double*) const {
    Subspace<3> S = Subspace<3>::Zero();
    S.topRows<3>().setIdentity();
    return S;
  }
  Vec6 bias(const double*, const double*) const { return Vec6::Zero(); }
  void qdot(const double* q, const double* u, double* qd) const {
    detail::quaternion_rate(q, Vec3(u[0], u[1], u[2]), qd);
  }
  void normalize(double* q) const { detail::normalize_quaternion(q); }
  void neutral(double* q) const { q[0] = 1.0; q[1] = q[2] = q[3] = 0.0; }
};

/// q = [x, y, θ]: translation along the joint frame's x and y, then rotation θ about its z;
/// u = q̇.
struct Planar {
  static constexpr int nq = 3, nv = 3;
  static constexpr std::string_view type_name = "planar";
  Transform transform(const double* q) const {
    return {axis_rotation(Vec3::UnitZ(), q[2]), Vec3(q[0], q[1], 0.0)};
  }
  // Columns: ẋ → [0; Rᵀex], ẏ → [0; Rᵀey], θ̇ → [ez; 0], R = Rz(θ).
  Subspace<3> subspace(const double* q) const {
    const double c = std::cos(q[2]), s = std::sin(q[2]);
    Subspace<3> S = Subspace<3>::Zero();
    S(3, 0) = c;  S(4, 0) = -s;
    S(3, 1) = s;  S(4, 1) = c;
    S(2, 2) = 1.0;
    return S;
  }
  // Ṡu = [0; −θ̇ ez × Rᵀ(ẋ, ẏ, 0)].
  Vec6 bias(const double* q, const double* u) const {
    const double c = std::cos(q[2]), s = std::sin(q[2]);
    const Vec3 vl(c * u[0] + s * u[1], -s * u[0] + c * u[1], 0.0);
    Vec6 b = Vec6::Zero();
    b.tail<3>() = -u[2] * Vec3::UnitZ().cross(vl);
    return b;
  }
  void qdot(const double*, const double* u, double* qd) const { qd[0] = u[0]; qd[1] = u[1]; qd[2] = u[2]; }
  void normalize(double*) const {}
  void neutral(double* q) const { q[0] = q[1] = q[2] = 0.0; }
};

/// q = [x, y, z, w, qx, qy, qz]: position of the child joint frame in the parent joint frame, then
/// unit quaternion; u = [v; ω], linear then angular velocity of the child joint frame, both in the
/// child joint frame.
struct Free {
  static constexpr int nq = 7, nv = 6;
  static constexpr std::string_view type_name = "free";
  Transform transform(const double* q) const {
    return {detail::quaternion_matrix(q + 3), Vec3(q[0], q[1], q[2])};
  }
  Subspace<6> subspace(const double*) const {
    Subspace<6> S = Subspace<6>::Zero();
    S.block<3, 3>(3, 0).setIdentity();  // linear velocity columns
    S.block<3, 3>(0, 3).setIdentity();  // angular velocity columns
    return S;
  }
  Vec6 bias(const double*, const double*) const { return Vec6::Zero(); }
  void qdot(const double* q, const double* u, double* qd) const {
    const Vec3 pd = detail::quaternion_matrix(q + 3) * Vec3(u[0], u[1], u[2]);
    qd[0] = pd.x(); qd[1] = pd.y(); qd[2] = pd.z();
    detail::quaternion_rate(q + 3, Vec3(u[3], u[4], u[5]), qd + 3);
  }
  void normalize(double* q) const { detail::normalize_quaternion(q + 3); }
  void neutral(double* q) const {
    q[0] = q[1] = q[2] = 0.0;
    q[3] = 1.0; q[4] = q[5] = q[6] = 0.0;
  }
};

/// Rigid attachment: no coordinates.
struct Fixed {
  static constexpr int nq = 0, nv = 0;
  static constexpr std::string_view type_name = "fixed";
  Transform transform(const double*) const { return {}; }
  Subspace<0> subspace(const double*) const { return {}; }
  Vec6 bias(const double*, const double*) const { return Vec6::Zero(); }
  void qdot(const double*, const double*, double*) const {}
  void normalize(double*) const {}
  void neutral(double*) const {}
};

using Joint = std::variant<Revolute, Prismatic, Cylindrical, Universal, Spherical, Planar, Free, Fixed>;

inline int joint_nq(const Joint& j) { return std::visit([](const auto& k) { return k.nq; }, j); }
inline int joint_nv(const Joint& j) { return std::visit([](const auto& k) { return k.nv; }, j); }
inline std::string_view joint_type_name(const Joint& j) {
  return std::visit([](const auto& k) { return k.type_name; }, j);
}

}  // namespace loopdyn
