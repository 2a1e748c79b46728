// Benchmark generators (generators.hpp): the splitmix64 stream against an independent reference,
// chain/branched tree data, and the planar ladder in its three layouts (counts, loops closed at
// position and velocity level at the benchmark state, mobility, same geometry in every layout,
// and the L = 1 static check value 6 g sin φ₀ / 5), and the spatial ladder of paper 000 §4.3
// (counts, loops closed at its state, 2 DOF, accelerations of the equivalent 2-dof pendulum).
#include <Eigen/Cholesky>
#include <Eigen/SVD>
#include <cmath>
#include <limits>
#include <map>

#include "loopdyn/mechanisms/generators.hpp"
#include "loopdyn/loops/assembly.hpp"
#include "loopdyn/loops/loop_structure.hpp"
#include "loopdyn/formulations/formulation.hpp"
#include "loopdyn/core/tree_dynamics.hpp"
#include "loopdyn/formulations/registry.hpp"
#include "test_support.hpp"

namespace loopdyn {
namespace {

constexpr LadderLayout all_layouts[] = {LadderLayout::serial, LadderLayout::comb, LadderLayout::comb_parents_first};
constexpr int ladder_sizes[] = {1, 2, 4, 8, 16, 32, 128};

const char* layout_name(LadderLayout l) {
  return l == LadderLayout::serial ? "serial" : l == LadderLayout::comb ? "comb" : "comb_parents_first";
}

TEST(SplitMix64, ReferenceStreamSeedZero) {
  // Reference splitmix64 stream for seed 0 (Vigna's splitmix64.c).
  SplitMix64 rng(0);
  EXPECT_EQ(rng.next(), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(rng.next(), 0x6e789e6aa1b965f4ULL);
  EXPECT_EQ(rng.next(), 0x06c45d188009454fULL);
  // uniform(−1, 1) of the first value: (0xe220a8397b1dcdaf >> 11) = 0x1c4415072f63b9, so
  // −1 + 2 · 0x1c4415072f63b9 · 2⁻⁵³ = 0x1.8882a0e5ec772p-1 exactly (computed in Python).
  SplitMix64 again(0);
  EXPECT_EQ(again.uniform(-1.0, 1.0), 0x1.8882a0e5ec772p-1);
}

TEST(Chain, CountsAxesAndFrames) {
  for (int n : {1, 2, 3, 8, 32}) {
    const Mechanism mech = chain_mechanism(n);
    const Model m = Model::build(mech);
    ASSERT_EQ(m.nbodies, n);
    EXPECT_EQ(m.nq, n);
    EXPECT_EQ(m.nv, n);
    EXPECT_FALSE(m.has_loops());
    EXPECT_EQ(m.gravity, Vec3(0.0, 0.0, -9.81));
    for (int i = 0; i < n; ++i) {
      EXPECT_EQ(m.body_name[i], "link" + std::to_string(i));
      EXPECT_EQ(m.joints[i].name, "joint" + std::to_string(i));
      EXPECT_EQ(m.parent[i], i - 1);
      ASSERT_TRUE(std::holds_alternative<Revolute>(m.joints[i].joint));
      const Vec3 expected_axis = i % 3 == 0 ? Vec3::UnitZ() : i % 3 == 1 ? Vec3::UnitY() : Vec3::UnitX();
      EXPECT_EQ(std::get<Revolute>(m.joints[i].joint).axis, expected_axis) << "joint " << i;
      EXPECT_EQ(m.joints[i].parent_frame.p, i == 0 ? Vec3::Zero() : Vec3(0.0, 0.0, 1.0));
      EXPECT_TRUE(m.joints[i].parent_frame.R.isIdentity(0.0));
      EXPECT_EQ(m.mass[i], 1.0);
      EXPECT_EQ(m.com[i], Vec3(0.0, 0.0, 0.5));
      EXPECT_EQ(mech.bodies[i].inertia, Mat3(Vec3(0.1, 0.1, 0.01).asDiagonal()));
    }
  }
}

TEST(Chain, StateIsTheSeededStream) {
  const ChainState a = chain_state(8), b = chain_state(8);
  EXPECT_EQ(a.q, b.q);
  EXPECT_EQ(a.u, b.u);
  EXPECT_EQ(a.tau, b.tau);
  EXPECT_EQ(a.qdd, b.qdd);
  // First draws of SplitMix64(12345 + 8) through uniform(−1, 1), computed in Python.
  EXPECT_EQ(a.q(0), -0x1.16adbb22f629cp-1);
  EXPECT_EQ(a.q(1), 0x1.7d7f4120e85a8p-2);
  // Draw order q, u, τ, q̈ from one generator.
  SplitMix64 rng(12345 + 8);
  for (const VecX* v : {&a.q, &a.u, &a.tau, &a.qdd})
    for (int k = 0; k < 8; ++k) EXPECT_EQ((*v)(k), rng.uniform(-1.0, 1.0));
  for (const VecX* v : {&a.q, &a.u, &a.tau, &a.qdd}) EXPECT_LE(v->cwiseAbs().maxCoeff(), 1.0);
  EXPECT_NE(chain_state(32).q(0), a.q(0));
  EXPECT_THROW(chain_state(0), std::invalid_argument);
}

TEST(Branched, BinaryTreeAndState) {
  for (int n : {1, 2, 7, 8, 32}) {
    const Model m = Model::build(branched_tree_mechanism(n));
    ASSERT_EQ(m.nbodies, n);
    EXPECT_EQ(m.nv, n);
    for (int i = 0; i < n; ++i) {
      const int b = m.body_index("link" + std::to_string(i));
      EXPECT_EQ(m.joint_index("joint" + std::to_string(i)), b);
      EXPECT_EQ(m.parent[b], i == 0 ? -1 : m.body_index("link" + std::to_string((i - 1) / 2)));
      const Vec3 offset = i == 0 ? Vec3::Zero() : i % 2 ? Vec3(0.0, 0.0, 1.0) : Vec3(0.0, 0.5, 1.0);
      EXPECT_EQ(m.joints[b].parent_frame.p, offset);
    }
    const ChainState s = branched_tree_state(m), s2 = branched_tree_state(m);
    EXPECT_EQ(s.q, s2.q);
    SplitMix64 rng(54321 + static_cast<std::uint64_t>(n));
    for (const VecX* v : {&s.q, &s.u, &s.tau, &s.qdd})
      for (int k = 0; k < n; ++k)
        EXPECT_EQ((*v)(m.v_index[m.joint_index("joint" + std::to_string(k))]), rng.uniform(-1.0, 1.0));
  }
}

TEST(Ladder, CountsAndListingOrder) {
  for (LadderLayout layout : all_layouts) {
    for (int L : ladder_sizes) {
      const Mechanism mech = ladder_mechanism(L, layout);
      const Model m = Model::build(mech);
      SCOPED_TRACE(std::string(layout_name(layout)) + " L = " + std::to_string(L));
      EXPECT_EQ(m.nbodies, 3 * L);
      EXPECT_EQ(mech.joints.size(), static_cast<size_t>(4 * L));
      EXPECT_EQ(m.loop_joints.size(), static_cast<size_t>(L));
      EXPECT_EQ(m.nv, 3 * L);
      EXPECT_EQ(m.gravity, Vec3(0.0, -9.81, 0.0));
      for (const JointSpec& j : mech.joints) {
        EXPECT_EQ(j.type, JointType::revolute);
        EXPECT_EQ(j.axis, Vec3::UnitZ());
      }
    }
    const Mechanism mech = ladder_mechanism(2, layout);
    std::vector<std::string> names;
    for (const BodySpec& b : mech.bodies) names.push_back(b.name);
    const std::vector<std::string> expected =
        layout == LadderLayout::serial ? std::vector<std::string>{"lp0", "rung0", "rp0", "lp1", "rung1", "rp1"}
        : layout == LadderLayout::comb ? std::vector<std::string>{"rp0", "lp0", "rung0", "rp1", "lp1", "rung1"}
                                       : std::vector<std::string>{"lp0", "rp0", "rung0", "lp1", "rp1", "rung1"};
    EXPECT_EQ(names, expected) << layout_name(layout);
  }
  // The loop-closing pin of each layout.
  EXPECT_EQ(Model::build(ladder_mechanism(3, LadderLayout::serial)).loop_joints[2].name, "rp2_bottom");
  EXPECT_EQ(Model::build(ladder_mechanism(3, LadderLayout::comb)).loop_joints[2].name, "rp2_top");
  EXPECT_THROW(ladder_mechanism(0, LadderLayout::comb), std::invalid_argument);
}

TEST(Ladder, StateClosesEveryLoopWithMobilityL) {
  for (LadderLayout layout : all_layouts) {
    for (int L : ladder_sizes) {
      SCOPED_TRACE(std::string(layout_name(layout)) + " L = " + std::to_string(L));
      const Model m = Model::build(ladder_mechanism(L, layout));
      const LadderState s = ladder_state(m, L);
      KinematicsData kin(m);
      update_positions(m, kin, s.q);
      update_velocities(m, kin, s.q, s.u);
      double pos_err = 0.0, vel_err = 0.0, rot_err = 0.0;
      for (const ModelJoint& lj : m.loop_joints) {
        // Both ends of the cut pin at the same world point, joint frames turned about z only.
        const Vec3 xp = point_position(kin, lj.parent, lj.parent_frame.p);
        const Vec3 xc = point_position(kin, lj.child, lj.child_frame.p);
        pos_err = std::max(pos_err, (xp - xc).cwiseAbs().maxCoeff());
        vel_err = std::max(vel_err, (point_velocity(kin, lj.parent, lj.parent_frame.p) -
                                     point_velocity(kin, lj.child, lj.child_frame.p))
                                        .cwiseAbs()
                                        .maxCoeff());
        const Mat3 Rc = lj.child < 0 ? Mat3::Identity() : kin.X_world[lj.child].R;
        rot_err = std::max(rot_err, (Rc.col(2) - Vec3::UnitZ()).cwiseAbs().maxCoeff());
      }
      EXPECT_LE(pos_err, 1e-12);
      EXPECT_LE(vel_err, 1e-12);
      EXPECT_LE(rot_err, 1e-12);
      // Velocity-level loop Jacobian: G u = 0 at the benchmark rates.
      const auto [phi, G, gamma] = test::constraint_values(m, s.q, s.u);
      EXPECT_LE(phi.cwiseAbs().maxCoeff(), 1e-12);
      EXPECT_LE((G * s.u).cwiseAbs().maxCoeff(), 1e-12);
      EXPECT_EQ(phi.size(), 2 * L);  // 3 of the 5 rows of each planar revolute closure are redundant
      EXPECT_EQ(constraint_rank(m, m.loops().constraints, s.q).dof, L);
    }
  }
}

// World pose of every body's centre of mass by body name.
std::map<std::string, std::pair<Vec3, Mat3>> com_poses(const Model& m, const VecX& q) {
  KinematicsData kin(m);
  update_positions(m, kin, q);
  std::map<std::string, std::pair<Vec3, Mat3>> out;
  for (int i = 0; i < m.nbodies; ++i) out[m.body_name[i]] = {kin.X_world[i].apply(m.com[i]), kin.X_world[i].R};
  return out;
}

TEST(Ladder, LayoutsGiveTheSameGeometry) {
  for (int L : {1, 3, 16}) {
    const Model serial = Model::build(ladder_mechanism(L, LadderLayout::serial));
    const auto reference = com_poses(serial, ladder_state(serial, L).q);
    const auto at_zero = com_poses(serial, VecX::Zero(serial.nq));
    // Drawn at q = 0: cell k has its posts from (0, k), (1, k) up and its rung at height k + 1.
    for (int k = 0; k < L; ++k) {
      EXPECT_TRUE(at_zero.at("lp" + std::to_string(k)).first.isApprox(Vec3(0.0, k + 0.5, 0.0)));
      EXPECT_TRUE(at_zero.at("rp" + std::to_string(k)).first.isApprox(Vec3(1.0, k + 0.5, 0.0)));
      EXPECT_TRUE(at_zero.at("rung" + std::to_string(k)).first.isApprox(Vec3(0.5, k + 1.0, 0.0)));
    }
    for (LadderLayout layout : {LadderLayout::comb, LadderLayout::comb_parents_first}) {
      const Model m = Model::build(ladder_mechanism(L, layout));
      const auto poses = com_poses(m, ladder_state(m, L).q);
      ASSERT_EQ(poses.size(), reference.size());
      for (const auto& [name, pose] : reference) {
        EXPECT_LE((poses.at(name).first - pose.first).cwiseAbs().maxCoeff(), 1e-12) << layout_name(layout) << " " << name;
        EXPECT_LE((poses.at(name).second - pose.second).cwiseAbs().maxCoeff(), 1e-12) << layout_name(layout) << " " << name;
      }
    }
  }
}

// Constrained accelerations at rest (u = 0, so G q̈ = 0 exactly): q̈ = N (NᵀMN)⁻¹ Nᵀ(τ − C) with N
// an orthonormal basis of ker G. An independent dense check of the ladder data, not a method.
VecX qdd_at_rest(const Model& m, const VecX& q) {
  KinematicsData kin(m);
  update_positions(m, kin, q);
  const Constraints& cons = m.loops().constraints;
  ConstraintData cd(m);
  MatX G(cons.rows(), m.nv);
  constraint_jacobian(m, cons, kin, cd, G);
  const Eigen::JacobiSVD<MatX> svd(G, Eigen::ComputeFullV);
  const int rank = constraint_rank(m, cons, q).rank;
  const MatX N = svd.matrixV().rightCols(m.nv - rank);
  MatX M(m.nv, m.nv);
  CrbaData crba_data(m);
  crba(m, crba_data, q, M);
  VecX C(m.nv);
  RneaData rnea_data(m);
  rnea(m, rnea_data, q, VecX::Zero(m.nv), VecX::Zero(m.nv), nullptr, C);
  const MatX Mr = N.transpose() * M * N;
  return N * Mr.llt().solve(-N.transpose() * C);
}

// Absolute angular acceleration of every body (planar: sum of q̈ from ground), by name.
std::map<std::string, double> absolute(const Model& m, const VecX& qdd) {
  std::vector<double> w(m.nbodies);
  std::map<std::string, double> out;
  for (int i = 0; i < m.nbodies; ++i) {
    w[i] = qdd(m.v_index[i]) + (m.parent[i] < 0 ? 0.0 : w[m.parent[i]]);
    out[m.body_name[i]] = w[i];
  }
  return out;
}

TEST(Ladder, StaticCheckValueAndLayoutInvariance) {
  // L = 1: left post 0 accelerates at 6 g sin φ₀ / 5 (benchmarks.md; M = 5/3, V = 2 g cos φ).
  const double expected = 6.0 * 9.81 * std::sin(0.3) / 5.0;
  EXPECT_NEAR(expected, 3.478863873, 1e-9);
  for (LadderLayout layout : all_layouts) {
    const Model m = Model::build(ladder_mechanism(1, layout));
    const VecX qdd = qdd_at_rest(m, ladder_state(m, 1).q);
    EXPECT_NEAR(qdd(m.v_index[m.joint_index("lp0_bottom")]), expected, 1e-12) << layout_name(layout);
  }
  // L = 8: the absolute angular accelerations agree across layouts.
  const int L = 8;
  const Model serial = Model::build(ladder_mechanism(L, LadderLayout::serial));
  const auto reference = absolute(serial, qdd_at_rest(serial, ladder_state(serial, L).q));
  for (LadderLayout layout : {LadderLayout::comb, LadderLayout::comb_parents_first}) {
    const Model m = Model::build(ladder_mechanism(L, layout));
    const auto w = absolute(m, qdd_at_rest(m, ladder_state(m, L).q));
    for (const auto& [name, value] : reference) EXPECT_NEAR(w.at(name), value, 1e-10) << layout_name(layout) << " " << name;
  }
  for (const auto& [name, value] : reference) {
    if (name.rfind("rung", 0) == 0) {
      EXPECT_NEAR(value, 0.0, 1e-10) << name;  // rungs translate
    }
  }
}


// Spatial ladder (paper 000 §4.3, generators.hpp): N = 2L + 1, n = 4L + 2, m = 4L, 2 DOF.
constexpr int spatial_sizes[] = {1, 2, 3, 8};

TEST(SpatialLadder, CountsJointsAndGeometry) {
  for (int L : spatial_sizes) {
    SCOPED_TRACE("L = " + std::to_string(L));
    const Mechanism mech = spatial_ladder_mechanism(L);
    const Model m = Model::build(mech);
    EXPECT_EQ(m.name, "spatial-ladder-" + std::to_string(L));
    EXPECT_EQ(m.nbodies, 2 * L + 1);
    EXPECT_EQ(m.nq, 4 * L + 2);
    EXPECT_EQ(m.nv, 4 * L + 2);
    ASSERT_EQ(m.loop_joints.size(), static_cast<size_t>(L));
    EXPECT_EQ(Constraints::all_rows(m).size(), static_cast<size_t>(5 * L));  // 5 rows per revolute
    EXPECT_EQ(m.gravity, Vec3(0.0, 0.0, -9.81));
    for (const JointSpec& j : mech.joints) EXPECT_EQ(j.type, j.cut ? JointType::revolute : JointType::universal) << j.name;
    for (const ModelJoint& lj : m.loop_joints) {
      ASSERT_TRUE(std::holds_alternative<Revolute>(lj.joint));
      EXPECT_EQ(std::get<Revolute>(lj.joint).axis, Vec3::UnitY());
    }
    // At q = 0: post k hangs from (k, 0, 0) down to (k, 0, −1); rung k joins (k − 1, 0, −1) to (k, 0, −1).
    const auto at_zero = com_poses(m, VecX::Zero(m.nq));
    for (int k = 0; k <= L; ++k)
      EXPECT_TRUE(at_zero.at("post" + std::to_string(k)).first.isApprox(Vec3(k, 0.0, -0.5))) << k;
    for (int k = 1; k <= L; ++k)
      EXPECT_TRUE(at_zero.at("rung" + std::to_string(k)).first.isApprox(Vec3(k - 0.5, 0.0, -1.0))) << k;
  }
  EXPECT_THROW(spatial_ladder_mechanism(0), std::invalid_argument);
  EXPECT_THROW(spatial_ladder_state(Model::build(spatial_ladder_mechanism(2)), 3), std::invalid_argument);
}

TEST(SpatialLadder, StateClosesEveryLoopWithTwoDof) {
  for (int L : spatial_sizes) {
    SCOPED_TRACE("L = " + std::to_string(L));
    const Model m = Model::build(spatial_ladder_mechanism(L));
    const SpatialLadderState s = spatial_ladder_state(m, L);
    EXPECT_GT(s.u.cwiseAbs().maxCoeff(), 0.1);
    // Kept rows (what the formulations use) and every row (structurally redundant ones included).
    const auto [phi, G, gamma] = test::constraint_values(m, s.q, s.u);
    EXPECT_LE(phi.cwiseAbs().maxCoeff(), 1e-12);
    EXPECT_LE((G * s.u).cwiseAbs().maxCoeff(), 1e-12);
    const Constraints& all = m.loops().unreduced;
    KinematicsData kin(m);
    update_positions(m, kin, s.q);
    ConstraintData cd(m);
    VecX phi_all(all.rows());
    MatX G_all(all.rows(), m.nv);
    constraint_position(m, all, kin, 0.0, cd, phi_all);
    constraint_jacobian(m, all, kin, cd, G_all);
    EXPECT_LE(phi_all.cwiseAbs().maxCoeff(), 1e-12);
    EXPECT_LE((G_all * s.u).cwiseAbs().maxCoeff(), 1e-12);
    // m = 4L independent constraints: the 5L rows have rank 4L, DOF 2 (§4.3).
    const RankInfo r = constraint_rank(m, all, s.q);
    EXPECT_EQ(r.rank, 4 * L);
    EXPECT_EQ(r.dof, 2);
    // The structural check, decided at closed configurations, drops one row per cell and keeps
    // 4L rows of rank 4L (more sizes in KeptRowsKeepTwoDofAtLargeL).
    const Constraints& kept = m.loops().constraints;
    EXPECT_EQ(kept.rows(), 4 * L);
    EXPECT_EQ(constraint_rank(m, kept, s.q).dof, 2);
  }
}

// Every post at Rot(x, α) Rot(y, β), every rung at Rot(x, α): one 2-dof spatial pendulum (§4.3,
// figure 10). With posts of inertia diag(1/3, 1/3, ε) about their pivots, rungs of mass 1 moving
// with the post tips and spinning at α̇ about their own axis (inertia ε = 10⁻³):
//   T = ½ [M₁₁(β) α̇² + a β̇²],  M₁₁ = a cos²β + ε ((L + 1) sin²β + L),  a = (L + 1)/3 + L,
//   V = −g c cos α cos β,  c = (L + 1)/2 + L,
// Lagrange's equations give α̈, β̈; every post_top joint has (α̈, β̈), every rung_left (−β̈, 0).
VecX pendulum_accelerations(const Model& m, int L, const SpatialLadderState& s) {
  const int p0 = m.joint_index("post0_top");
  const double al = s.q(m.q_index[p0]), be = s.q(m.q_index[p0] + 1);
  const double ad = s.u(m.v_index[p0]), bd = s.u(m.v_index[p0] + 1);
  const double g = 9.81, eps = 1e-3, a = (L + 1) / 3.0 + L, c = 0.5 * (L + 1) + L;
  const double M11 = a * std::cos(be) * std::cos(be) + eps * ((L + 1) * std::sin(be) * std::sin(be) + L);
  const double dM11 = 2.0 * std::sin(be) * std::cos(be) * (eps * (L + 1) - a);  // ∂M₁₁/∂β
  const double add = -(dM11 * ad * bd + g * c * std::sin(al) * std::cos(be)) / M11;
  const double bdd = (0.5 * dM11 * ad * ad - g * c * std::cos(al) * std::sin(be)) / a;
  VecX udot(m.nv);
  for (int k = 0; k <= L; ++k) udot.segment<2>(m.v_index[m.joint_index("post" + std::to_string(k) + "_top")]) << add, bdd;
  for (int k = 1; k <= L; ++k)
    udot.segment<2>(m.v_index[m.joint_index("rung" + std::to_string(k) + "_left")]) << -bdd, 0.0;
  return udot;
}

TEST(SpatialLadder, AccelerationsAreThoseOfTheTwoDofPendulum) {
  // Exact closed state, dense solves of at most 14 speeds: the methods agree with the pendulum to
  // about 3e-14 of |u̇| ≈ 5 (measured); 1e-12 relative leaves a margin for other BLAS orders.
  for (int L : {1, 2, 3}) {
    SCOPED_TRACE("L = " + std::to_string(L));
    const Model m = Model::build(spatial_ladder_mechanism(L));
    const SpatialLadderState s = spatial_ladder_state(m, L);
    const VecX expected = pendulum_accelerations(m, L, s);
    for (const char* method : {"lagrange-dense", "nullspace", "embedding"}) {
      const auto f = make_formulation(method, m);
      VecX udot(m.nv);
      f->accelerations(0.0, s.q, s.u, udot);
      EXPECT_TRUE(test::near(udot, expected, 1e-12)) << method;
    }
  }
  // The dense reference on every row (not the kept ones) at every size.
  for (int L : spatial_sizes) {
    const Model m = Model::build(spatial_ladder_mechanism(L));
    const SpatialLadderState s = spatial_ladder_state(m, L);
    EXPECT_TRUE(test::near(test::reference_accelerations(m, s.q, s.u), pendulum_accelerations(m, L, s), 1e-12)) << L;
  }
}

// The dependency of one row per cell holds only on the closed manifold (generators.hpp,
// "Constraint rows"): a redundancy check at open configurations kept 4L + 1 rows and, from L = 5
// on, a set that lost rank on the manifold (DOF 4 at L = 8). structural_reduction decides at closed
// configurations: 4L kept rows of rank 4L at every L, and the formulations see the pendulum.
TEST(SpatialLadder, KeptRowsKeepTwoDofAtLargeL) {
  for (int L : {1, 2, 3, 4, 5, 6, 7, 8, 16, 64}) {
    SCOPED_TRACE("L = " + std::to_string(L));
    const Model m = Model::build(spatial_ladder_mechanism(L));
    const SpatialLadderState s = spatial_ladder_state(m, L);
    const Constraints& cons = m.loops().constraints;
    EXPECT_EQ(cons.rows(), 4 * L);
    EXPECT_EQ(static_cast<int>(cons.dropped().size()), L);
    EXPECT_EQ(constraint_rank(m, cons, s.q).dof, 2);
    VecX udot(m.nv);
    make_formulation("lagrange-dense", m)->accelerations(0.0, s.q, s.u, udot);
    EXPECT_TRUE(test::near(udot, pendulum_accelerations(m, L, s), 1e-12));
  }
}

// From about 500 speeds on, the kept rows are the sparse QR's choice instead of a dense pivoted
// QR's (constraints.cpp, kDenseBudget): L = 128 (514 speeds, 640 rows) checks that path. Rank by
// BDCSVD with constraint_rank's rule (its JacobiSVD takes seconds at this size).
TEST(SpatialLadder, KeptRowsKeepTwoDofOnTheSparsePath) {
  const int L = 128;
  const Model m = Model::build(spatial_ladder_mechanism(L));
  const SpatialLadderState s = spatial_ladder_state(m, L);
  const auto [phi, G, gamma] = test::constraint_values(m, s.q, s.u);
  ASSERT_EQ(G.rows(), 4 * L);
  EXPECT_LE(phi.cwiseAbs().maxCoeff(), 1e-12);
  const VecX sigma = Eigen::BDCSVD<MatX>(G).singularValues();
  const double tolerance =
      static_cast<double>(std::max(G.rows(), G.cols())) * std::numeric_limits<double>::epsilon() * sigma(0);
  EXPECT_EQ((sigma.array() > tolerance).count(), 4 * L);
}

TEST(SpatialLadder, AssemblyFromATiltLandsOnThePendulumFamily) {
  // The kept rows have rank 4L at the tilt too (2 DOF), so assembly keeps both coordinates of
  // post0_top and closes the loops with the others: every post ends at the same (α, β) = (0.4,
  // −0.25), every rung at (−β, 0), which is spatial_ladder_state.
  for (int L : {3, 8}) {
    SCOPED_TRACE("L = " + std::to_string(L));
    const Model m = Model::build(spatial_ladder_mechanism(L));
    VecX q0 = VecX::Zero(m.nq);
    const int p0 = m.joint_index("post0_top");
    q0.segment<2>(m.q_index[p0]) << 0.4, -0.25;
    AssemblySettings settings;
    settings.fixed_speeds.assign(m.nv, false);
    settings.fixed_speeds[m.v_index[p0]] = settings.fixed_speeds[m.v_index[p0] + 1] = true;
    const AssemblyResult a = assemble(m, m.loops().constraints, q0, VecX::Zero(m.nv), settings);
    EXPECT_EQ(a.independent_speeds, (std::vector<int>{m.v_index[p0], m.v_index[p0] + 1}));
    EXPECT_LE((a.q - spatial_ladder_state(m, L).q).cwiseAbs().maxCoeff(), 1e-10);
  }
}

}  // namespace
}  // namespace loopdyn
