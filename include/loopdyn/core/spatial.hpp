// Spatial (6D) vector algebra for loopdyn.
//
// CONVENTION (used everywhere in loopdyn; the papers' formulas are converted to it):
//  * A spatial motion vector is m = [ω; v]: angular velocity first, then the linear velocity of
//    the material point that coincides with the origin of the frame the vector is expressed in.
//  * A spatial force vector is f = [n; f]: moment about the frame origin first, then the force.
//  * Both are expressed in a body frame unless a name says otherwise (`_world`).
//  * A Transform T = (R, p) is the pose of a frame B relative to a frame A: the columns of R are
//    B's axes in A coordinates and p is B's origin in A coordinates, so a point maps as
//    x_A = R x_B + p. `act_*` maps vectors from B to A coordinates, `inv_act_*` from A to B.
//  * Spatial inertia I (6x6) about the frame origin maps motion to momentum: h = I m.
// This is Featherstone's convention (Rigid Body Dynamics Algorithms, ch. 2) with Plücker
// transforms stored as (R, p) instead of 6x6 matrices; all types are fixed size (no heap).
#pragma once

#include <Eigen/Core>
#include <Eigen/Geometry>
#include <cmath>

namespace loopdyn {

using Vec3 = Eigen::Vector3d;
using Mat3 = Eigen::Matrix3d;
using Vec6 = Eigen::Matrix<double, 6, 1>;
using Mat6 = Eigen::Matrix<double, 6, 6>;
using VecX = Eigen::VectorXd;
using MatX = Eigen::MatrixXd;
using Mat6X = Eigen::Matrix<double, 6, Eigen::Dynamic>;
using Quat = Eigen::Quaterniond;

/// Skew-symmetric cross-product matrix: skew(a) b = a × b.
inline Mat3 skew(const Vec3& a) {
  Mat3 s;
  s << 0.0, -a.z(), a.y(), a.z(), 0.0, -a.x(), -a.y(), a.x(), 0.0;
  return s;
}

/// Motion cross product m × n (Featherstone eq 2.31): [ω×ωn; ω×vn + v×ωn].
inline Vec6 cross_motion(const Vec6& m, const Vec6& n) {
  Vec6 r;
  r.head<3>() = m.head<3>().cross(n.head<3>());
  r.tail<3>() = m.head<3>().cross(n.tail<3>()) + m.tail<3>().cross(n.head<3>());
  return r;
}

/// Force cross product m ×* f (Featherstone eq 2.32): [ω×n + v×f; ω×f].
inline Vec6 cross_force(const Vec6& m, const Vec6& f) {
  Vec6 r;
  r.head<3>() = m.head<3>().cross(f.head<3>()) + m.tail<3>().cross(f.tail<3>());
  r.tail<3>() = m.head<3>().cross(f.tail<3>());
  return r;
}

/// Rigid transform: pose of frame B in frame A (see the convention above).
struct Transform {
  Mat3 R = Mat3::Identity();
  Vec3 p = Vec3::Zero();

  static Transform identity() { return {}; }
  static Transform translation(const Vec3& p) { return {Mat3::Identity(), p}; }
  static Transform rotation(const Mat3& R) { return {R, Vec3::Zero()}; }

  /// Composition: (A←B) * (B←C) = (A←C).
  Transform operator*(const Transform& o) const { return {R * o.R, R * o.p + p}; }
  Transform inverse() const { return {R.transpose(), -(R.transpose() * p)}; }

  Vec3 apply(const Vec3& x_B) const { return R * x_B + p; }

  /// Motion vector from B to A coordinates: ω_A = Rω, v_A = Rv + p × Rω.
  Vec6 act_motion(const Vec6& m) const {
    Vec6 r;
    r.head<3>().noalias() = R * m.head<3>();
    r.tail<3>().noalias() = R * m.tail<3>();
    r.tail<3>() += p.cross(r.head<3>());
    return r;
  }
  /// Motion vector from A to B coordinates: ω_B = Rᵀω, v_B = Rᵀ(v − p × ω).
  Vec6 inv_act_motion(const Vec6& m) const {
    Vec6 r;
    r.head<3>().noalias() = R.transpose() * m.head<3>();
    r.tail<3>().noalias() = R.transpose() * (m.tail<3>() - p.cross(m.head<3>()));
    return r;
  }
  /// Force vector from B to A coordinates: f_A = Rf, n_A = Rn + p × Rf.
  Vec6 act_force(const Vec6& f) const {
    Vec6 r;
    r.tail<3>().noalias() = R * f.tail<3>();
    r.head<3>().noalias() = R * f.head<3>();
    r.head<3>() += p.cross(r.tail<3>());
    return r;
  }
  /// Force vector from A to B coordinates: f_B = Rᵀf, n_B = Rᵀ(n − p × f).
  Vec6 inv_act_force(const Vec6& f) const {
    Vec6 r;
    r.tail<3>().noalias() = R.transpose() * f.tail<3>();
    r.head<3>().noalias() = R.transpose() * (f.head<3>() - p.cross(f.tail<3>()));
    return r;
  }

