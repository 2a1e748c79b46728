// Joint reaction wrenches (Reactions): loop joints from the multipliers against the constraint
// force −Gᵀλ through independent frame Jacobians, tree joints against the Newton-Euler balance of
// their subtrees (finite differences of the momentum, hand-computed pendulum and gear values),
// no moment along free joint directions, and the Simulator's reaction columns.
#include "loopdyn/loops/loop_structure.hpp"
#include "loopdyn/loops/reactions.hpp"

#include <Eigen/SVD>

#include <cmath>
#include <set>

#include "loopdyn/loops/assembly.hpp"
#include "loopdyn/formulations/formulation.hpp"
#include "loopdyn/io/model_file.hpp"
#include "loopdyn/run/simulator.hpp"
#include "loopdyn/formulations/registry.hpp"
#include "test_support.hpp"

namespace loopdyn {
namespace {

using test::near;

double inf_norm(const Eigen::Ref<const MatX>& x) { return x.size() ? x.cwiseAbs().maxCoeff() : 0.0; }

using State = test::LoopState;
using test::load_model;

std::vector<State> loop_states() {
  std::vector<State> out;
  out.push_back(test::assembled_state("fourbar_anderson", 1));  // loop joint with child = ground
  out.push_back(test::assembled_state("fourbar_spatial_park", 2));
  out.push_back(test::assembled_state("doubleloop_malczyk", 3));
  out.push_back({"parallelogram", Model::build(test::parallelogram_four_bar(true, 0.8)),
                 (VecX(3) << 0.8, -0.8, 0.8).finished(), (VecX(3) << 1.3, -1.3, 1.3).finished()});
  for (std::uint64_t seed = 1; seed <= 8; ++seed) out.push_back(test::random_loop_state(seed, 2 + static_cast<int>(seed % 2)));
  return out;
}

// u̇ and λ of a formulation at (q, u).
struct Solved {
  VecX udot, lambda;
};
Solved solve(const std::string& method, const Model& m, const VecX& q, const VecX& u, double t = 0.0) {
  auto f = make_formulation(method, m);
  Solved s{VecX(m.nv), {}};
  f->accelerations(t, q, u, s.udot);
  s.lambda = f->multipliers();
  return s;
}

// World pose of a loop joint's child-side frame Fc (the frame its reaction is expressed in).
Transform child_frame_world(const KinematicsData& kin, const ModelJoint& j) {
  return j.child >= 0 ? kin.X_world[j.child] * j.child_frame : j.child_frame;
}

// ---------------------------------------------------------------------------------------------
// 7. Loop joints: the wrenches reproduce the constraint force −Gᵀλ

TEST(Reactions, LoopWrenchesReproduceTheConstraintGeneralizedForce) {
  for (const State& s : loop_states()) {
    const Model& m = s.model;
    const Constraints& cons = m.loops().constraints;
    Reactions r(m, cons);
    KinematicsData kin(m);
    update_positions(m, kin, s.q);
    const auto [phi, G, gamma] = test::constraint_values(m, s.q, s.u);
    std::mt19937_64 rng(5);
    const Solved dyn = solve("lagrange-dense", m, s.q, s.u);
    // Any λ (the map is linear): the formulation's and a random one.
    for (const VecX& lambda : {dyn.lambda, test::random_vector(cons.rows(), rng, 10.0)}) {
      r.compute(0.0, s.q, s.u, dyn.udot, lambda);
      // Generalized force of the loop wrenches: the child body gets W at Fc, the parent body −W at
      // the same point, through frame Jacobians computed here (kinematics.hpp).
      VecX Q = VecX::Zero(m.nv);
      Mat6X J(6, m.nv);
      for (std::size_t k = 0; k < m.loop_joints.size(); ++k) {
        const ModelJoint& lj = m.loop_joints[k];
        const Vec6 W = r.wrenches().col(m.nbodies + static_cast<Eigen::Index>(k));
        const Transform Fc = child_frame_world(kin, lj);
        if (lj.child >= 0) {
          frame_jacobian(m, kin, lj.child, lj.child_frame, J);
          Q += J.transpose() * W;
        }
        if (lj.parent >= 0) {
          frame_jacobian(m, kin, lj.parent, kin.X_world[lj.parent].inverse() * Fc, J);
          Q -= J.transpose() * W;
        }
      }
      // Only loop-joint rows (these models have no coupling rows).
      for (const ConstraintRow& row : cons.kept()) ASSERT_NE(row.kind, ConstraintRow::Kind::coupling);
      // Frame transforms and dot products of size-1 quantities: 1e-10 relative is round-off.
      EXPECT_TRUE(near(Q, -G.transpose() * lambda, 1e-10)) << s.name;
      // The same loop wrenches, applied to the bodies by Reactions (body_forces, body frames, no
      // applied forces in these models except joint springs), give the same generalized force.
      VecX Qb = VecX::Zero(m.nv);
      for (int b = 0; b < m.nbodies; ++b) {
        frame_jacobian(m, kin, b, Transform{}, J);
        Qb += J.transpose() * r.body_forces().col(b);
      }
      EXPECT_TRUE(near(Qb, -G.transpose() * lambda, 1e-10)) << s.name;  // round-off, as above
    }
  }
}

// ---------------------------------------------------------------------------------------------
// 8. Tree joints: Newton-Euler balance

// Single rod pendulum on a revolute z joint at the origin, horizontal (q = 0: body frame = world),
// turning at ω, with products of inertia: the reaction on the rod in closed form. With l the
// distance of the mass centre along x, α = −m g l / (I_zz + m l²) and the world-fixed pivot,
//   force  = m a_c − m g = (−m ω² l, m α l + m g, 0),
//   moment = dH_O/dt − c × m g = (α I_xz − ω² I_yz, α I_yz + ω² I_xz, 0) about the pivot,
// where H_O = I_O ω z and d/dt of the rotating I_O z adds ω z × I_O ω z.
TEST(Reactions, SinglePendulumMatchesTheClosedForm) {
  const double mass = 2.0, l = 0.6, g = 9.81, w = 1.5;
  Mat3 Ic;
  Ic << 0.04, 0.0, 0.01, 0.0, 0.06, 0.005, 0.01, 0.005, 0.05;
  Mechanism mech;
  mech.gravity = Vec3(0, -g, 0);
  mech.add_body("rod", mass, Vec3(l, 0, 0), Ic);
  mech.add_joint("pivot", JointType::revolute, "ground", "rod");
  const Model m = Model::build(mech);
  const VecX q = VecX::Zero(1), u = VecX::Constant(1, w);
  const Solved dyn = solve("tree", m, q, u);
  const double alpha = -mass * g * l / (Ic(2, 2) + mass * l * l);
  ASSERT_NEAR(dyn.udot(0), alpha, 1e-12 * std::abs(alpha));  // ABA vs closed form, round-off
  Reactions r(m, m.loops().constraints);
  r.compute(0.0, q, u, dyn.udot, VecX());
  const Vec6 W = r.wrenches().col(0);
  const Vec3 force(-mass * w * w * l, mass * alpha * l + mass * g, 0.0);
  const Vec3 moment(alpha * Ic(0, 2) - w * w * Ic(1, 2), alpha * Ic(1, 2) + w * w * Ic(0, 2), 0.0);
  EXPECT_TRUE(near(W.tail<3>(), force, 1e-12)) << W.transpose();   // a few flops on O(10) values
  EXPECT_TRUE(near(W.head<3>(), moment, 1e-12)) << W.transpose();  // idem
  EXPECT_NEAR(r.joint_forces()(0), 0.0, 1e-12);  // no moment along the free axis (round-off)
}

// Momentum (about the world origin, world axes) of the bodies of the subtree rooted at body i.
Vec6 subtree_momentum(const Model& m, const VecX& q, const VecX& u, int i) {
  KinematicsData kin(m);
  update_positions(m, kin, q);
  update_velocities(m, kin, q, u);
  Vec6 h = Vec6::Zero();
  for (int b = i; b < i + m.subtree_size[i]; ++b) h += kin.X_world[b].act_force(m.inertia[b] * kin.v[b]);
  return h;
}

// dh/dt along the motion (q̇(q, u), u̇) by central differences: O(ε²) (test::moved).
Vec6 momentum_rate(const Model& m, const VecX& q, const VecX& u, const VecX& udot, int i, double eps = 1e-5) {
  return (subtree_momentum(m, test::moved(m, q, u, eps), u + eps * udot, i) -
          subtree_momentum(m, test::moved(m, q, u, -eps), u - eps * udot, i)) /
         (2 * eps);
}

// Wrench [moment about the world origin; force] of a force f at world point x.
Vec6 at_point(const Vec3& x, const Vec3& f) {
  Vec6 w;
  w << x.cross(f), f;
  return w;
}

// Σ of the external wrenches on the subtree of body i other than its joint's reaction: gravity
// and the loop-joint reactions (from Reactions' loop columns, checked by the test above) acting
// on its bodies. World axes, about the world origin.
Vec6 subtree_external(const Model& m, const KinematicsData& kin, const Reactions& r, int i) {
  auto in = [&](int b) { return b >= i && b < i + m.subtree_size[i]; };
  Vec6 w = Vec6::Zero();
  for (int b = i; b < i + m.subtree_size[i]; ++b)
    w += at_point(point_position(kin, b, m.com[b]), m.mass[b] * m.gravity);
  for (std::size_t k = 0; k < m.loop_joints.size(); ++k) {
    const ModelJoint& lj = m.loop_joints[k];
    const Vec6 W = child_frame_world(kin, lj).act_force(r.wrenches().col(m.nbodies + static_cast<Eigen::Index>(k)));
    if (lj.child >= 0 && in(lj.child)) w += W;
    if (lj.parent >= 0 && in(lj.parent)) w -= W;
  }
  return w;
}

// Reaction of tree joint i, world axes, about the world origin.
Vec6 reaction_world(const Model& m, const KinematicsData& kin, const Reactions& r, int i) {
  return (kin.X_world[i] * m.joints[i].child_frame).act_force(r.wrenches().col(i));
}

// Double pendulum of Park et al. with its body torque M1 and point force Fp (written out here
// from the model file): for each joint, reaction = dh/dt of its subtree − gravity − applied.
// The root joint's force part is Σ m a_c − Σ m g − Fp.
TEST(Reactions, DoublePendulumJointsBalanceTheirSubtreesMomentumRate) {
  const Model m = load_model("double_pendulum");
  const VecX q = (VecX(2) << 0.524, 0.261).finished(), u = (VecX(2) << 0.7, -1.1).finished();
  const Solved dyn = solve("tree", m, q, u);
  Reactions r(m, m.loops().constraints);
  r.compute(0.0, q, u, dyn.udot, VecX());
  KinematicsData kin(m);
  update_positions(m, kin, q);
  const int link1 = m.body_index("link1"), link2 = m.body_index("link2");
  const Vec6 M1 = (Vec6() << 0, 0, 10, 0, 0, 0).finished();
  const Vec6 Fp = at_point(point_position(kin, link2, Vec3(2, 0, 0)), Vec3(8, 7, 0));
  for (const char* joint : {"shoulder", "elbow"}) {
    const int i = m.joint_index(joint);
    Vec6 applied = Fp;  // link2 is in both subtrees
    if (i == link1) applied += M1;
    const Vec6 expected = momentum_rate(m, q, u, dyn.udot, i) - subtree_external(m, kin, r, i) - applied;
    // Central differences with ε = 1e-5: truncation ε² |h'''| ~ 1e-8 and round-off 1e-16 |h| / ε
    // ~ 1e-9 against wrenches of ~100: 1e-7 relative.
    EXPECT_TRUE(near(reaction_world(m, kin, r, i), expected, 1e-7)) << joint;
  }
  // The check is sensitive: dropping Fp from the expectation misses by |Fp| ~ 10.
  const int root = m.joint_index("shoulder");
  EXPECT_FALSE(near(reaction_world(m, kin, r, root),
                    momentum_rate(m, q, u, dyn.udot, root) - subtree_external(m, kin, r, root) - M1, 1e-7));
  // And the joint forces along the free axes vanish (no joint springs or drives).
  EXPECT_LT(inf_norm(r.joint_forces()), 1e-9);  // EOM residual of the ABA, round-off on ~100 N m
}

// Every tree joint of random spatial loop mechanisms (all joint types) and of the paper models:
// reaction = dh/dt of the subtree − gravity − loop-joint reactions on the subtree, at the u̇ and λ
// of a formulation.
TEST(Reactions, TreeJointsBalanceTheirSubtreesWithLoopWrenches) {
  for (const State& s : loop_states()) {
    const Model& m = s.model;
    const Solved dyn = solve("lagrange-dense", m, s.q, s.u);
    Reactions r(m, m.loops().constraints);
    r.compute(0.0, s.q, s.u, dyn.udot, dyn.lambda);
    KinematicsData kin(m);
    update_positions(m, kin, s.q);
    for (int i = 0; i < m.nbodies; ++i) {
      const Vec6 expected = momentum_rate(m, s.q, s.u, dyn.udot, i) - subtree_external(m, kin, r, i);
      // As for the double pendulum (ε = 1e-5 central differences): 1e-7 relative.
      EXPECT_TRUE(near(reaction_world(m, kin, r, i), expected, 1e-7)) << s.name << ", joint " << m.joints[i].name;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// 9. No moment (or force) along the free directions of a joint

// Sᵀ W of tree joint i: S of the joint kernel in the child joint frame (joints.hpp).
VecX along_free_directions(const Model& m, const VecX& q, int i, const Vec6& W) {
  return std::visit(
      [&](const auto& k) -> VecX {
        if constexpr (decltype(k.subspace(nullptr))::ColsAtCompileTime == 0) return VecX();
        else return k.subspace(q.data() + m.q_index[i]).transpose() * W;
      },
      m.joints[i].joint);
}

TEST(Reactions, JointsTransmitNoMomentAlongTheirFreeAxes) {
  int spatial_revolute_loops = 0;
  for (const State& s : loop_states()) {
    const Model& m = s.model;
    const Solved dyn = solve("lagrange-dense", m, s.q, s.u);
    Reactions r(m, m.loops().constraints);
    r.compute(0.0, s.q, s.u, dyn.udot, dyn.lambda);
    const double scale = std::max(1.0, inf_norm(r.wrenches()));
    // Expected Sᵀ W: zero, except the spring-damper k (rest − q) − c q̇ of fourbar_spatial_park's
    // crank (k = 1, c = 5, rest = 0; written out from the model file).
    VecX expected = VecX::Zero(m.nv);
    if (s.name == "fourbar_spatial_park") {
      const int crank = m.joint_index("crank_pivot");
      expected(m.v_index[crank]) = -1.0 * s.q(m.q_index[crank]) - 5.0 * s.u(m.v_index[crank]);
      ASSERT_GT(std::abs(expected(m.v_index[crank])), 1e-3);  // the random speed makes it non-zero
    }
    for (int i = 0; i < m.nbodies; ++i) {
      if (m.nv_joint[i] == 0) continue;  // fixed joint: no free direction (test::near needs entries)
      const VecX along = along_free_directions(m, s.q, i, r.wrenches().col(i));
      // The multipliers and u̇ solve the equations of motion to round-off (cond < 1e8): 1e-9 relative.
      EXPECT_TRUE(near(along, expected.segment(m.v_index[i], m.nv_joint[i]), 1e-9 * scale))
          << s.name << ", joint " << m.joints[i].name;
    }
    EXPECT_TRUE(near(r.joint_forces(), expected, 1e-9 * scale)) << s.name;  // same quantity, same bound
    // Loop joints: a revolute loop joint has no moment along its axis, a spherical one none at all.
    const bool spatial = s.name.rfind("random", 0) == 0;
    for (std::size_t k = 0; k < m.loop_joints.size(); ++k) {
      const Vec6 W = r.wrenches().col(m.nbodies + static_cast<Eigen::Index>(k));
      if (const auto* rev = std::get_if<Revolute>(&m.loop_joints[k].joint)) {
        EXPECT_LE(std::abs(W.head<3>().dot(rev->axis)), 1e-12 * scale) << s.name;  // exact up to round-off
        // Spatial loops carry moments across the axis. Planar loops carry none: their out-of-plane
        // rows are dropped, and the (statically indeterminate) out-of-plane moments go to the tree
        // joints (reactions.hpp).
        if (spatial) {
          EXPECT_GT(W.head<3>().norm(), 1e-3) << s.name;  // O(1-10) N m under gravity; 1e-3 = clearly non-zero
          ++spatial_revolute_loops;
        } else {
          EXPECT_EQ(W.head<3>().norm(), 0.0) << s.name;
        }
      }
      if (std::holds_alternative<Spherical>(m.loop_joints[k].joint)) {
        EXPECT_LE(W.head<3>().norm(), 1e-12 * scale) << s.name;  // no dot rows: exactly zero up to round-off
        EXPECT_GT(W.tail<3>().norm(), 0.1) << s.name;  // but a force (gravity acts on every link)
      }
    }
  }
  EXPECT_GE(spatial_revolute_loops, 2);  // the random cases include revolute loop joints
}

// Two wheels on ground axles, geared 2:1 (coupling row, no loop joint), motor torque 1 N m on
// wheel 1, mass centres on the axles. Closed form: u̇1 = 1 / (I1 + 4 I2) = 80, u̇2 = −160; the
// axles carry I1 u̇1 = 0.8 and I2 u̇2 = −0.1 N m about z (motor minus gear tooth torque), and the
// wheels' weight: world force (0, m g, 0), in the child joint frame turned by −q.
TEST(Reactions, GearedPairAxlesCarryTheGearTorqueAndTheWeight) {
  const Model m = load_model("geared_pair");
  const VecX q = m.q0, u = m.u0;
  const Solved dyn = solve("lagrange-dense", m, q, u);
  ASSERT_NEAR(dyn.udot(m.v_index[m.joint_index("wheel1_axle")]), 80.0, 1e-9);   // round-off on 80
  ASSERT_NEAR(dyn.udot(m.v_index[m.joint_index("wheel2_axle")]), -160.0, 1e-9);  // idem
  Reactions r(m, m.loops().constraints);
  r.compute(0.0, q, u, dyn.udot, dyn.lambda);
  struct Expect {
    const char* joint;
    double mass, torque;
  };
  for (const Expect& e : {Expect{"wheel1_axle", 2.0, 0.8}, Expect{"wheel2_axle", 0.5, -0.1}}) {
    const int i = m.joint_index(e.joint);
    const Vec6 W = r.wrenches().col(i);
    const Vec3 force = axis_rotation(Vec3::UnitZ(), -q(m.q_index[i])) * Vec3(0, e.mass * 9.81, 0);
    EXPECT_TRUE(near(W.tail<3>(), force, 1e-12)) << e.joint;  // round-off on ~20 N
    // 1e-10: u̇ and λ from the dense solve, relative round-off on the 80 rad/s² scale.
    EXPECT_TRUE(near(W.head<3>(), Vec3(0, 0, e.torque), 1e-10)) << e.joint << ": " << W.transpose();
  }
}

// ---------------------------------------------------------------------------------------------
// 10. Simulator columns

TEST(Reactions, SimulatorWritesEveryJointsColumnsEqualToADirectComputation) {
  const State s = test::assembled_state("fourbar_spatial_park", 9);
  const Model& m = s.model;
  for (const char* method : {"lagrange-on", "gcp"}) {
    auto f = make_formulation(method, m);
    SimulationSettings settings = test::fixed_step_settings(0.01, 0.5, 0.1);
    settings.reactions = true;
    Simulator sim(m, *f, settings);
    const Trajectory t = sim.run(s.q, s.u);
    ASSERT_EQ(t.rows.size(), 6u);
    // Names: every tree joint and every loop joint, six columns each, nothing else.
    std::vector<std::string> joints;
    for (const ModelJoint& j : m.joints) joints.push_back(j.name);
    for (const ModelJoint& j : m.loop_joints) joints.push_back(j.name);
    ASSERT_EQ(joints.size(), 4u);
    int count = 0;
    for (const std::string& c : t.columns) count += c.rfind("reaction.", 0) == 0;
    EXPECT_EQ(count, 24) << method;
    for (std::size_t row = 0; row < t.rows.size(); ++row) {
      const VecX q = t.rows[row].segment(1, m.nq), u = t.rows[row].segment(1 + m.nq, m.nv);
      const double time = t.at(row, "t");
      const Solved dyn = solve(method, m, q, u, time);
      Reactions r(m, m.loops().constraints);
      r.compute(time, q, u, dyn.udot, dyn.lambda);
      for (std::size_t j = 0; j < joints.size(); ++j) {
        const Vec6 W = r.wrenches().col(static_cast<Eigen::Index>(j));  // tree joints first, model order
        const std::string p = "reaction." + joints[j];
        const Vec6 columns = (Vec6() << t.at(row, p + ".tx"), t.at(row, p + ".ty"), t.at(row, p + ".tz"),
                              t.at(row, p + ".fx"), t.at(row, p + ".fy"), t.at(row, p + ".fz"))
                                 .finished();
        // Same state and the same deterministic computation (a fresh formulation): round-off only.
        EXPECT_TRUE(near(columns, W, 1e-12)) << method << ", " << p << ", t = " << time;
      }
    }
  }
  // Without the setting: no reaction columns.
  auto f = make_formulation("lagrange-on", m);
  SimulationSettings plain;
  plain.t_end = 0.01;
  plain.output_dt = 0.01;
  Simulator sim(m, *f, plain);
  const Trajectory t = sim.run(s.q, s.u);
  for (const std::string& c : t.columns) EXPECT_NE(c.rfind("reaction.", 0), 0u) << c;
}

// ---------------------------------------------------------------------------------------------
// 11. Sizes

TEST(Reactions, RejectsWrongSizes) {
  const Model m = Model::build(test::parallelogram_four_bar());
  const Constraints& c = m.loops().constraints;
  Reactions r(m, c);
  const VecX q = m.q0, u = VecX::Zero(m.nv), udot = VecX::Zero(m.nv), lambda = VecX::Zero(c.rows());
  EXPECT_NO_THROW(r.compute(0, q, u, udot, lambda));
  EXPECT_THROW(r.compute(0, VecX::Zero(m.nq + 1), u, udot, lambda), std::invalid_argument);
  EXPECT_THROW(r.compute(0, q, VecX::Zero(m.nv - 1), udot, lambda), std::invalid_argument);
  EXPECT_THROW(r.compute(0, q, u, VecX::Zero(m.nv + 1), lambda), std::invalid_argument);
  EXPECT_THROW(r.compute(0, q, u, udot, VecX::Zero(c.rows() + 1)), std::invalid_argument);
  EXPECT_THROW(r.compute(0, q, u, udot, VecX()), std::invalid_argument);
  // Column names: six per joint, tree joints then loop joints.
  const std::vector<std::string> names = Reactions::column_names(m);
  ASSERT_EQ(names.size(), 24u);
  EXPECT_EQ(names.front(), "reaction.A.fx");
  EXPECT_EQ(names[5], "reaction.A.tz");
  EXPECT_EQ(names.back(), "reaction.C.tz");
}

}  // namespace
}  // namespace loopdyn
