// Paper 003's square chain (square_nets.hpp): its geometry, loops and degrees of freedom checked
// against the drawing (corner positions computed by hand), the singular flat square, and a free
// fall that conserves energy and holds the loops.
#include <gtest/gtest.h>

#include "loopdyn/formulation.hpp"
#include "loopdyn/loop_structure.hpp"
#include "loopdyn/simulator.hpp"
#include "loopdyn/square_nets.hpp"

using namespace loopdyn;

namespace {

// Corners at q0 are sums of unit vectors: exact in binary but for the sine and cosine of ±π/2
// (6e-17), so 1e-14 leaves room for a few additions.
constexpr double kExact = 1e-14;

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
      EXPECT_LT((end_of(m, kin, "top" + s) - Vec3(i + 1, 0, 0)).norm(), kExact) << k << " top" << s;
      EXPECT_LT((end_of(m, kin, "post" + s) - Vec3(i, -1, 0)).norm(), kExact) << k << " post" << s;
      EXPECT_LT((end_of(m, kin, "bottom" + s) - Vec3(i + 1, -1, 0)).norm(), kExact) << k << " bottom" << s;
    }
    EXPECT_LT((end_of(m, kin, "post" + std::to_string(k)) - Vec3(k, -1, 0)).norm(), kExact);
    VecX phi(m.loops().unreduced.rows());
    ConstraintData d(m);
    constraint_position(m, m.loops().unreduced, kin, d, phi);
    EXPECT_LT(phi.cwiseAbs().maxCoeff(), kExact) << k;
  }
  EXPECT_THROW(square_chain_mechanism(0), std::invalid_argument);
}

// A square folded flat (its posts along its top bar, its bottom bar beyond them) closes with its
// four bars in line: its loop's two rows lose one rank there, the singular configuration 003
// stops its Table 4.1 before.
TEST(SquareChain, AFlatSquareIsSingular) {
  const Model m = Model::build(square_chain_mechanism(1));
  VecX q = m.q0;
  for (const char* joint : {"post0_top", "post1_top", "bottom0_pin"}) q(m.q_index[m.joint_index(joint)]) = 0.0;
  KinematicsData kin(m);
  update_positions(m, kin, q);
  EXPECT_LT((end_of(m, kin, "bottom0") - Vec3(2, 0, 0)).norm(), kExact);  // closed, in line
  EXPECT_LT((end_of(m, kin, "post1") - Vec3(2, 0, 0)).norm(), kExact);
  EXPECT_EQ(constraint_rank(m, m.loops().constraints, q).dof, 3);  // regular: 2
}

// Released at rest, the chain falls about joint 0 (top0 turns by 1.56 rad in 1 s) with its squares
// shearing. Energy is conserved: no dissipation, and dopri5 at 1e-10 leaves a drift of 7e-7 J
// (embedding), 7e-9 of m g l summed over the bars; the bound, 1e-7 of it, leaves a factor 15. The
// loops stay closed, and two methods of different papers end at the same state.
TEST(SquareChain, FreeFallConservesEnergyAndHoldsTheLoops) {
  const Model m = Model::build(square_chain_mechanism(3));
  SimulationSettings s;
  s.integrator.kind = IntegratorKind::dopri5;
  s.integrator.rtol = s.integrator.atol = 1e-10;
  s.t_end = 1.0;
  s.output_dt = 0.1;
  std::vector<VecX> ends;
  for (const std::string method : {"embedding", "nullspace"}) {
    auto f = make_formulation(method, m);
    const Trajectory t = Simulator(m, *f, s).run(m.q0, m.u0);
    const int energy = t.column("energy"), position = t.column("residual.position");
    double drift = 0.0, residual = 0.0, fell = 0.0;
    for (const VecX& row : t.rows) {
      drift = std::max(drift, std::abs(row(energy) - t.rows.front()(energy)));
      residual = std::max(residual, row(position));
    }
    fell = std::abs(t.rows.back()(1 + m.q_index[m.joint_index("top0_pin")]));
    EXPECT_LT(drift, 1e-7 * 9.81 * m.nbodies) << method;
    EXPECT_LT(residual, 1e-9) << method;
    EXPECT_GT(fell, 0.3) << method << ": the chain must have swung down";
    ends.push_back(t.rows.back().segment(1, m.nq + m.nv));
  }
  EXPECT_LT((ends[0] - ends[1]).cwiseAbs().maxCoeff(), 1e-6);
}

}  // namespace
