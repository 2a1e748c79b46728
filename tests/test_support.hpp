// Shared test helpers: random mechanisms with every joint type, random states, and one symmetric
// abs+rel comparison.
#pragma once

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "loopdyn/model.hpp"

namespace loopdyn::test {

/// ‖a − b‖∞ ≤ tol · max(1, ‖a‖∞, ‖b‖∞): relative for large values, absolute near zero, and
/// symmetric in a and b.
inline ::testing::AssertionResult near(const Eigen::Ref<const MatX>& a, const Eigen::Ref<const MatX>& b, double tol) {
  if (a.rows() != b.rows() || a.cols() != b.cols())
    return ::testing::AssertionFailure() << "shape " << a.rows() << "x" << a.cols() << " vs " << b.rows() << "x"
                                         << b.cols();
  const double scale = std::max({1.0, a.cwiseAbs().maxCoeff(), b.cwiseAbs().maxCoeff()});
  const double err = (a - b).cwiseAbs().maxCoeff();
  if (err <= tol * scale) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "max difference " << err << " > " << tol << " * " << scale << "\n a = "
                                       << a.transpose() << "\n b = " << b.transpose();
}

inline double uniform(std::mt19937_64& rng, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng);
}
inline Vec3 random_vec(std::mt19937_64& rng, double r) { return Vec3(uniform(rng, -r, r), uniform(rng, -r, r), uniform(rng, -r, r)); }
inline Mat3 random_rotation(std::mt19937_64& rng) {
  Eigen::Vector4d c(uniform(rng, -1, 1), uniform(rng, -1, 1), uniform(rng, -1, 1), uniform(rng, -1, 1));
  return Quat(c(0), c(1), c(2), c(3)).normalized().toRotationMatrix();
}
/// A valid rotational inertia: rotated principal moments that satisfy the triangle inequality.
inline Mat3 random_inertia(std::mt19937_64& rng) {
  const double a = uniform(rng, 0.05, 0.5), b = uniform(rng, 0.05, 0.5);
  const double c = uniform(rng, std::abs(a - b) + 0.01, a + b);
  const Mat3 R = random_rotation(rng);
  return R * Vec3(a, b, c).asDiagonal() * R.transpose();
}

// prefix + number, appended (GCC 12 warns falsely on "literal" + std::string temporaries at -O3).
inline std::string indexed(std::string prefix, int i) {
  prefix.append(std::to_string(i));
  return prefix;
}

/// Random tree of `nbodies` bodies; joint types cycle through all eight types starting at
/// `first_type`, parents drawn among earlier bodies or ground, random frames and axes.
inline Mechanism random_tree(std::uint64_t seed, int nbodies, int first_type = 0) {
  std::mt19937_64 rng(seed);
  Mechanism m;
  m.name = indexed("random_tree_", static_cast<int>(seed));
  m.gravity = Vec3(0.3, -0.5, -9.81);
  for (int i = 0; i < nbodies; ++i) {
    const std::string name = indexed("b", i);
    m.add_body(name, uniform(rng, 0.5, 2.0), random_vec(rng, 0.3), random_inertia(rng));
    const int p = std::uniform_int_distribution<int>(-1, i - 1)(rng);
    const auto type = static_cast<JointType>((first_type + i) % 8);
    JointSpec& j = m.add_joint(indexed("j", i), type, p < 0 ? std::string("ground") : indexed("b", p), name,
                               Transform{random_rotation(rng), random_vec(rng, 0.5)},
                               i % 3 == 0 ? Transform{} : Transform{random_rotation(rng), random_vec(rng, 0.2)});
    j.axis = random_vec(rng, 1.0).normalized();
    j.axis2 = j.axis.unitOrthogonal();
  }
  return m;
}

/// Random coordinates: unit quaternions for spherical/free joints, values in [-1, 1] otherwise.
inline VecX random_q(const Model& model, std::mt19937_64& rng) {
  VecX q(model.nq);
  for (int k = 0; k < model.nq; ++k) q(k) = uniform(rng, -1.0, 1.0);
  model.normalize(q);
  return q;
}
inline VecX random_vector(int n, std::mt19937_64& rng, double r = 1.0) {
  VecX v(n);
  for (int k = 0; k < n; ++k) v(k) = uniform(rng, -r, r);
  return v;
}

/// q moved by ε along speed direction du: q + ε q̇(q, du), quaternions re-normalized (the
/// normalization changes q by O(ε²), which central differences cancel).
inline VecX moved(const Model& model, const VecX& q, const VecX& du, double eps) {
  VecX qd(model.nq);
  model.qdot(q, du, qd);
  VecX out = q + eps * qd;
  model.normalize(out);
  return out;
}

}  // namespace loopdyn::test
