// Inverse joint kinematics and the joint state ↔ body state maps: per joint type, coordinates →
// transform → coordinates (equivalent coordinates, continuity through `near`, residuals of poses
// the joint does not allow, speeds); per model, body_state then joint_state gives (q, u) back.
#include "loopdyn/core/body_coordinates.hpp"

#include <numbers>

#include "loopdyn/core/kinematics.hpp"
#include "test_support.hpp"

namespace loopdyn {
namespace {

using test::near;
using test::uniform;

constexpr double pi = std::numbers::pi;

// Per joint: coordinates up to 10 in magnitude go through a few dozen floating-point operations of
// order-one factors (atan2, 3x3 products, an unwrap by a few turns), so the round trip is off by a
// few ulps relative to max(1, |q|) (below 1e-14 here); 1e-12 leaves two orders of margin and still
// catches any formula error (of the order of the coordinates or of ε below).
constexpr double tol = 1e-12;

Transform transform(const Joint& j, const VecX& q) {
  return std::visit([&](const auto& k) { return k.transform(q.data()); }, j);
}
Mat6X subspace(const Joint& j, const VecX& q) {
  return std::visit([&](const auto& k) { return Mat6X(k.subspace(q.data())); }, j);
}
VecX neutral(const Joint& j) {
  VecX q(joint_nq(j));
  std::visit([&](const auto& k) { k.neutral(q.data()); }, j);
  return q;
}

// What each coordinate is: 'a' an angle (equivalent modulo 2π), 'q' a quaternion component (the
// four equivalent up to a common sign), 'd' anything else.
const char* kinds(const Joint& j) {
  static constexpr const char* k[] = {"a", "d", "da", "aa", "qqqq", "dda", "dddqqqq", ""};
  return k[j.index()];
}

// Angles and displacements in [-10, 10], unit quaternions.
VecX random_coordinates(const Joint& j, std::mt19937_64& rng) {
  VecX q = test::random_vector(joint_nq(j), rng, 10.0);
  std::visit([&](const auto& k) { k.normalize(q.data()); }, j);
  return q;
}

::testing::AssertionResult same_pose(const Transform& a, const Transform& b) {
  auto r = near(a.R, b.R, tol);
  return r ? near(a.p, b.p, tol) : r;
}

// Largest magnitude, 0 for no coordinates (Eigen's maxCoeff needs a non-empty vector).
double max_abs(const VecX& v) { return v.size() == 0 ? 0.0 : v.cwiseAbs().maxCoeff(); }

// test::near, and true for two empty vectors (a fixed joint's).
::testing::AssertionResult close(const VecX& a, const VecX& b, double t) {
  return a.size() == 0 && b.size() == 0 ? ::testing::AssertionSuccess() : near(a, b, t);
}

// q and q0 equal up to whole turns of the angles and the quaternion's sign.
::testing::AssertionResult equivalent(const Joint& j, const VecX& q, const VecX& q0) {
  const char* kind = kinds(j);
  double dot = 0.0;
  for (int k = 0; kind[k]; ++k) {
    if (kind[k] == 'q') dot += q(k) * q0(k);
  }
  VecX d = q - q0;
  for (int k = 0; kind[k]; ++k) {
    if (kind[k] == 'a') d(k) = std::remainder(d(k), 2 * pi);
    if (kind[k] == 'q') d(k) = dot < 0.0 ? q(k) + q0(k) : d(k);
  }
  return close(d, VecX::Zero(d.size()), tol * std::max(1.0, max_abs(q0)));
}

// Round trips of one joint over random coordinates and speeds.
void check_joint(const Joint& j, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const char* kind = kinds(j);
  for (int trial = 0; trial < 100; ++trial) {
    const VecX q0 = random_coordinates(j, rng);
    const double scale = std::max(1.0, max_abs(q0));
    const Transform pose = transform(j, q0);

    // From the neutral coordinates: an equivalent q with the same pose.
    VecX q = neutral(j);
    EXPECT_LE(joint_coordinates(j, pose, q.data(), q.data()), tol * scale);
    EXPECT_TRUE(same_pose(transform(j, q), pose));
    EXPECT_TRUE(equivalent(j, q, q0));

    // near = q0: q0 itself.
    EXPECT_LE(joint_coordinates(j, pose, q0.data(), q.data()), tol * scale);
    EXPECT_TRUE(close(q, q0, tol));

    // near = q0 moved by whole turns plus less than π/2 on the angles, and the quaternion's sign
    // flipped: the same turns and sign.
    VecX q_near = q0, expected = q0;
    for (int k = 0; kind[k]; ++k) {
      if (kind[k] == 'a') {
        const double turns = 2 * pi * std::uniform_int_distribution<int>(-2, 2)(rng);
        q_near(k) += turns + uniform(rng, -0.49 * pi, 0.49 * pi);
        expected(k) += turns;
      }
      if (kind[k] == 'q') {
        q_near(k) = -q0(k) + uniform(rng, -0.1, 0.1);
        expected(k) = -q0(k);
      }
    }
    joint_coordinates(j, pose, q_near.data(), q.data());
    EXPECT_TRUE(close(q, expected, tol));

    // Speeds: v = S u0 gives u0 back.
    const VecX u0 = test::random_vector(joint_nv(j), rng, 5.0);
    const Vec6 v = subspace(j, q0) * u0;
    VecX u(joint_nv(j));
    EXPECT_LE(joint_speeds(j, q0.data(), v, u.data()), tol * 5);
    EXPECT_TRUE(close(u, u0, tol));
  }
}

// A pose the joint does not allow: the residual is `expected` and the coordinates are q0.
void check_disallowed(const Joint& j, const VecX& q0, const Transform& pose, double expected) {
  VecX q(q0.size());
  EXPECT_NEAR(joint_coordinates(j, pose, q0.data(), q.data()), expected, tol);
  EXPECT_TRUE(close(q, q0, tol));
}

// A speed the joint does not allow: the residual is its norm and u0 comes back.
void check_disallowed_speed(const Joint& j, const VecX& q0, const Vec6& off) {
  std::mt19937_64 rng(3);
  const VecX u0 = test::random_vector(joint_nv(j), rng, 5.0);
  VecX u(u0.size());
  EXPECT_NEAR(joint_speeds(j, q0.data(), subspace(j, q0) * u0 + off, u.data()), off.norm(), tol);
  EXPECT_TRUE(close(u, u0, tol));
}

Vec6 motion(const Vec3& w, const Vec3& v) { return (Vec6() << w, v).finished(); }

// The disallowed poses below perturb an allowed pose by a rotation ε about a direction n normal
// to the joint's rotation directions and a translation δ normal to its translation directions:
// the projection of body_coordinates.hpp returns the unperturbed coordinates, at distance ε + δ.
constexpr double eps = 0.3, delta = 0.2;

TEST(BodyCoordinates, Revolute) {
  const Vec3 a = Vec3(0.3, -0.5, 0.8).normalized(), n = a.unitOrthogonal();
  const Revolute j{a};
  check_joint(j, 1);
  const VecX q0 = (VecX(1) << 4.0).finished();
  check_disallowed(j, q0, Transform{axis_rotation(a, 4.0) * axis_rotation(n, eps), delta * a}, eps + delta);
  check_disallowed_speed(j, q0, motion(n, a));
}

TEST(BodyCoordinates, Prismatic) {
  const Vec3 a = Vec3(-0.2, 0.9, 0.4).normalized(), n = a.unitOrthogonal();
  const Prismatic j{a};
  check_joint(j, 2);
  const VecX q0 = (VecX(1) << -3.0).finished();
  check_disallowed(j, q0, Transform{axis_rotation(a, eps), -3.0 * a + delta * n}, eps + delta);
  check_disallowed_speed(j, q0, motion(a, n));
}

TEST(BodyCoordinates, Cylindrical) {
  const Vec3 a = Vec3(0.6, 0.1, -0.7).normalized(), n = a.unitOrthogonal();
  const Cylindrical j{a};
  check_joint(j, 3);
  const VecX q0 = (VecX(2) << 1.5, -5.0).finished();
  check_disallowed(j, q0, Transform{axis_rotation(a, -5.0) * axis_rotation(n, eps), 1.5 * a + delta * a.cross(n)},
                   eps + delta);
  check_disallowed_speed(j, q0, motion(n, a.cross(n)));
}

TEST(BodyCoordinates, Universal) {
  const Vec3 a = Vec3(0.2, 0.7, -0.4).normalized(), b = a.cross(Vec3(1, 2, 3)).normalized(), c = a.cross(b);
  const Universal j{a, b};
  check_joint(j, 4);
  // A rotation ε about c = a × b between the joint's two rotations tilts axis2 out of the plane
  // normal to axis; in the child joint frame, Rot(b, −q1) c is normal to both columns of S.
  const VecX q0 = (VecX(2) << 5.0, -7.0).finished();
  const Mat3 R = axis_rotation(a, 5.0) * axis_rotation(c, eps) * axis_rotation(b, -7.0);
  check_disallowed(j, q0, Transform{R, delta * a}, eps + delta);
  check_disallowed_speed(j, q0, motion(axis_rotation(b, 7.0) * c, b));
}

// Model::build requires perpendicular axes; the formula holds for any two non-parallel ones.
TEST(BodyCoordinates, UniversalWithObliqueAxes) {
  const Vec3 a = Vec3(0.2, 0.7, -0.4).normalized();
  const Vec3 b = axis_rotation(a.unitOrthogonal(), pi / 3) * a;  // 60° from a
  check_joint(Universal{a, b}, 5);
}

TEST(BodyCoordinates, Spherical) {
  const Spherical j;
  check_joint(j, 6);
  const VecX q0 = Eigen::Vector4d(0.5, -0.1, 0.7, 0.3).normalized();
  check_disallowed(j, q0, Transform{detail::quaternion_matrix(q0.data()), Vec3(0.0, delta, 0.0)}, delta);
  check_disallowed_speed(j, q0, motion(Vec3::Zero(), Vec3(0.1, -0.2, 0.3)));
}

TEST(BodyCoordinates, Planar) {
  const Planar j;
  check_joint(j, 7);
  const VecX q0 = (VecX(3) << 2.0, -1.0, 8.0).finished();
  const Vec3 n = Vec3(1.0, 2.0, 0.0).normalized();
  check_disallowed(j, q0, Transform{axis_rotation(Vec3::UnitZ(), 8.0) * axis_rotation(n, eps), Vec3(2.0, -1.0, delta)},
                   eps + delta);
  check_disallowed_speed(j, q0, motion(Vec3(0.3, 0.4, 0.0), Vec3(0.0, 0.0, 0.5)));
}

// Every pose and velocity is allowed.
TEST(BodyCoordinates, Free) { check_joint(Free{}, 8); }

TEST(BodyCoordinates, Fixed) {
  const Fixed j;
  check_joint(j, 9);
  check_disallowed(j, VecX(0), Transform{axis_rotation(Vec3(0, 0.6, 0.8), eps), Vec3(delta, 0, 0)}, eps + delta);
  check_disallowed_speed(j, VecX(0), motion(Vec3(0.1, 0.2, 0.3), Vec3(-0.4, 0.5, 0.6)));
}

// Poses far from the joint's: all coordinates tie (revolute), or the first universal angle is
// undefined. Finite coordinates and the right residual, no NaN.
TEST(BodyCoordinates, DegeneratePosesGiveFiniteCoordinates) {
  // Revolute: a half turn about a normal to the axis is at angle π from every rotation about the
  // axis (atan2(0, 0) = 0, then unwrapped to near).
  const Vec3 a = Vec3(0.3, -0.5, 0.8).normalized();
  double q = 0.0;
  const double near_q = 7.0;
  EXPECT_NEAR(joint_coordinates(Revolute{a}, Transform::rotation(axis_rotation(a.unitOrthogonal(), pi)), &near_q, &q),
              pi, tol);
  EXPECT_TRUE(std::isfinite(q));
  EXPECT_LE(std::abs(q - near_q), pi);

  // Universal: R·axis2 = axis, 90° off the plane where every allowed R puts axis2, so the residual
  // is at least π/2 (and at most π); q0 is the atan2 of round-off.
  const Vec3 b = a.unitOrthogonal(), c = a.cross(b);
  const Universal u{a, b};
  const double near_u[] = {1.0, -2.0};
  double qu[2];
  const double r = joint_coordinates(u, Transform::rotation(axis_rotation(c, -pi / 2)), near_u, qu);
  EXPECT_TRUE(std::isfinite(qu[0]) && std::isfinite(qu[1]));
  EXPECT_GE(r, pi / 2 - tol);
  EXPECT_LE(r, pi + tol);
}

// Round trips of body_state then joint_state on a model at (q, u): with near = q, (q, u) itself;
// from the neutral coordinates, equivalent coordinates with the same body state. Poses and
// velocities are composed down trees of up to 10 bodies with displacements up to 5, then
// decomposed: a few ulps of the largest position or velocity per level (residuals up to 2.4e-14
// here); 1e-11 leaves two orders of margin.
void check_model(const Model& m, const VecX& q, const VecX& u, const std::string& name) {
  SCOPED_TRACE(name);
  constexpr double model_tol = 1e-11;
  BodyState s;
  body_state(m, q, u, s);
  VecX q2, u2;
  JointStateResidual r = joint_state(m, s, q, q2, u2);
  EXPECT_LE(r.position, model_tol);
  EXPECT_LE(r.velocity, model_tol);
  EXPECT_TRUE(near(q2, q, model_tol));
  EXPECT_TRUE(near(u2, u, model_tol));

  // In place (q_near = q).
  VecX q3 = q;
  joint_state(m, s, q3, q3, u2);
  EXPECT_TRUE(near(q3, q, model_tol));

  r = joint_state(m, s, m.neutral_q(), q2, u2);
  EXPECT_LE(r.position, model_tol);
  EXPECT_LE(r.velocity, model_tol);
  BodyState s2;
  body_state(m, q2, u2, s2);
  for (int i = 0; i < m.nbodies; ++i) {
    EXPECT_TRUE(near(s2.pose[i].R, s.pose[i].R, model_tol)) << m.body_name[i];
    EXPECT_TRUE(near(s2.pose[i].p, s.pose[i].p, model_tol)) << m.body_name[i];
    EXPECT_TRUE(near(s2.velocity[i], s.velocity[i], model_tol)) << m.body_name[i];
  }
}

// Random trees with every joint type, coordinates in [-5, 5] (angles beyond ±π).
TEST(BodyCoordinates, RandomTreesRoundTrip) {
  for (int seed = 0; seed < 8; ++seed) {
    const Model m = Model::build(test::random_tree(600 + seed, 10, seed));
    std::mt19937_64 rng(seed);
    VecX q = test::random_vector(m.nq, rng, 5.0);
    m.normalize(q);
    check_model(m, q, test::random_vector(m.nv, rng, 2.0), m.name);
  }
}

// Bundled models at their initial coordinates with random speeds (loop closure plays no part:
// both maps follow the tree).
TEST(BodyCoordinates, BundledModelsRoundTrip) {
  for (const char* file : {"chain3d_all_joints", "double_wishbone", "free_tumbling_body", "fourbar_spatial_park",
                           "iftomm_a04_bricard", "parallel_3rrr"}) {
    const Model m = test::load_model(file);
    std::mt19937_64 rng(11);
    check_model(m, m.q0, test::random_vector(m.nv, rng, 2.0), file);
  }
}

// A body state the joints do not allow: a body moved off its revolute joints' axes, and a body
// velocity no joint speed gives.
TEST(BodyCoordinates, ResidualsFlagStatesTheJointsDoNotAllow) {
  const Model m = test::load_model("double_pendulum");
  ASSERT_EQ(m.nbodies, 2);
  std::mt19937_64 rng(4);
  const VecX q = test::random_q(m, rng), u = test::random_vector(m.nv, rng);
  BodyState s;
  body_state(m, q, u, s);
  VecX q2, u2;
  // Shifting body 0 by δ displaces the child joint frame of joint 0 from its parent joint frame by
  // δ, and the parent joint frame of joint 1 from its child joint frame by δ; no rotation changes.
  s.pose[0].p += Vec3(0.0, 0.0, delta);
  EXPECT_NEAR(joint_state(m, s, q, q2, u2).position, delta, tol);
  EXPECT_TRUE(near(q2, q, tol));
  // A linear velocity of body 1 (no children) is normal to its revolute joint's angular subspace.
  s.pose[0].p -= Vec3(0.0, 0.0, delta);
  s.velocity[1].tail<3>() += Vec3(0.1, -0.2, 0.2);
  const JointStateResidual r = joint_state(m, s, q, q2, u2);
  EXPECT_LE(r.position, tol);
  EXPECT_NEAR(r.velocity, 0.3, tol);
  EXPECT_TRUE(near(u2, u, tol));
}

}  // namespace
}  // namespace loopdyn
