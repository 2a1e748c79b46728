// Kinematics against finite differences of forward kinematics, on random trees with every joint
// type: velocities (hence S and the Jacobians), accelerations (hence the Ṡu bias terms).
#include "loopdyn/core/kinematics.hpp"
#include "test_support.hpp"

namespace loopdyn {
namespace {

using test::near;

// Central differences with step 1e-6: truncation O(h²) ~ 1e-12, round-off ~ 1e-16 / 1e-6 = 1e-10
// on quantities of order 1; 1e-7 leaves an order of magnitude of margin.
constexpr double h = 1e-6;
constexpr double fd_tol = 1e-7;

struct Fixture {
  Model model;
  VecX q, u, udot;
  explicit Fixture(std::uint64_t seed) : model(Model::build(test::random_tree(seed, 10, static_cast<int>(seed % 8)))) {
    std::mt19937_64 rng(seed + 99);
    q = test::random_q(model, rng);
    u = test::random_vector(model.nv, rng);
    udot = test::random_vector(model.nv, rng);
  }
  KinematicsData at(const VecX& qq, const VecX& uu) const {
    KinematicsData kin(model);
    update_positions(model, kin, qq);
    update_velocities(model, kin, qq, uu);
    return kin;
  }
};

// Angular velocity from two rotations ε apart: vee(R⁻ᵀ... ) via log of R_minusᵀ R_plus / 2h.
Vec3 angular_rate(const Mat3& R_minus, const Mat3& R_plus, const Mat3& R, bool in_body) {
  const Eigen::AngleAxisd aa(R_minus.transpose() * R_plus);  // body-axis rotation over 2h
  const Vec3 w_body = aa.angle() * aa.axis() / (2 * h);
  return in_body ? w_body : Vec3(R * w_body);
}

TEST(Kinematics, FrameAndPointJacobiansMatchFiniteDifferences) {
  for (std::uint64_t seed = 1; seed <= 16; ++seed) {
    Fixture f(seed);
    const Model& m = f.model;
    const KinematicsData kin = f.at(f.q, f.u);
    std::mt19937_64 rng(seed);
    const Transform frame{test::random_rotation(rng), test::random_vec(rng, 0.4)};
    const Vec3 point = test::random_vec(rng, 0.4);
    for (int b = 0; b < m.nbodies; ++b) {
      Mat6X J(6, m.nv);
      Eigen::Matrix<double, 3, Eigen::Dynamic> Jp(3, m.nv);
      frame_jacobian(m, kin, b, frame, J);
      point_jacobian(m, kin, b, point, Jp);
      for (int k = 0; k < m.nv; ++k) {
        const VecX e = VecX::Unit(m.nv, k);
        const KinematicsData plus = f.at(test::moved(m, f.q, e, h), f.u);
        const KinematicsData minus = f.at(test::moved(m, f.q, e, -h), f.u);
        const Transform Fp = plus.X_world[b] * frame, Fm = minus.X_world[b] * frame, F = kin.X_world[b] * frame;
        Vec6 fd;
        fd.head<3>() = angular_rate(Fm.R, Fp.R, F.R, true);
        fd.tail<3>() = F.R.transpose() * (Fp.p - Fm.p) / (2 * h);  // origin velocity in frame axes
        EXPECT_TRUE(near(J.col(k), fd, fd_tol)) << "seed " << seed << " body " << b << " speed " << k;
        const Vec3 fdp = (point_position(plus, b, point) - point_position(minus, b, point)) / (2 * h);
        EXPECT_TRUE(near(Jp.col(k), fdp, fd_tol)) << "seed " << seed << " body " << b << " speed " << k;
      }
    }
  }
}

TEST(Kinematics, BodyVelocitiesAreJacobianTimesSpeeds) {
  Fixture f(21);
  const KinematicsData kin = f.at(f.q, f.u);
  Mat6X J(6, f.model.nv);
  for (int b = 0; b < f.model.nbodies; ++b) {
    frame_jacobian(f.model, kin, b, Transform{}, J);
    EXPECT_TRUE(near(kin.v[b], J * f.u, 1e-13));
  }
}

// Spatial acceleration = time derivative of the spatial velocity in a fixed (world) frame:
// X_world a = d/dt (X_world v), along q(t) with q̇ = q̇(q, u), u̇ given.
TEST(Kinematics, AccelerationsMatchFiniteDifferencesOfVelocities) {
  for (std::uint64_t seed = 30; seed < 46; ++seed) {
    Fixture f(seed);
    const Model& m = f.model;
    const KinematicsData kin = f.at(f.q, f.u);
    std::vector<Vec6> a;
    body_accelerations(m, kin, f.udot, a);
    const KinematicsData plus = f.at(test::moved(m, f.q, f.u, h), f.u + h * f.udot);
    const KinematicsData minus = f.at(test::moved(m, f.q, f.u, -h), f.u - h * f.udot);
    for (int b = 0; b < m.nbodies; ++b) {
      const Vec6 fd = (body_velocity_world(plus, b) - body_velocity_world(minus, b)) / (2 * h);
      EXPECT_TRUE(near(kin.X_world[b].act_motion(a[b]), fd, fd_tol)) << "seed " << seed << " body " << b;
    }
  }
}

TEST(Kinematics, NeutralConfigurationPlacesChildJointFrameOnParentJointFrame) {
  Fixture f(50);
  const Model& m = f.model;
  const KinematicsData kin = f.at(m.neutral_q(), VecX::Zero(m.nv));
  for (int b = 0; b < m.nbodies; ++b) {
    const ModelJoint& j = m.joints[b];
    const Transform Fp = (j.parent < 0 ? Transform{} : kin.X_world[j.parent]) * j.parent_frame;
    const Transform Fc = kin.X_world[b] * j.child_frame;
    EXPECT_TRUE(near(Fp.R, Fc.R, 1e-14));
    EXPECT_TRUE(near(Fp.p, Fc.p, 1e-14));
  }
}

}  // namespace
}  // namespace loopdyn