  /// 6x6 Plücker matrix of act_motion (B → A coordinates).
  Mat6 motion_matrix() const {
    Mat6 X;
    X.topLeftCorner<3, 3>() = R;
    X.topRightCorner<3, 3>().setZero();
    X.bottomLeftCorner<3, 3>().noalias() = skew(p) * R;
    X.bottomRightCorner<3, 3>() = R;
    return X;
  }

  /// Spatial inertia (or articulated inertia) expressed in B, re-expressed in A:
  /// I_A = X* I_B X⁻¹ with X the motion transform B → A. On 3x3 blocks I = [A Bc; Bcᵀ C] (A, C
  /// symmetric): rotated, R A Rᵀ etc., then shifted by p with P = p×:
  /// [A − Bc P − (Bc P)ᵀ − P C P, Bc + P C; ·, C]. The products with P are cross products
  /// (row i of M P is (Mᵢ × p)ᵀ), and only the lower triangles of the symmetric blocks are formed:
  /// about 190 multiplications instead of 243 for nine general 3x3 products.
  Mat6 act_inertia(const Mat6& I) const {
    Mat6 out;
    act_inertia(I, out);
    return out;
  }
  /// The same into `out` (not I), for sums that start by assignment: assigning the returned
  /// matrix copies its 288 bytes (`rep movsq`, a sixth of the aggregated factorization's time).
  void act_inertia(const Mat6& I, Mat6& out) const {
    const Mat3 C = rotate_symmetric(I.bottomRightCorner<3, 3>());
    const Mat3 A = rotate_symmetric(I.topLeftCorner<3, 3>());
    const Mat3 Bc = R * I.topRightCorner<3, 3>() * R.transpose();
    Mat3 PC, BP;
    for (int k = 0; k < 3; ++k) {
      PC.col(k) = p.cross(C.col(k));
      BP.row(k) = Vec3(Bc.row(k).transpose()).cross(p).transpose();
    }
    for (int c = 0; c < 3; ++c)
      for (int r = c; r < 3; ++r) {
        // (P C P)(r, c) = row r of P C, crossed with p, component c.
        const Vec3 pc = PC.row(r).transpose();
        const double pcp = pc((c + 1) % 3) * p((c + 2) % 3) - pc((c + 2) % 3) * p((c + 1) % 3);
        out(r, c) = out(c, r) = A(r, c) - BP(r, c) - BP(c, r) - pcp;
      }
    out.topRightCorner<3, 3>() = Bc + PC;
    out.bottomLeftCorner<3, 3>() = out.topRightCorner<3, 3>().transpose();
    out.bottomRightCorner<3, 3>() = C;
  }

 private:
  /// R S Rᵀ for a symmetric S: the lower triangle of (R S) Rᵀ, mirrored.
  template <class M>
  Mat3 rotate_symmetric(const M& S) const {
    const Mat3 RS = R * S;
    Mat3 out;
    for (int c = 0; c < 3; ++c)
      for (int r = c; r < 3; ++r) out(r, c) = out(c, r) = RS.row(r).dot(R.row(c));
    return out;
  }
};

/// Rotation about a unit axis by angle q (right-handed): Rodrigues' formula
/// R = cos q 1 + sin q [a]× + (1 − cos q) a aᵀ, from one sine and one cosine of the same angle
/// (which the compiler turns into one sincos call); about a frame axis e_k, only the plane of the
/// two other axes turns.
inline Mat3 axis_rotation(const Vec3& axis, double q) {
  const double s = std::sin(q), c = std::cos(q);
  for (int k = 0; k < 3; ++k) {
    if (axis(k) != 1.0) continue;
    const int i = (k + 1) % 3, j = (k + 2) % 3;
    Mat3 R = Mat3::Identity();
    R(i, i) = R(j, j) = c;
    R(j, i) = s;
    R(i, j) = -s;
    return R;
  }
  Mat3 R = (1.0 - c) * axis * axis.transpose();
  R.diagonal().array() += c;
  const Vec3 sa = s * axis;
  R(0, 1) -= sa.z();
  R(1, 0) += sa.z();
  R(0, 2) += sa.y();
  R(2, 0) -= sa.y();
  R(1, 2) -= sa.x();
  R(2, 1) += sa.x();
  return R;
}

/// URDF roll-pitch-yaw: R = Rz(yaw) Ry(pitch) Rx(roll).
inline Mat3 rpy_rotation(const Vec3& rpy) {
  return (Eigen::AngleAxisd(rpy.z(), Vec3::UnitZ()) * Eigen::AngleAxisd(rpy.y(), Vec3::UnitY()) *
          Eigen::AngleAxisd(rpy.x(), Vec3::UnitX()))
      .toRotationMatrix();
}

/// Spatial inertia of a rigid body about its frame origin (Featherstone eq 2.63):
/// [Ic + m c×c×ᵀ, m c×; m c×ᵀ, m 1], with Ic the rotational inertia about the centre of mass.
inline Mat6 rigid_inertia(double mass, const Vec3& com, const Mat3& inertia_com) {
  const Mat3 C = skew(com);
  Mat6 I;
  I.topLeftCorner<3, 3>() = inertia_com + mass * C * C.transpose();
  I.topRightCorner<3, 3>() = mass * C;
  I.bottomLeftCorner<3, 3>() = mass * C.transpose();
  I.bottomRightCorner<3, 3>() = mass * Mat3::Identity();
  return I;
}

}  // namespace loopdyn
