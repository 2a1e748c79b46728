// Spatial algebra identities (convention in spatial.hpp).
#include "loopdyn/core/spatial.hpp"
#include "test_support.hpp"

namespace loopdyn {
namespace {

using test::near;

struct Random {
  std::mt19937_64 rng{7};
  Transform transform() { return {test::random_rotation(rng), test::random_vec(rng, 2.0)}; }
  Vec6 vec6() { return test::random_vector(6, rng, 2.0); }
};

// Round-off on products of O(1) quantities: a few ulps times a handful of operations.
constexpr double tol = 1e-13;

TEST(Spatial, TransformCompositionAndInverse) {
  Random r;
  const Transform A = r.transform(), B = r.transform();
  const Vec3 x = test::random_vec(r.rng, 1.0);
  EXPECT_TRUE(near((A * B).apply(x), A.apply(B.apply(x)), tol));
  EXPECT_TRUE(near((A * A.inverse()).R, Mat3::Identity(), tol));
  EXPECT_TRUE(near((A * A.inverse()).p, Vec3::Zero(), tol));
}

TEST(Spatial, ActAndInverseActRoundTripAndMatchMatrices) {
  Random r;
  const Transform T = r.transform();
  const Vec6 m = r.vec6(), f = r.vec6();
  EXPECT_TRUE(near(T.inv_act_motion(T.act_motion(m)), m, tol));
  EXPECT_TRUE(near(T.inv_act_force(T.act_force(f)), f, tol));
  EXPECT_TRUE(near(T.act_motion(m), T.motion_matrix() * m, tol));
  // Force transform is the inverse transpose of the motion transform (Featherstone eq 2.25).
  EXPECT_TRUE(near(T.act_force(f), T.motion_matrix().inverse().transpose() * f, tol));
  EXPECT_TRUE(near((T * T).act_motion(m), T.act_motion(T.act_motion(m)), tol));
}

TEST(Spatial, PowerIsInvariantUnderChangeOfFrame) {
  Random r;
  const Transform T = r.transform();
  const Vec6 m = r.vec6(), f = r.vec6();
  EXPECT_NEAR(T.act_motion(m).dot(T.act_force(f)), m.dot(f), tol * 10);
}

TEST(Spatial, CrossProductsAreDual) {
  Random r;
  const Vec6 v = r.vec6(), m = r.vec6(), f = r.vec6();
  // (v × m)·f = −m·(v ×* f) (Featherstone eq 2.33).
  EXPECT_NEAR(cross_motion(v, m).dot(f), -m.dot(cross_force(v, f)), tol * 10);
  EXPECT_TRUE(near(cross_motion(v, v), Vec6::Zero(), tol));
}

TEST(Spatial, ActInertiaEqualsSixBySixProducts) {
  Random r;
  const Mat6 I = rigid_inertia(1.7, test::random_vec(r.rng, 0.5), test::random_inertia(r.rng));
  const Transform T = r.transform();
  const Mat6 X = T.motion_matrix();
  EXPECT_TRUE(near(T.act_inertia(I), X.inverse().transpose() * I * X.inverse(), tol * 10));
}

// axis_rotation's two paths (a frame axis, any unit axis) against Eigen's AngleAxis.
TEST(Spatial, AxisRotationMatchesAngleAxis) {
  Random r;
  for (const Vec3& axis : {Vec3(Vec3::UnitX()), Vec3(Vec3::UnitY()), Vec3(Vec3::UnitZ()),
                           Vec3(test::random_vec(r.rng, 1.0).normalized())})
    for (double q : {-2.9, 0.0, 0.4, 1.3})
      EXPECT_TRUE(near(axis_rotation(axis, q), Eigen::AngleAxisd(q, axis).toRotationMatrix(), tol)) << axis.transpose() << ", " << q;
}

TEST(Spatial, RigidInertiaGivesKineticEnergyAboutTheCentreOfMass) {
  Random r;
  const double mass = 2.5;
  const Vec3 c = test::random_vec(r.rng, 0.5);
  const Mat3 Ic = test::random_inertia(r.rng);
  const Vec6 v = r.vec6();
  // T = ½ m |v_c|² + ½ ωᵀ Ic ω with v_c = v_O + ω × c.
  const Vec3 w = v.head<3>(), vc = v.tail<3>() + w.cross(c);
  EXPECT_NEAR(0.5 * v.dot(rigid_inertia(mass, c, Ic) * v), 0.5 * mass * vc.squaredNorm() + 0.5 * w.dot(Ic * w), tol * 10);
}

TEST(Spatial, RpyFollowsUrdf) {
  const Vec3 rpy(0.1, -0.4, 1.2);
  const Mat3 expected = axis_rotation(Vec3::UnitZ(), 1.2) * axis_rotation(Vec3::UnitY(), -0.4) *
                        axis_rotation(Vec3::UnitX(), 0.1);
  EXPECT_TRUE(near(rpy_rotation(rpy), expected, tol));
}

}  // namespace
}  // namespace loopdyn
