// lagrange-dense and lagrange-on against each other, against an independent null-space solve, and
// on the planar ladder's check value.
#include <cmath>

#include "loopdyn/formulation.hpp"
#include "loopdyn/formulations/loop_formulation.hpp"
#include "loopdyn/generators.hpp"
#include "test_support.hpp"

namespace loopdyn {
namespace {

using test::near;

// The two formulations and the reference solve the same well-conditioned linear systems (masses
// ~1 kg, lengths ~0.5 m, cond(G M⁻¹ Gᵀ) < 1e6 here) by different factorizations: 1e-9 relative on
// accelerations and 1e-8 on multipliers (the bounds) leave several digits of margin.
constexpr double acc_tol = 1e-9, lambda_tol = 1e-8;

struct Both {
  std::unique_ptr<Formulation> dense, on;
  VecX udot_dense, udot_on;
  Both(const Model& m, const VecX& q, const VecX& u) {
    dense = make_formulation("lagrange-dense", m);
    on = make_formulation("lagrange-on", m);
    udot_dense.resize(m.nv);
    udot_on.resize(m.nv);
    dense->accelerations(0.0, q, u, udot_dense);
    on->accelerations(0.0, q, u, udot_on);
  }
};

TEST(Lagrange, DenseAndOnAgreeWithTheNullSpaceReferenceOnRandomSpatialLoops) {
  for (std::uint64_t seed = 1; seed <= 16; ++seed) {
    const test::ClosedCase c = test::closed_loops(seed, 10, 2 + static_cast<int>(seed % 3), static_cast<int>(seed));
    const Model m = Model::build(c.mechanism);
    const Both b(m, c.q, c.u);
    const VecX ref = test::reference_accelerations(m, c.q, c.u);
    EXPECT_TRUE(near(b.udot_dense, ref, acc_tol)) << "seed " << seed;
    EXPECT_TRUE(near(b.udot_on, ref, acc_tol)) << "seed " << seed;
    EXPECT_TRUE(near(b.dense->multipliers(), b.on->multipliers(), lambda_tol)) << "seed " << seed;
  }
}

// G and γ of the kept rows at (q, u).
std::pair<MatX, VecX> jacobian_and_bias(const Model& m, const VecX& q, const VecX& u) {
  KinematicsData kin(m);
  update_positions(m, kin, q);
  update_velocities(m, kin, q, u);
  const Constraints cons(m);
  ConstraintData cd(m, cons);
  MatX G(cons.rows(), m.nv);
  VecX gamma(cons.rows());
  constraint_jacobian(m, cons, kin, cd, G);
  constraint_bias(m, cons, kin, cd, gamma);
  return {G, gamma};
}

TEST(Lagrange, AccelerationsSatisfyTheConstraintAndMultipliersBalanceTheEquations) {
  const test::ClosedCase c = test::closed_loops(5, 8, 3, 2);
  const Model m = Model::build(c.mechanism);
  const Both b(m, c.q, c.u);
  // G u̇ = γ at the closed state (α = β = 0).
  const auto [G, gamma] = jacobian_and_bias(m, c.q, c.u);
  EXPECT_TRUE(near(G * b.udot_dense, gamma, acc_tol));
  // RNEA(q, u, u̇) = τ − Gᵀλ with τ = 0: the multipliers are the loop forces.
  RneaData rd(m);
  VecX tau(m.nv);
  rnea(m, rd, c.q, c.u, b.udot_dense, nullptr, tau);
  EXPECT_TRUE(near(tau, -G.transpose() * b.dense->multipliers(), acc_tol));
}

// shared/design/benchmarks.md: for L = 1 the angular acceleration of left post 0 is exactly
// 6 g sin φ0 / 5, whatever φ̇; for every L it must not depend on the tree layout.
TEST(Lagrange, PlanarLadderCheckValueForEveryLayout) {
  const double g = 9.81, expected_L1 = 6.0 * g * std::sin(0.3) / 5.0;
  for (int L : {1, 2, 4, 8, 16, 32}) {
    double first = std::nan("");
    for (LadderLayout layout : {LadderLayout::serial, LadderLayout::comb, LadderLayout::comb_parents_first}) {
      const Model m = Model::build(ladder_mechanism(L, layout));
      const LadderState s = ladder_state(m, L);
      const Both b(m, s.q, s.u);
      const int v = m.v_index[m.joint_index("lp0_bottom")];
      EXPECT_NEAR(b.udot_dense(v), b.udot_on(v), acc_tol * std::abs(b.udot_dense(v))) << "L " << L;
      if (std::isnan(first)) first = b.udot_dense(v);
      EXPECT_NEAR(b.udot_dense(v), first, acc_tol * std::abs(first)) << "L " << L;
      if (L == 1) {
        EXPECT_NEAR(b.udot_dense(v), expected_L1, 1e-9 * expected_L1);
      }
    }
  }
}

TEST(Lagrange, SingularConfigurationIsReportedWithTheLoopAndTime) {
  // The parallelogram with every link collinear: G loses rank (2 kept rows, rank 1).
  const Model m = Model::build(test::parallelogram_four_bar(true, 0.0));
  const VecX u = (VecX(3) << 1.0, -1.0, 1.0).finished();  // parallelogram motion
  for (const char* method : {"lagrange-dense", "lagrange-on"}) {
    auto f = make_formulation(method, m);
    std::vector<FormulationEvent> events;
    f->set_event_sink([&](const FormulationEvent& e) { events.push_back(e); });
    VecX udot(m.nv);
    f->accelerations(1.25, m.q0, u, udot);
    EXPECT_TRUE(udot.allFinite()) << method;
    ASSERT_EQ(events.size(), 1u) << method;
    EXPECT_EQ(events[0].t, 1.25);
    EXPECT_NE(events[0].message.find("singular configuration"), std::string::npos) << events[0].message;
    EXPECT_NE(events[0].message.find("'C'"), std::string::npos) << events[0].message;
    EXPECT_EQ(static_cast<const LoopFormulation&>(*f).rank(), 1) << method;
    // Minimum-norm multipliers still give accelerations that satisfy the constraint: G u̇ = γ.
    const auto [G, gamma] = jacobian_and_bias(m, m.q0, u);
    EXPECT_TRUE(near(G * udot, gamma, 1e-9)) << method;
    // Staying singular reports nothing new; moving to a regular closed state (θ = 0.7) reports
    // leaving the singular configuration.
    f->accelerations(1.3, m.q0, u, udot);
    EXPECT_EQ(events.size(), 1u);
    f->accelerations(1.5, (VecX(3) << 0.7, -0.7, 0.7).finished(), u, udot);
    ASSERT_EQ(events.size(), 2u) << method;
    EXPECT_NE(events[1].message.find("left the singular configuration"), std::string::npos) << events[1].message;
    EXPECT_EQ(static_cast<const LoopFormulation&>(*f).rank(), 2) << method;
  }
}

}  // namespace
}  // namespace loopdyn
