// Assembly: exact coordinate increments (integrate_q), closing loops from perturbed
// configurations (planar four-bar, random spatial loops of every constrained joint type), loops
// that cannot close, and the `loopdyn assemble` command.
#include "loopdyn/loops/assembly.hpp"

#include <unsupported/Eigen/MatrixFunctions>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "loopdyn/io/model_file.hpp"
#include "loopdyn/loops/loop_structure.hpp"
#include "loopdyn/mechanisms/generators.hpp"
#include "cli_support.hpp"
#include "test_support.hpp"

namespace loopdyn {
namespace {

using test::near;

// ---------------------------------------------------------------------------------------------
// integrate_q

Model single_joint(JointType type) {
  Mechanism mech;
  mech.add_body("b", 1.0, Vec3::Zero(), Mat3::Identity());
  mech.add_joint("j", type, "ground", "b");
  return Model::build(mech);
}

// Pose of the child joint frame of tree joint 0 (the only joint of single_joint models).
Transform joint_pose(const Model& m, const VecX& q) {
  return std::visit([&](const auto& k) { return k.transform(q.data()); }, m.joints[0].joint);
}

TEST(IntegrateQ, MatchesTheFirstOrderUpdateForSmallSteps) {
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    const Model m = Model::build(test::random_tree(seed, 8, static_cast<int>(seed % 8)));
    std::mt19937_64 rng(seed);
    const VecX q = test::random_q(m, rng), du = test::random_vector(m.nv, rng);
    VecX qd(m.nq);
    m.qdot(q, du, qd);
    const double eps = 1e-6;
    VecX plus = q, minus = q;
    integrate_q(m, plus, eps * du);
    integrate_q(m, minus, -eps * du);
    // One-sided: q + ε q̇ + O(ε²); central difference: q̇ + O(ε²).
    EXPECT_TRUE(near(plus, q + eps * qd, 1e-11)) << "seed " << seed;
    EXPECT_TRUE(near((plus - minus) / (2 * eps), qd, 1e-8)) << "seed " << seed;
  }
}

// The flow of constant speeds is a one-parameter group: N steps of du/N equal one step of du. A
// first-order update (q + q̇ du, then normalize) fails this by O(|du|²/N).
TEST(IntegrateQ, IsTheExactFlowOfConstantSpeeds) {
  for (std::uint64_t seed = 11; seed <= 18; ++seed) {
    const Model m = Model::build(test::random_tree(seed, 8, static_cast<int>(seed % 8)));
    std::mt19937_64 rng(seed);
    const VecX q = test::random_q(m, rng), du = test::random_vector(m.nv, rng, 2.0);
    VecX once = q, steps = q;
    integrate_q(m, once, du);
    for (int k = 0; k < 7; ++k) integrate_q(m, steps, du / 7.0);
    EXPECT_TRUE(near(once, steps, 1e-13)) << "seed " << seed;
  }
}

TEST(IntegrateQ, SphericalRotatesByTheExponentialInTheChildFrame) {
  const Model m = single_joint(JointType::spherical);
  std::mt19937_64 rng(5);
  for (double size : {0.0, 1e-9, 1e-5, 1e-2, 0.7, 3.0, 10.0}) {
    const VecX q = test::random_q(m, rng);
    const Vec3 w = size * test::random_vec(rng, 1.0).normalized();
    VecX out = q;
    integrate_q(m, out, w);
    const Mat3 expected = joint_pose(m, q).R * Eigen::AngleAxisd(w.norm(), w.normalized()).toRotationMatrix();
    EXPECT_NEAR(out.norm(), 1.0, 1e-15) << "|du| = " << size;
    EXPECT_TRUE(near(joint_pose(m, out).R, expected, 1e-14)) << "|du| = " << size;
  }
}

// Free joint: T ← T · exp([ω×, v; 0, 0]), against Eigen's matrix exponential of the 4x4 twist.
TEST(IntegrateQ, FreeMovesByTheSe3Exponential) {
  const Model m = single_joint(JointType::free);
  std::mt19937_64 rng(6);
  for (double size : {0.0, 1e-7, 1e-3, 5e-3, 2e-2, 0.5, 2.0, 6.0}) {
    const VecX q = test::random_q(m, rng);
    VecX du(6);
    du << test::random_vec(rng, 1.0), size * test::random_vec(rng, 1.0).normalized();
    Eigen::Matrix4d twist = Eigen::Matrix4d::Zero();
    twist.topLeftCorner<3, 3>() = skew(du.tail<3>());
    twist.topRightCorner<3, 1>() = du.head<3>();
    const Eigen::Matrix4d E = twist.exp();
    const Transform T0 = joint_pose(m, q);
    const Transform expected = T0 * Transform{E.topLeftCorner<3, 3>(), E.topRightCorner<3, 1>()};
    VecX out = q;
    integrate_q(m, out, du);
    const Transform T = joint_pose(m, out);
    EXPECT_NEAR(out.tail<4>().norm(), 1.0, 1e-15) << "|ω| = " << size;
    EXPECT_TRUE(near(T.R, expected.R, 1e-14)) << "|ω| = " << size;
    EXPECT_TRUE(near(T.p, expected.p, 1e-13)) << "|ω| = " << size;
  }
}

// ---------------------------------------------------------------------------------------------
// Helpers: independent evaluation of Φ (every row) and G (kept rows).

struct Check {
  const Model& m;
  const Constraints &all, &kept;
  KinematicsData kin;
  ConstraintData d;
  explicit Check(const Model& model)
      : m(model), all(model.loops().unreduced), kept(model.loops().constraints), kin(model), d(model) {}
  double phi(const VecX& q) {
    update_positions(m, kin, q);
    VecX out(all.rows());
    constraint_position(m, all, kin, 0.0, d, out);
    return out.size() ? out.cwiseAbs().maxCoeff() : 0.0;
  }
  MatX G(const VecX& q) {
    update_positions(m, kin, q);
    MatX out(kept.rows(), m.nv);
    constraint_jacobian(m, kept, kin, d, out);
    return out;
  }
};

// Planar four-bar (x-y plane, revolute z): crank length a on ground at the origin, coupler b,
// rocker c on ground at (d, 0, 0); the coupler's far end is joined to the rocker's by the cut
// joint C. Joint order A (crank), B (coupler), D (rocker).
Mechanism four_bar(double a, double b, double c, double d, const std::array<double, 3>& q) {
  Mechanism mech;
  mech.name = "four_bar";
  auto rod = [&](const char* name, double l) {
    mech.add_body(name, 1.0, Vec3(0.5 * l, 0, 0), Vec3(1e-4, l * l / 12, l * l / 12).asDiagonal());
  };
  rod("crank", a);
  rod("coupler", b);
  rod("rocker", c);
  mech.add_joint("A", JointType::revolute, "ground", "crank").q = {q[0]};
  mech.add_joint("B", JointType::revolute, "crank", "coupler", Transform::translation(Vec3(a, 0, 0))).q = {q[1]};
  mech.add_joint("D", JointType::revolute, "ground", "rocker", Transform::translation(Vec3(d, 0, 0))).q = {q[2]};
  mech.add_joint("C", JointType::revolute, "coupler", "rocker", Transform::translation(Vec3(b, 0, 0)),
                 Transform::translation(Vec3(c, 0, 0)))
      .cut = true;
  return mech;
}

// ---------------------------------------------------------------------------------------------
// Four-bar

// Unit square four-bar: with the crank at θ the nearby closed configuration is the parallelogram
// A = θ, B = −θ, D = θ.
TEST(Assembly, FourBarWithTheCrankFixedClosesToTheParallelogram) {
  const double theta = M_PI / 2 + 0.1;
  const Model m = Model::build(four_bar(1, 1, 1, 1, {theta, -M_PI / 2 + 0.05, M_PI / 2 - 0.07}));
  const int A = m.v_index[m.joint_index("A")], B = m.v_index[m.joint_index("B")], D = m.v_index[m.joint_index("D")];
  AssemblySettings s;
  s.fixed_speeds.assign(m.nv, false);
  s.fixed_speeds[A] = true;
  VecX u0(m.nv);
  u0.setZero();
  u0(A) = 1.5;
  u0(B) = 0.3;  // dependent: overwritten
  const AssemblyResult r = assemble(m, m.loops().constraints, m.q0, u0, s);
  std::printf("four-bar (crank fixed): %d iterations, |Phi| = %.2e, |G u| = %.2e\n", r.iterations,
              r.position_residual, r.velocity_residual);
  Check c(m);
  EXPECT_LE(r.position_residual, 1e-12);
  EXPECT_LE(c.phi(r.q), 1e-12);
  EXPECT_EQ(r.q(A), theta);  // the independent coordinate is untouched
  EXPECT_EQ(r.u(A), 1.5);
  EXPECT_EQ(r.independent_speeds, std::vector<int>{A});
  EXPECT_NEAR(r.q(B), -theta, 1e-12);
  EXPECT_NEAR(r.q(D), theta, 1e-12);
  // Parallelogram velocities: the coupler translates (u_B = −u_A), the rocker follows (u_D = u_A).
  EXPECT_NEAR(r.u(B), -1.5, 1e-12);
  EXPECT_NEAR(r.u(D), 1.5, 1e-12);
  EXPECT_LE((c.G(r.q) * r.u).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_LE(r.iterations, 8);
}

// Speed k alone independent, it and its coordinate as given, the loop closed (Φ, G u to 1e-12).
void expect_kept_and_closed(const Model& m, const AssemblyResult& r, int k, double speed, const char* joint) {
  EXPECT_EQ(r.independent_speeds, std::vector<int>{k}) << joint;
  EXPECT_EQ(r.q(k), m.q0(k)) << joint;
  EXPECT_EQ(r.u(k), speed) << joint;
  Check c(m);
  EXPECT_LE(c.phi(r.q), 1e-12) << joint;
  EXPECT_LE((c.G(r.q) * r.u).cwiseAbs().maxCoeff(), 1e-12) << joint;
}

TEST(Assembly, FourBarKeepsWhicheverJointIsFixed) {
  // Grashof crank-rocker: ground 2, crank 0.5, coupler 2, rocker 1 (docs/model-format.md example),
  // started off the closed configuration.
  const Model m = Model::build(four_bar(0.5, 2, 1, 2, {1.5, -1.2, 1.7}));
  for (const char* fixed : {"A", "B", "D"}) {
    const int k = m.v_index[m.joint_index(fixed)];
    AssemblySettings s;
    s.fixed_speeds.assign(m.nv, false);
    s.fixed_speeds[k] = true;
    const VecX u0 = VecX::Constant(m.nv, 0.8);
    const AssemblyResult r = assemble(m, m.loops().constraints, m.q0, u0, s);
    expect_kept_and_closed(m, r, k, 0.8, fixed);
  }
  // Automatic partition: one independent speed, the rest closes the loop.
  const AssemblyResult r = assemble(m, m.loops().constraints, m.q0, VecX::Ones(m.nv));
  EXPECT_EQ(r.independent_speeds.size(), 1u);
  EXPECT_LE(r.position_residual, 1e-12);
}

// No joint marked: the speed the initial state sets (the crank's, the others left 0) is the one
// kept, with its coordinate, wherever the partition that keeps it is well conditioned.
// Reference: the closure itself (Φ, G u from Check) and the given values, bit for bit.
TEST(Assembly, WithoutMarksKeepsTheSpeedTheStateSets) {
  const Model m = Model::build(four_bar(0.5, 2, 1, 2, {1.5, -1.2, 1.7}));
  for (const char* given : {"A", "B", "D"}) {
    const int k = m.v_index[m.joint_index(given)];
    VecX u0 = VecX::Zero(m.nv);
    u0(k) = 2.0;
    const AssemblyResult r = assemble(m, m.loops().constraints, m.q0, u0);
    expect_kept_and_closed(m, r, k, 2.0, given);
  }
}

// ... but not the rocker's at its extreme: with crank and coupler 1e-3 rad from collinear
// (crank at acos(0.925), where the extended crank reaches the rocker's circle) the rocker's speed
// nearly fixes nothing, the partition that keeps it is about 1e3 times worse conditioned than the
// best one (beyond the factor 100 allowed), and the best one is taken.
TEST(Assembly, WithoutMarksTheSpeedTheStateSetsYieldsNearASingularPartition) {
  const Model m = Model::build(four_bar(0.5, 2, 1, 2, {std::acos(0.925), 1e-3, 1.2532}));
  const int D = m.v_index[m.joint_index("D")];
  VecX u0 = VecX::Zero(m.nv);
  u0(D) = 2.0;
  const AssemblyResult r = assemble(m, m.loops().constraints, m.q0, u0);
  EXPECT_EQ(r.independent_speeds.size(), 1u);
  EXPECT_NE(r.independent_speeds, std::vector<int>{D});
  Check c(m);
  EXPECT_LE(c.phi(r.q), 1e-12);
  EXPECT_LE((c.G(r.q) * r.u).cwiseAbs().maxCoeff(), 1e-12);
}

// Past the dense budget (the 256-cell ladder: 512 kept rows and 1280 in all on 768 speeds) the
// partition and the Newton steps go through SuiteSparseQR. Reference: the exact closed state of
// ladder_state (closed by construction). With the left posts' bottom pivots fixed, every other
// joint is determined on the parallelogram branch, so from 1e-2 rad off the state must come back
// to it, to the assembly's tolerance (1e-12 on Φ, amplified by the partition's conditioning).
TEST(Assembly, LargeLadderClosesThroughTheSparsePathToTheExactState) {
  const int cells = 256;
  const Model m = Model::build(ladder_mechanism(cells, LadderLayout::serial));
  const LadderState exact = ladder_state(m, cells);
  AssemblySettings s;
  s.fixed_speeds.assign(m.nv, false);
  for (int k = 0; k < cells; ++k) s.fixed_speeds[m.v_index[m.joint_index("lp" + std::to_string(k) + "_bottom")]] = true;
  VecX q0 = exact.q, u0 = exact.u;
  for (int k = 0; k < m.nv; ++k)
    if (!s.fixed_speeds[k]) {
      q0(k) += 1e-2 * std::sin(3.0 * k);
      u0(k) += 0.1 * std::cos(5.0 * k);
    }
  const AssemblyResult r = assemble(m, m.loops().constraints, q0, u0, s);
  std::printf("ladder-256 (left posts fixed): %d iterations, |Phi| = %.2e, |G u| = %.2e\n", r.iterations,
              r.position_residual, r.velocity_residual);
  EXPECT_LE((r.q - exact.q).cwiseAbs().maxCoeff(), 1e-10);
  EXPECT_LE((r.u - exact.u).cwiseAbs().maxCoeff(), 1e-10);
  EXPECT_EQ(static_cast<int>(r.independent_speeds.size()), cells);
  // Automatic partition: as many independent speeds as degrees of freedom, the loops closed.
  const AssemblyResult a = assemble(m, m.loops().constraints, q0, u0);
  Check c(m);
  EXPECT_EQ(static_cast<int>(a.independent_speeds.size()), cells);
  EXPECT_LE(c.phi(a.q), 1e-12);
  EXPECT_LE((c.G(a.q) * a.u).cwiseAbs().maxCoeff(), 1e-12 * std::max(1.0, u0.cwiseAbs().maxCoeff()));
  for (int k : a.independent_speeds) EXPECT_EQ(a.u(k), u0(k));
  // No marks, and the state sets the left posts' pivots only: past the dense budget too, those are
  // the speeds kept, with the values given (the partition that keeps them is as well conditioned
  // as any: each fixes its cell's parallelogram).
  VecX given = VecX::Zero(m.nv);
  std::vector<int> pivots;
  for (int k = 0; k < m.nv; ++k)
    if (s.fixed_speeds[k]) given(k) = exact.u(k), pivots.push_back(k);
  const AssemblyResult g = assemble(m, m.loops().constraints, q0, given);
  EXPECT_EQ(g.independent_speeds, pivots);
  for (int k : pivots) EXPECT_EQ(g.u(k), given(k));
  EXPECT_LE((c.G(g.q) * g.u).cwiseAbs().maxCoeff(), 1e-12 * std::max(1.0, given.cwiseAbs().maxCoeff()));
}

TEST(Assembly, LoopThatCannotCloseNamesTheLoop) {
  // Crank, coupler and rocker of 0.5 m cannot span a 3 m ground link.
  const Model m = Model::build(four_bar(0.5, 0.5, 0.5, 3, {0.3, -0.2, 2.0}));
  try {
    assemble(m, m.loops().constraints, m.q0, m.u0);
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("did not converge"), std::string::npos) << what;
    EXPECT_NE(what.find("loop joint 'C'"), std::string::npos) << what;
    EXPECT_NE(what.find("iterations"), std::string::npos) << what;
    std::printf("message: %s\n", what.c_str());
  }
}

TEST(Assembly, RejectsWrongSizes) {
  const Model m = Model::build(four_bar(1, 1, 1, 1, {M_PI / 2, -M_PI / 2, M_PI / 2}));
  const Constraints& c = m.loops().constraints;
  EXPECT_THROW(assemble(m, c, VecX::Zero(m.nq + 1), m.u0), std::invalid_argument);
  EXPECT_THROW(assemble(m, c, m.q0, VecX::Zero(m.nv - 1)), std::invalid_argument);
  AssemblySettings s;
  s.fixed_speeds.assign(m.nv + 2, false);
  EXPECT_THROW(assemble(m, c, m.q0, m.u0, s), std::invalid_argument);
}

TEST(Assembly, TreeWithoutLoopsIsReturnedAsGiven) {
  const Model m = Model::build(test::random_tree(3, 6));
  std::mt19937_64 rng(3);
  const VecX q = test::random_q(m, rng), u = test::random_vector(m.nv, rng);
  const AssemblyResult r = assemble(m, m.loops().constraints, q, u);
  EXPECT_EQ(r.iterations, 0);
  EXPECT_TRUE(near(r.q, q, 1e-15));
  EXPECT_EQ(r.u, u);
  EXPECT_EQ(static_cast<int>(r.independent_speeds.size()), m.nv);
}

// ---------------------------------------------------------------------------------------------
// Random spatial loops that can close

// A random tree at a random q*, plus loop-closing joints of the given types whose child frames are
// placed so that each loop is exactly closed at q* with a random value of its own coordinates:
// Fc (in body b) = X_b⁻¹ X_a Tp J(q_loop).
struct ClosedMechanism {
  Mechanism mech;
  VecX q_star;  // closed configuration, model coordinate order
};

ClosedMechanism closable_loops(std::uint64_t seed, const std::vector<JointType>& loop_types) {
  ClosedMechanism out{test::random_tree(seed, 8, static_cast<int>(seed % 8)), {}};
  std::mt19937_64 rng(seed + 500);
  std::vector<std::pair<int, int>> ends;
  for (std::size_t t = 0; t < loop_types.size(); ++t) {
    const int a = std::uniform_int_distribution<int>(-1, 7)(rng);
    int b = std::uniform_int_distribution<int>(0, 7)(rng);
    if (b == a) b = (b + 1) % 8;
    ends.emplace_back(a, b);
    JointSpec& j = out.mech.add_joint(test::indexed("loop", static_cast<int>(t)), loop_types[t],
                                      a < 0 ? std::string("ground") : test::indexed("b", a), test::indexed("b", b),
                                      Transform{test::random_rotation(rng), test::random_vec(rng, 0.3)});
    j.cut = true;
    j.axis = test::random_vec(rng, 1.0).normalized();
    j.axis2 = j.axis.unitOrthogonal();
  }
  // First build: tree kinematics at q* and the loop joints' kernels (normalized axes).
  const Model pre = Model::build(out.mech);
  out.q_star = test::random_q(pre, rng);
  KinematicsData kin(pre);
  update_positions(pre, kin, out.q_star);
  auto world = [&](int mech_body) {
    return mech_body < 0 ? Transform{} : kin.X_world[pre.body_index(test::indexed("b", mech_body))];
  };
  for (std::size_t t = 0; t < loop_types.size(); ++t) {
    const ModelJoint& lj = pre.loop_joints[t];
    const Transform J = std::visit(
        [&](const auto& k) {
          std::array<double, 7> ql{};
          for (int c = 0; c < k.nq; ++c) ql[c] = test::uniform(rng, -1, 1);
          k.normalize(ql.data());
          return k.transform(ql.data());
        },
        lj.joint);
    JointSpec& spec = out.mech.joints[out.mech.joints.size() - loop_types.size() + t];
    spec.child_frame = world(ends[t].second).inverse() * world(ends[t].first) * spec.parent_frame * J;
  }
  return out;
}

TEST(Assembly, RandomSpatialLoopsCloseFromPerturbedConfigurations) {
  const std::vector<JointType> types{JointType::revolute,  JointType::prismatic, JointType::cylindrical,
                                     JointType::universal, JointType::spherical, JointType::planar,
                                     JointType::fixed};
  int max_iterations = 0, total = 0;
  double worst_phi = 0, worst_gu = 0;
  for (std::uint64_t seed = 1; seed <= 21; ++seed) {
    // Three loop joints per mechanism, types rotating through the list.
    std::vector<JointType> loops;
    for (int k = 0; k < 3; ++k) loops.push_back(types[(seed + 2 * k) % types.size()]);
    const ClosedMechanism cm = closable_loops(seed, loops);
    const Model m = Model::build(cm.mech);
    const Constraints& cons = m.loops().constraints;
    Check c(m);
    ASSERT_LE(c.phi(cm.q_star), 1e-13) << "seed " << seed;  // the construction closes the loops

    std::mt19937_64 rng(seed);
    VecX q0 = cm.q_star;
    integrate_q(m, q0, test::random_vector(m.nv, rng, 0.05));
    const VecX u0 = test::random_vector(m.nv, rng);
    ASSERT_GT(c.phi(q0), 1e-4) << "seed " << seed;

    const AssemblyResult r = assemble(m, cons, q0, u0);
    const MatX G = c.G(r.q);
    const double phi = c.phi(r.q), gu = (G * r.u).cwiseAbs().maxCoeff();
    EXPECT_LE(r.position_residual, 1e-12) << "seed " << seed;
    EXPECT_LE(phi, 1e-12) << "seed " << seed;
    EXPECT_LE(gu, 1e-12 * std::max(1.0, G.cwiseAbs().maxCoeff() * u0.cwiseAbs().maxCoeff())) << "seed " << seed;
    EXPECT_EQ(static_cast<int>(r.independent_speeds.size()), constraint_rank(m, cons, q0).dof) << "seed " << seed;
    // Independent speeds and the coordinates of wholly independent joints are kept.
    std::vector<bool> independent(m.nv, false);
    for (int k : r.independent_speeds) {
      independent[k] = true;
      EXPECT_EQ(r.u(k), u0(k)) << "seed " << seed << " speed " << k;
    }
    for (int i = 0; i < m.nbodies; ++i) {
      bool all = m.nq_joint[i] > 0;
      for (int k = 0; k < m.nv_joint[i]; ++k) all = all && independent[m.v_index[i] + k];
      if (all) {
        EXPECT_TRUE(near(r.q.segment(m.q_index[i], m.nq_joint[i]), q0.segment(m.q_index[i], m.nq_joint[i]), 1e-15))
            << "seed " << seed << " joint " << m.joints[i].name;
      }
    }
    max_iterations = std::max(max_iterations, r.iterations);
    total += r.iterations;
    worst_phi = std::max(worst_phi, phi);
    worst_gu = std::max(worst_gu, gu);
  }
  std::printf("21 random spatial mechanisms: iterations mean %.1f, max %d; max |Phi| %.2e, max |G u| %.2e\n",
              total / 21.0, max_iterations, worst_phi, worst_gu);
}

// ---------------------------------------------------------------------------------------------
// CLI

using loopdyn::test::CliResult;
CliResult run(const std::string& args) { return loopdyn::test::run_cli(args); }

std::filesystem::path scratch(const std::string& name) {
  return std::filesystem::temp_directory_path() / ("loopdyn_test_assembly_" + name);
}

// The docs' four-bar (ground 2, crank 0.5, coupler 2, rocker 1) with its angles off the loop.
std::string four_bar_yaml(double ground) {
  return "# four-bar, not closed\n"
         "name: four_bar\n"
         "gravity: [0, -9.81, 0]\n"
         "bodies:\n"
         "  - {name: crank, mass: 1, com: [0.25, 0, 0], inertia: [0.0001, 0.021, 0.021]}\n"
         "  - {name: coupler, mass: 2, com: [1, 0, 0], inertia: [0.0005, 0.67, 0.67]}\n"
         "  - {name: rocker, mass: 1.5, com: [0.5, 0, 0], inertia: [0.0002, 0.125, 0.125]}\n"
         "joints:\n"
         "  - name: crank_pivot\n"
         "    type: revolute\n"
         "    parent: ground\n"
         "    child: crank\n"
         "    q: 1.6707963267948966\n"
         "    u: 1.0\n"
         "  - {name: crank_pin, type: revolute, parent: crank, child: coupler, parent_frame: {xyz: [0.5, 0, 0]},"
         " q: -1.2}\n"
         "  - {name: rocker_pivot, type: revolute, parent: ground, child: rocker, parent_frame: {xyz: [" +
         std::to_string(ground) +
         ", 0, 0]}, q: 1.7}\n"
         "  - name: closure\n"
         "    type: revolute\n"
         "    parent: coupler\n"
         "    child: rocker\n"
         "    parent_frame: {xyz: [2, 0, 0]}\n"
         "    child_frame: {xyz: [1, 0, 0]}\n"
         "    cut: true\n";
}

TEST(Cli, AssemblePrintsAndWritesAClosedModel) {
  const auto in = scratch("four_bar.yaml"), out = scratch("four_bar_assembled.yaml");
  std::ofstream(in) << four_bar_yaml(2.0);
  std::filesystem::remove(out);
  const CliResult r = run("assemble " + in.string() + " --fix crank_pivot --out " + out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  for (const char* word : {"crank_pivot", "crank_pin", "rocker_pivot", "iterations", "position residual"})
    EXPECT_NE(r.output.find(word), std::string::npos) << word << "\n" << r.output;

  // The written file loads, is closed, and kept the fixed crank angle and speed exactly.
  const Model m = Model::build(load_mechanism(out.string()));
  Check c(m);
  EXPECT_LE(c.phi(m.q0), 1e-12);
  EXPECT_LE((c.G(m.q0) * m.u0).cwiseAbs().maxCoeff(), 1e-12);
  const int crank = m.joint_index("crank_pivot");
  EXPECT_EQ(m.q0(m.q_index[crank]), 1.6707963267948966);
  EXPECT_EQ(m.u0(m.v_index[crank]), 1.0);
  EXPECT_NE(m.u0(m.v_index[m.joint_index("rocker_pivot")]), 0.0);
  // Assembling the written file again takes no iteration.
  const CliResult again = run("assemble " + out.string() + " --fix crank_pivot");
  ASSERT_EQ(again.status, 0) << again.output;
  EXPECT_NE(again.output.find(" 0 iterations"), std::string::npos) << again.output;
}

TEST(Cli, AssembleOfALoopThatCannotCloseFailsWithOneLine) {
  const auto in = scratch("four_bar_far.yaml");
  std::ofstream(in) << four_bar_yaml(6.0);  // 0.5 + 2 + 1 < 6
  const CliResult r = run("assemble " + in.string());
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  EXPECT_NE(r.output.find("loop joint 'closure'"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace loopdyn
