// Analysis (analysis.hpp) against independent computations: Jacobians against central differences
// of the poses, the mass matrix against the kinetic energy of the body velocities, the loop
// Jacobian and its null space against differences of Φ, a completed motion against differences
// in time, and inverse dynamics against the slider-crank's closed form and against the forward
// dynamics run with the forces it returns.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "loopdyn/core/forces.hpp"
#include "loopdyn/loops/analysis.hpp"
#include "slider_crank_closed_form.hpp"
#include "test_support.hpp"

namespace loopdyn {
namespace {

// The vector of a skew-symmetric matrix.
Vec3 vee(const Mat3& W) { return Vec3(W(2, 1) - W(1, 2), W(0, 2) - W(2, 0), W(1, 0) - W(0, 1)) / 2.0; }

// Central differences with h = 1e-6: truncation h² ‖q'''‖ ~ 1e-12 and rounding ε/h ~ 1e-10 on
// poses of order 1, so the derivatives agree to 1e-8.
constexpr double kStep = 1e-6, kDifferenceTol = 1e-8;

TEST(Analysis, FrameAndMarkerJacobiansAreTheDerivativesOfThePoses) {
  for (std::uint64_t seed : {3u, 11u, 29u}) {
    Mechanism mech = test::random_tree(seed, 9);
    mech.markers.push_back({"tip", mech.bodies[7].name, Vec3(0.3, -0.2, 0.5), ""});
    const Model model = Model::build(mech);
    Analysis a(model);
    std::mt19937_64 rng(seed);
    const VecX q = test::random_q(model, rng), u = test::random_vector(model.nv, rng);
    const Transform frame{test::random_rotation(rng), test::random_vec(rng, 0.5)};
    const std::string body = model.body_name[6];
    const Transform plus = a.body_pose(test::moved(model, q, u, kStep), body) * frame;
    const Transform minus = a.body_pose(test::moved(model, q, u, -kStep), body) * frame;
    const Transform here = a.body_pose(q, body) * frame;
    Vec6 world;  // [ω; v of the frame's origin], world axes
    world << vee((plus.R - minus.R) / (2 * kStep) * here.R.transpose()), (plus.p - minus.p) / (2 * kStep);
    EXPECT_TRUE(test::near(a.frame_jacobian(q, body, frame, Axes::world) * u, world, kDifferenceTol)) << seed;
    Vec6 local;
    local << here.R.transpose() * world.head<3>(), here.R.transpose() * world.tail<3>();
    EXPECT_TRUE(test::near(a.frame_jacobian(q, body, frame) * u, local, kDifferenceTol)) << seed;

    const Vec3 tip_rate = (a.marker_position(test::moved(model, q, u, kStep), "tip") -
                           a.marker_position(test::moved(model, q, u, -kStep), "tip")) / (2 * kStep);
    EXPECT_TRUE(test::near(a.marker_jacobian(q, "tip") * u, tip_rate, kDifferenceTol)) << seed;
    EXPECT_TRUE(test::near(a.marker_velocity(q, u, "tip"), tip_rate, kDifferenceTol)) << seed;
  }
}

// ½ uᵀ M u against Σ ½ vᵀ I v over the bodies (energy()): two sweeps that share only the model.
TEST(Analysis, MassMatrixGivesTheKineticEnergy) {
  const Model model = Model::build(test::random_tree(7, 10));
  Analysis a(model);
  std::mt19937_64 rng(7);
  const VecX q = test::random_q(model, rng), u = test::random_vector(model.nv, rng);
  const MatX M = a.mass_matrix(q);
  KinematicsData kin(model);
  update_positions(model, kin, q);
  update_velocities(model, kin, q, u);
  EXPECT_NEAR(0.5 * u.dot(M * u), energy(model, kin, q).kinetic, 1e-12 * u.squaredNorm() * M.norm());
  EXPECT_TRUE(test::near(M, M.transpose(), 1e-15));
}

// G du against (Φ(q + h du) − Φ(q − h du)) / 2h, and N: G N = 0, Nᵀ N = I, d columns.
TEST(Analysis, LoopJacobianAndItsNullSpace) {
  for (const auto& [file, dof] : {std::pair{"fivebar_anderson", 2}, std::pair{"fourbar_spatial_park", 1}}) {
    const Model model = test::load_model(file);
    Analysis a(model);
    const VecX q = assemble(model, model.loops().constraints, model.q0, model.u0).q;
    std::mt19937_64 rng(5);
    const VecX du = test::random_vector(model.nv, rng);
    const Constraints& cons = model.loops().constraints;
    KinematicsData kin(model);
    ConstraintData data(model);
    VecX plus(cons.rows()), minus(cons.rows());
    update_positions(model, kin, test::moved(model, q, du, kStep));
    constraint_position(model, cons, kin, 0.0, data, plus);
    update_positions(model, kin, test::moved(model, q, du, -kStep));
    constraint_position(model, cons, kin, 0.0, data, minus);
    const MatX G = a.loop_jacobian(q);
    EXPECT_TRUE(test::near(G * du, (plus - minus) / (2 * kStep), kDifferenceTol)) << file;
    const MatX N = a.loop_null_space(q);
    EXPECT_EQ(N.cols(), dof) << file;
    EXPECT_LT((G * N).cwiseAbs().maxCoeff(), 1e-14) << file;
    EXPECT_TRUE(test::near(N.transpose() * N, MatX::Identity(dof, dof), 1e-14)) << file;
  }
}

// The five-bar's base joints on sinusoids: the completed motion closes the loops, keeps the given
// coordinates, and its u and u̇ are the time derivatives of its q and u (central differences in t,
// h = 1e-5: truncation h² ~ 1e-10 on motions of order 1, rounding 1e-12/h from the assembly's
// 1e-12 closure ~ 1e-7).
TEST(Analysis, CompletedMotionIsTheTimeDerivativeOfItsPositions) {
  const Model model = test::load_model("fivebar_anderson");
  Analysis a(model);
  const std::vector<std::string> bases{"base_left", "base_right"};
  const auto motion = [&](double t) {
    const Eigen::Vector2d q0(model.q0(model.q_index[model.joint_index("base_left")]),
                  model.q0(model.q_index[model.joint_index("base_right")]));
    const VecX q = q0 + 0.2 * Eigen::Vector2d(std::sin(2 * t), std::sin(3 * t + 1));
    const VecX u = 0.2 * Eigen::Vector2d(2 * std::cos(2 * t), 3 * std::cos(3 * t + 1));
    const VecX udot = -0.2 * Eigen::Vector2d(4 * std::sin(2 * t), 9 * std::sin(3 * t + 1));
    return a.complete_motion(t, model.q0, bases, q, u, udot);
  };
  const double t = 0.4, h = 1e-5;
  const ClosedMotion m = motion(t), plus = motion(t + h), minus = motion(t - h);
  EXPECT_TRUE(test::near((plus.q - minus.q) / (2 * h), m.u, 1e-6));
  EXPECT_TRUE(test::near((plus.u - minus.u) / (2 * h), m.udot, 1e-6));
  EXPECT_NO_THROW(check_consistent(model, model.loops().constraints, m.q, m.u, 1e-12));
  EXPECT_DOUBLE_EQ(m.u(model.v_index[model.joint_index("base_right")]), 0.6 * std::cos(3 * t + 1));
}

// The crank torque of the slider-crank (its drive removed) for (θ, ω, α) against Lagrange's
// equation in closed form: 1e-9 of the torques' size (the closed form's differences are good to
// 1e-13, the completed motion closes to 1e-12). The driven model's drive carries the same torque
// as its multiplier (the CSV's drive column is −λ).
TEST(Analysis, InverseDynamicsOfTheSliderCrankIsTheClosedForm) {
  Mechanism mech = load_mechanism(std::string(LOOPDYN_SOURCE_DIR) + "/models/slider_crank_driven.yaml");
  const Model driven = Model::build(mech);
  mech.drives.clear();
  const Model model = Model::build(mech);
  Analysis a(model), ad(driven);
  const test::SliderCrank sc;
  for (const auto& [th, w, alpha] : {std::tuple{0.3, 10.0, 0.0}, std::tuple{2.0, -4.0, 30.0}, std::tuple{4.5, 1.0, -50.0}}) {
    // The assembly's guess on the closed form's branch (slider right of the crank): from q0 (θ = 0)
    // Newton lands on the other branch at θ = 2.
    const VecX guess = Eigen::Vector3d(th, std::asin(-sc.r * std::sin(th) / sc.L) - th, sc.slider(th));
    const ClosedMotion m = a.complete_motion(0.0, guess, {"crank_pivot"}, VecX::Constant(1, th), VecX::Constant(1, w),
                                             VecX::Constant(1, alpha));
    ASSERT_NEAR(m.q(2), sc.slider(th), 1e-12);
    const InverseDynamicsResult r = a.inverse_dynamics(0.0, m.q, m.u, m.udot, {"crank_pivot"});
    const double expected = sc.torque(th, w, alpha), scale = std::max(1.0, std::abs(expected));
    ASSERT_EQ(r.tau.size(), 1);
    EXPECT_NEAR(r.tau(0), expected, 1e-9 * scale) << th;
    EXPECT_EQ(r.names, std::vector<std::string>{"u.crank_pivot"});
    EXPECT_EQ(r.dof, 1);
    EXPECT_EQ(r.rank, 1);
    EXPECT_FALSE(r.least_norm);
    if (alpha == 0.0) {
      // At t = θ / ω the drive (q = ω_drive t) is at θ only for its own speed: use t for that speed.
      const double w_drive = 2.0 * M_PI * 100.0 / 60.0, t = th / w_drive;
      const ClosedMotion md = ad.complete_motion(t, guess, {}, VecX(0), VecX(0), VecX(0));
      const InverseDynamicsResult rd = ad.inverse_dynamics(t, md.q, md.u, md.udot, {});
      EXPECT_EQ(rd.dof, 0);
      const std::vector<ConstraintRow>& rows = driven.loops().constraints.kept();
      const auto drive = std::find_if(rows.begin(), rows.end(), [&](const ConstraintRow& row) {
        return row.kind == ConstraintRow::Kind::coupling && driven.couplings[row.loop].drive;
      });
      ASSERT_NE(drive, rows.end());
      const auto row = drive - rows.begin();
      EXPECT_NEAR(-rd.multipliers(row), sc.torque(th, w_drive), 1e-9 * std::max(1.0, std::abs(sc.torque(th, w_drive))));
    }
  }
}

// u̇ of lagrange-dense on the model with the returned forces added (a force callback) is the motion
// asked for: the forward dynamics run backwards. 1e-9: both solve systems of condition ~1e3 in
// double precision.
void expect_forward_dynamics_reproduces(const Model& model, const ClosedMotion& m, const std::vector<std::string>& actuated,
                                        const InverseDynamicsResult& r) {
  Model with = model;
  std::vector<int> speeds;
  for (const std::string& j : actuated)
    for (int s = 0; s < model.nv_joint[model.joint_index(j)]; ++s) speeds.push_back(model.v_index[model.joint_index(j)] + s);
  with.callbacks.push_back([&](double, const Model&, const KinematicsData&, const VecX&, const VecX&, AppliedForces& out) {
    for (std::size_t k = 0; k < speeds.size(); ++k) out.tau(speeds[k]) += r.tau(static_cast<Eigen::Index>(k));
  });
  const auto method = make_formulation("lagrange-dense", with, {});
  VecX udot(model.nv);
  method->accelerations(0.0, m.q, m.u, udot);
  EXPECT_TRUE(test::near(udot, m.udot, 1e-9));
}

ClosedMotion fivebar_motion(Analysis& a, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const Model& model = a.model();
  const VecX q(Eigen::Vector2d(model.q0(model.q_index[model.joint_index("base_left")]) + 0.1,
                               model.q0(model.q_index[model.joint_index("base_right")]) - 0.1));
  return a.complete_motion(0.0, model.q0, {"base_left", "base_right"}, q, test::random_vector(2, rng),
                           test::random_vector(2, rng, 5.0));
}

TEST(Analysis, InverseDynamicsRunForwardGivesTheMotion) {
  const Model model = test::load_model("fivebar_anderson");
  Analysis a(model);
  const ClosedMotion m = fivebar_motion(a, 1);
  const std::vector<std::string> bases{"base_left", "base_right"};
  const InverseDynamicsResult r = a.inverse_dynamics(0.0, m.q, m.u, m.udot, bases);
  EXPECT_EQ(r.rank, 2);
  EXPECT_FALSE(r.least_norm);
  expect_forward_dynamics_reproduces(model, m, bases, r);
}

// Three actuators on two degrees of freedom: the least-norm forces, which still produce the motion
// and have no part in the null space of Nᵀ B (any other solution adds one there).
TEST(Analysis, OverActuatedFiveBarGetsTheLeastNormForces) {
  const Model model = test::load_model("fivebar_anderson");
  Analysis a(model);
  const ClosedMotion m = fivebar_motion(a, 2);
  const std::vector<std::string> three{"base_left", "base_right", "elbow_left"};
  const InverseDynamicsResult r = a.inverse_dynamics(0.0, m.q, m.u, m.udot, three);
  EXPECT_TRUE(r.least_norm);
  EXPECT_EQ(r.rank, 2);
  expect_forward_dynamics_reproduces(model, m, three, r);
  const MatX N = test::null_space(a.loop_jacobian(m.q));
  MatX A(N.cols(), 3);
  for (int k = 0; k < 3; ++k) A.col(k) = N.row(model.v_index[model.joint_index(three[k])]).transpose();
  const MatX redundant = test::null_space(A);
  ASSERT_EQ(redundant.cols(), 1);
  EXPECT_LT(std::abs(redundant.col(0).dot(r.tau)), 1e-10 * r.tau.norm());
}

// One actuator on two degrees of freedom: an arbitrary motion is refused; the passive motion (the
// forward dynamics' own u̇ without forces) needs none and gets zero.
TEST(Analysis, UnderActuatedFiveBar) {
  const Model model = test::load_model("fivebar_anderson");
  Analysis a(model);
  const ClosedMotion m = fivebar_motion(a, 3);
  const std::string message = test::message_of([&] { a.inverse_dynamics(0.0, m.q, m.u, m.udot, {"base_left"}); });
  EXPECT_NE(message.find("under-actuated: the actuated joints drive 1 of the mechanism's 2 degrees of freedom"),
            std::string::npos)
      << message;
  VecX passive(model.nv);
  make_formulation("lagrange-dense", model, {})->accelerations(0.0, m.q, m.u, passive);
  const InverseDynamicsResult r = a.inverse_dynamics(0.0, m.q, m.u, passive, {"base_left"});
  EXPECT_LT(std::abs(r.tau(0)), 1e-9);
}

// The Stewart platform's six legs for a prescribed platform motion (its free joint given): the legs
// are the platform's only actuators, and the forward dynamics with their forces moves it so.
TEST(Analysis, StewartLegForcesForAPlatformMotion) {
  const Model model = test::load_model("robots/stewart");
  Analysis a(model);
  const int platform = model.joint_index("platform_free");
  const VecX q = model.q0.segment(model.q_index[platform], 7) + (VecX(7) << 0.01, -0.02, 0.03, 0, 0, 0, 0).finished();
  Vec6 u, udot;
  u << 0.1, -0.2, 0.05, 0.02, 0.01, -0.03;
  udot << 1.0, 0.5, -0.7, 0.3, -0.2, 0.4;
  const ClosedMotion m = a.complete_motion(0.0, model.q0, {"platform_free"}, q, u, udot);
  std::vector<std::string> legs;
  for (int i = 0; i < 6; ++i) legs.push_back(test::indexed("slide", i));
  const InverseDynamicsResult r = a.inverse_dynamics(0.0, m.q, m.u, m.udot, legs);
  EXPECT_EQ(r.dof, 6);
  EXPECT_EQ(r.rank, 6);
  expect_forward_dynamics_reproduces(model, m, legs, r);
}

TEST(Analysis, BadInputIsNamed) {
  const Model model = test::load_model("fivebar_anderson");
  Analysis a(model);
  const ClosedMotion m = fivebar_motion(a, 4);
  const auto message = [](const auto& f) { return test::message_of(f); };
  EXPECT_NE(message([&] { a.inverse_dynamics(0.0, m.q, m.u, VecX::Ones(model.nv), {"base_left", "base_right"}); })
                .find("does not close the loops at acceleration level"),
            std::string::npos);
  EXPECT_NE(message([&] { a.inverse_dynamics(0.0, m.q, m.u, m.udot, {"end_effector"}); }).find("loop-closing joint"),
            std::string::npos);
  EXPECT_NE(message([&] { a.inverse_dynamics(0.0, m.q, m.u, m.udot, {"base_left", "base_left"}); }).find("named twice"),
            std::string::npos);
  EXPECT_NE(message([&] { a.body_pose(m.q, "nose"); }).find("unknown body 'nose'"), std::string::npos);
  EXPECT_NE(message([&] { a.body_pose(m.q, "ground"); }).find("the ground has no pose"), std::string::npos);
  EXPECT_NE(message([&] { a.marker_position(m.q, "nose"); }).find("unknown marker 'nose'"), std::string::npos);
  VecX bad = m.q;
  bad(1) = std::nan("");
  EXPECT_NE(message([&] { a.mass_matrix(bad); }).find("q[1] is not finite"), std::string::npos);
  EXPECT_NE(message([&] { a.mass_matrix(VecX(2)); }).find("q has 2 entries, expected nq = 4"), std::string::npos);
  const auto q0_of = [&](const char* joint) { return model.q0(model.q_index[model.joint_index(joint)]); };
  const VecX one = VecX::Constant(1, q0_of("base_left"));
  EXPECT_NE(message([&] { a.complete_motion(0.0, model.q0, {"base_left"}, one, one, one); })
                .find("leave 1 degree(s) of freedom open"),
            std::string::npos);
  const VecX three = Eigen::Vector3d(q0_of("base_left"), q0_of("base_right"), q0_of("elbow_left"));
  EXPECT_NE(message([&] { a.complete_motion(0.0, model.q0, {"base_left", "base_right", "elbow_left"}, three, three, three); })
                .find("not independent"),
            std::string::npos);
}

}  // namespace
}  // namespace loopdyn
