// Paper 003's square chain and net (square_nets.hpp): geometry, loops and degrees of freedom
// checked against the drawing (corner positions computed by hand), the singular flat square, and
// motions that conserve energy and hold the loops.
#include <gtest/gtest.h>

#include <cmath>
#include <utility>

#include "loopdyn/formulation.hpp"
#include "loopdyn/loop_structure.hpp"
#include "loopdyn/simulator.hpp"
#include "loopdyn/square_nets.hpp"

using namespace loopdyn;

namespace {

// Corners at q0 are sums of unit vectors: exact in binary but for the sine and cosine of ±π/2
// (6e-17), so 1e-14 leaves room for a few additions.
constexpr double kExact = 1e-14;

// "h2_3": appended (operator+ on a literal draws a false -Wrestrict from GCC 12).
std::string bar(const char* kind, int row, int col) {
  std::string s(kind);
  s.append(std::to_string(row)).append("_").append(std::to_string(col));
  return s;
}

Vec3 end_of(const Model& m, const KinematicsData& kin, const std::string& rod) {
  return point_position(kin, m.body_index(rod), Vec3(1.0, 0.0, 0.0));
}

TEST(SquareChain, BarsCornersLoopsAndDegreesOfFreedom) {
  for (int k : {1, 3, 8}) {
    const Model m = Model::build(square_chain_mechanism(k));
    EXPECT_EQ(m.nbodies, 3 * k + 1);
    EXPECT_EQ(static_cast<int>(m.loop_joints.size()), k);
    // Each planar revolute closure keeps its 2 in-plane rows; the 3 out-of-plane ones are dropped.
    EXPECT_EQ(m.loops().constraints.rows(), 2 * k);
    EXPECT_EQ(constraint_rank(m, m.loops().constraints, m.q0).dof, k + 1);  // one shear per square, one swing
    KinematicsData kin(m);
    update_positions(m, kin, m.q0);
    for (int i = 0; i < k; ++i) {
      const std::string s = std::to_string(i);
      EXPECT_LT((end_of(m, kin, "h0_" + s) - Vec3(i + 1, 0, 0)).norm(), kExact) << k << " h0_" << s;
      EXPECT_LT((end_of(m, kin, "v0_" + s) - Vec3(i, -1, 0)).norm(), kExact) << k << " v0_" << s;
      EXPECT_LT((end_of(m, kin, "h1_" + s) - Vec3(i + 1, -1, 0)).norm(), kExact) << k << " h1_" << s;
    }
    EXPECT_LT((end_of(m, kin, "v0_" + std::to_string(k)) - Vec3(k, -1, 0)).norm(), kExact);
    VecX phi(m.loops().unreduced.rows());
    ConstraintData d(m);
    constraint_position(m, m.loops().unreduced, kin, d, phi);
    EXPECT_LT(phi.cwiseAbs().maxCoeff(), kExact) << k;
  }
  EXPECT_THROW(square_chain_mechanism(0), std::invalid_argument);
}

// The net: every corner where the drawing puts it, turned by the tilt about joint 0, and R + C
// degrees of freedom (a shear per row and per column of squares).
TEST(SquareNet, CornersLoopsAndDegreesOfFreedom) {
  const double tilt = 0.4;
  const Mat3 turn = axis_rotation(Vec3::UnitZ(), tilt);
  for (const auto& [rows, cols] : {std::pair{2, 3}, std::pair{4, 4}}) {
    const Model m = Model::build(square_net_mechanism(rows, cols, tilt));
    EXPECT_EQ(m.nbodies, 2 * rows * cols + rows + cols);
    EXPECT_EQ(static_cast<int>(m.loop_joints.size()), rows * cols);
    EXPECT_EQ(m.loops().constraints.rows(), 2 * rows * cols);
    EXPECT_EQ(constraint_rank(m, m.loops().constraints, m.q0).dof, rows + cols);
    KinematicsData kin(m);
    update_positions(m, kin, m.q0);
    for (int r = 0; r <= rows; ++r)
      for (int j = 0; j < cols; ++j) {
        const std::string h = bar("h", r, j);
        EXPECT_LT((end_of(m, kin, h) - turn * Vec3(j + 1, -r, 0)).norm(), kExact) << h;
      }
    for (int r = 0; r < rows; ++r)
      for (int j = 0; j <= cols; ++j) {
        const std::string v = bar("v", r, j);
        EXPECT_LT((end_of(m, kin, v) - turn * Vec3(j, -r - 1, 0)).norm(), kExact) << v;
      }
  }
  EXPECT_THROW(square_net_mechanism(0, 3, 0.0), std::invalid_argument);
  EXPECT_THROW(square_net_mechanism(2, 3, std::nan("")), std::invalid_argument);
}

// A square folded flat (its posts along its top bar, its bottom bar beyond them) closes with its
// four bars in line: its loop's two rows lose one rank there, the singular configuration 003
// stops its Table 4.1 before.
TEST(SquareChain, AFlatSquareIsSingular) {
  const Model m = Model::build(square_chain_mechanism(1));
  VecX q = m.q0;
  for (const char* joint : {"v0_0_pin", "v0_1_pin", "h1_0_pin"}) q(m.q_index[m.joint_index(joint)]) = 0.0;
  KinematicsData kin(m);
  update_positions(m, kin, q);
  EXPECT_LT((end_of(m, kin, "h1_0") - Vec3(2, 0, 0)).norm(), kExact);  // closed, in line
  EXPECT_LT((end_of(m, kin, "v0_1") - Vec3(2, 0, 0)).norm(), kExact);
  EXPECT_EQ(constraint_rank(m, m.loops().constraints, q).dof, 3);  // regular: 2
}

// Released at rest, the chain falls about joint 0 (h0_0 turns by 1.56 rad in 1 s) and the tilted
// net swings down, their squares shearing. Energy is conserved: no dissipation, and dopri5 at
// 1e-10 leaves a drift over 1 s of 7e-7 J on the chain (embedding) and 5e-6 to 1.1e-5 J on the
// violently swinging net (embedding, nullspace), at most 9e-8 of m g l summed over the bars; the
// bound, 1e-6 of it, leaves a factor 11. The loops stay closed, and two methods of different
// papers end at the same state.
TEST(SquareNet, ReleasedAtRestConservesEnergyAndHoldsTheLoops) {
  SimulationSettings s;
  s.integrator.kind = IntegratorKind::dopri5;
  s.integrator.rtol = s.integrator.atol = 1e-10;
  s.t_end = 1.0;
  s.output_dt = 0.1;
  for (const Mechanism& mech : {square_chain_mechanism(3), square_net_mechanism(2, 2, 0.5)}) {
    const Model m = Model::build(mech);
    std::vector<VecX> ends;
    for (const std::string method : {"embedding", "nullspace"}) {
      auto f = make_formulation(method, m);
      const Trajectory t = Simulator(m, *f, s).run(m.q0, m.u0);
      const int energy = t.column("energy"), position = t.column("residual.position");
      const int swing = 1 + m.q_index[m.joint_index("h0_0_pin")];
      double drift = 0.0, residual = 0.0;
      for (const VecX& row : t.rows) {
        drift = std::max(drift, std::abs(row(energy) - t.rows.front()(energy)));
        residual = std::max(residual, row(position));
      }
      EXPECT_LT(drift, 1e-6 * 9.81 * m.nbodies) << m.name << ", " << method;
      EXPECT_LT(residual, 1e-9) << m.name << ", " << method;
      EXPECT_GT(std::abs(t.rows.back()(swing) - t.rows.front()(swing)), 0.3) << m.name << ", " << method
                                                                            << ": it must have swung down";
      ends.push_back(t.rows.back().segment(1, m.nq + m.nv));
    }
    EXPECT_LT((ends[0] - ends[1]).cwiseAbs().maxCoeff(), 1e-6) << m.name;
  }
}

}  // namespace
