// The loop formulations (lagrange-dense, lagrange-on, gcp, nullspace, embedding) against
// each other, against an independent null-space solve, and on the planar ladder's check value.
#include <algorithm>
#include <cmath>

#include "loopdyn/formulations/formulation.hpp"
#include "loopdyn/formulations/gcp.hpp"
#include "loopdyn/formulations/lagrange.hpp"
#include "loopdyn/formulations/nullspace.hpp"
#include "loopdyn/mechanisms/generators.hpp"
#include "loopdyn/formulations/registry.hpp"
#include "test_support.hpp"

namespace loopdyn {
namespace {

using test::near;

// The formulations and the reference solve the same well-conditioned linear systems (masses
// ~1 kg, lengths ~0.5 m, cond(G M⁻¹ Gᵀ) < 1e6 here) by different factorizations: 1e-9 relative on
// accelerations and 1e-8 on multipliers (the bounds) leave several digits of margin.
constexpr double acc_tol = 1e-9, lambda_tol = 1e-8;

const std::vector<std::string> methods{"lagrange-dense", "lagrange-on", "gcp", "nullspace", "embedding"};

// One formulation's u̇ (and λ) at (q, u).
struct Solved {
  std::unique_ptr<Formulation> f;
  VecX udot;
  Solved(const std::string& method, const Model& m, const VecX& q, const VecX& u)
      : f(make_formulation(method, m)), udot(m.nv) {
    f->accelerations(0.0, q, u, udot);
  }
};

TEST(LoopMethods, EveryMethodAgreesWithTheNullSpaceReferenceOnRandomSpatialLoops) {
  for (std::uint64_t seed = 1; seed <= 16; ++seed) {
    const test::ClosedCase c = test::closed_loops(seed, 10, 2 + static_cast<int>(seed % 3), static_cast<int>(seed));
    const Model m = Model::build(c.mechanism);
    const VecX ref = test::reference_accelerations(m, c.q, c.u);
    const Solved dense("lagrange-dense", m, c.q, c.u);
    for (const std::string& method : methods) {
      const Solved s(method, m, c.q, c.u);
      EXPECT_TRUE(near(s.udot, ref, acc_tol)) << method << ", seed " << seed;
      EXPECT_TRUE(near(s.f->multipliers(), dense.f->multipliers(), lambda_tol)) << method << ", seed " << seed;
    }
  }
}

TEST(LoopMethods, AccelerationsSatisfyTheConstraintAndMultipliersBalanceTheEquations) {
  const test::ClosedCase c = test::closed_loops(5, 8, 3, 2);
  const Model m = Model::build(c.mechanism);
  const auto [phi, G, gamma] = test::constraint_values(m, c.q, c.u);
  for (const std::string& method : methods) {
    const Solved s(method, m, c.q, c.u);
    // G u̇ = γ at the closed state (α = β = 0).
    EXPECT_TRUE(near(G * s.udot, gamma, acc_tol)) << method;
    // RNEA(q, u, u̇) = τ − Gᵀλ with τ = 0: the multipliers are the loop forces.
    RneaData rd(m);
    VecX tau(m.nv);
    rnea(m, rd, c.q, c.u, s.udot, nullptr, tau);
    EXPECT_TRUE(near(tau, -G.transpose() * s.f->multipliers(), acc_tol)) << method;
  }
}

// shared/design/benchmarks.md: for L = 1 the angular acceleration of left post 0 is exactly
// 6 g sin φ0 / 5, whatever φ̇; for every L it must not depend on the tree layout.
TEST(LoopMethods, PlanarLadderCheckValueForEveryLayoutAndMethod) {
  const double g = 9.81, expected_L1 = 6.0 * g * std::sin(0.3) / 5.0;
  for (int L : {1, 2, 4, 8, 16, 32}) {
    double first = std::nan("");
    for (LadderLayout layout : {LadderLayout::serial, LadderLayout::comb, LadderLayout::comb_parents_first}) {
      const Model m = Model::build(ladder_mechanism(L, layout));
      const LadderState st = ladder_state(m, L);
      const int v = m.v_index[m.joint_index("lp0_bottom")];
      for (const std::string& method : methods) {
        const double check = Solved(method, m, st.q, st.u).udot(v);
        if (std::isnan(first)) first = check;
        EXPECT_NEAR(check, first, acc_tol * std::abs(first)) << method << ", L " << L;
        if (L == 1) {
          EXPECT_NEAR(check, expected_L1, 1e-9 * expected_L1) << method;
        }
      }
    }
  }
}

TEST(LoopMethods, LagrangeSingularConfigurationIsReportedWithTheLoopAndTime) {
  // The parallelogram with every link collinear: G loses rank (2 kept rows, rank 1).
  const Model m = Model::build(test::parallelogram_four_bar(true, 0.0));
  const VecX u = (VecX(3) << 1.0, -1.0, 1.0).finished();  // parallelogram motion
  for (const char* method : {"lagrange-dense", "lagrange-on"}) {
    // By default the method stops there (FormulationSettings::on_singular), naming itself, the
    // time, the loop and the rank, and what to use instead.
    try {
      VecX udot(m.nv);
      make_formulation(method, m)->accelerations(1.25, m.q0, u, udot);
      ADD_FAILURE() << method << " went on at a singular configuration";
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      for (const std::string& part : {std::string("t = 1.25"), std::string(method) + ": singular configuration", std::string("'C'"),
                                        std::string("rank 1 of 2"), std::string("`method = gcp`")})
        EXPECT_NE(what.find(part), std::string::npos) << part << " not in: " << what;
    }
    // on_singular = proceed: reported, minimum-norm multipliers.
    FormulationSettings proceed;
    proceed.on_singular = FormulationSettings::OnSingular::proceed;
    auto f = make_formulation(method, m, proceed);
    std::vector<FormulationEvent> events;
    f->set_event_sink([&](const FormulationEvent& e) { events.push_back(e); });
    VecX udot(m.nv);
    f->accelerations(1.25, m.q0, u, udot);
    EXPECT_TRUE(udot.allFinite()) << method;
    ASSERT_EQ(events.size(), 1u) << method;
    EXPECT_EQ(events[0].t, 1.25);
    EXPECT_NE(events[0].message.find("singular configuration"), std::string::npos) << events[0].message;
    EXPECT_NE(events[0].message.find("'C'"), std::string::npos) << events[0].message;
    EXPECT_EQ(static_cast<const LagrangeFormulation&>(*f).rank(), 1) << method;
    // Minimum-norm multipliers still give accelerations that satisfy the constraint: G u̇ = γ.
    const auto [phi, G, gamma] = test::constraint_values(m, m.q0, u);
    EXPECT_TRUE(near(G * udot, gamma, 1e-9)) << method;
    // Staying singular reports nothing new; moving to a regular closed state (θ = 0.7) reports
    // leaving the singular configuration.
    f->accelerations(1.3, m.q0, u, udot);
    EXPECT_EQ(events.size(), 1u);
    f->accelerations(1.5, (VecX(3) << 0.7, -0.7, 0.7).finished(), u, udot);
    ASSERT_EQ(events.size(), 2u) << method;
    EXPECT_NE(events[1].message.find("left the singular configuration"), std::string::npos) << events[1].message;
    EXPECT_EQ(static_cast<const LagrangeFormulation&>(*f).rank(), 2) << method;
  }
}

// Paper 001 eq 18: the partial velocity matrix spans the null space of G, with B_I = identity.
TEST(LoopMethods, PartialVelocityMatrixSpansTheNullSpaceOfG) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const test::ClosedCase c = test::closed_loops(seed, 9, 2, static_cast<int>(seed));
    const Model m = Model::build(c.mechanism);
    Nullspace f(m, {});
    VecX udot(m.nv);
    f.accelerations(0.0, c.q, c.u, udot);
    const CoordinatePartition& p = f.partition();
    CoordinatePartition copy = p;
    MatX B;
    copy.partial_velocity_matrix(B);
    const auto [phi, G, gamma] = test::constraint_values(m, c.q, c.u);
    ASSERT_EQ(B.cols(), m.nv - p.rank());
    EXPECT_LT((G * B).cwiseAbs().maxCoeff(), 1e-10) << "seed " << seed;
    for (std::size_t k = 0; k < p.independent().size(); ++k)
      EXPECT_TRUE(near(VecX(B.row(p.independent()[k])), VecX(VecX::Unit(B.cols(), k)), 1e-15));
    // rank(G) + dim ker(G) = nv: r is the rank of G.
    EXPECT_EQ(p.rank(), constraint_rank(m, f.constraints(), c.q).rank) << "seed " << seed;
  }
}

// Eqs 12-14: a perturbed state is moved back onto Φ = 0, G u = 0, changing only dependent
// coordinates and speeds; the Newton tolerance is FormulationSettings::position_tolerance.
TEST(LoopMethods, CompleteStateClosesAPerturbedStateMovingOnlyDependentCoordinates) {
  for (const std::string method : {"gcp", "nullspace"}) {
    for (std::uint64_t seed = 1; seed <= 6; ++seed) {
      const test::ClosedCase closed = test::closed_loops(seed, 7, 2, static_cast<int>(seed));
      const Model m = Model::build(closed.mechanism);
      std::mt19937_64 rng(seed);
      VecX q = closed.q + test::random_vector(m.nq, rng, 1e-3);
      m.normalize(q);
      VecX u = closed.u + test::random_vector(m.nv, rng, 0.1);
      const VecX q_given = q, u_given = u;
      auto f = make_formulation(method, m);
      f->complete_state(0.0, q, u);
      const auto [phi, G, gamma] = test::constraint_values(m, q, u);
      EXPECT_LE(phi.cwiseAbs().maxCoeff(), FormulationSettings{}.position_tolerance) << method << " seed " << seed;
      // Velocity analysis is one linear solve: round-off only.
      EXPECT_LT((G * u).cwiseAbs().maxCoeff(), 1e-12 * (1.0 + u.cwiseAbs().maxCoeff())) << method;
      const auto& p = method == "nullspace" ? static_cast<const Nullspace&>(*f).partition()
                                            : static_cast<const Gcp&>(*f).partition();
      for (int k : p.independent()) EXPECT_EQ(u(k), u_given(k)) << method << " seed " << seed;
      // Coordinates of joints with q̇ = u whose speeds are all independent are untouched.
      for (int i = 0; i < m.nbodies; ++i) {
        bool independent = m.nq_joint[i] == m.nv_joint[i];
        for (int k = 0; k < m.nv_joint[i]; ++k)
          independent = independent && std::find(p.independent().begin(), p.independent().end(),
                                                 m.v_index[i] + k) != p.independent().end();
        if (independent) {
          EXPECT_TRUE(q.segment(m.q_index[i], m.nq_joint[i]) == q_given.segment(m.q_index[i], m.nq_joint[i]))
              << method << " seed " << seed << " joint " << m.joints[i].name;
        }
      }
    }
  }
}

// multipliers() is the last accelerations() call's, whatever was completed since: embedding and
// rcr recover it on demand from that call's sweeps, which complete_state() overwrites at another
// state (multipliers_on_demand.hpp). Against a fresh formulation of the same method at each state:
// the same arithmetic on the same inputs, so 1e-12 relative is round-off; a λ recovered from the
// other state's sweeps is off by the change of the loop forces (O(1) here).
TEST(LoopMethods, MultipliersAreTheLastCallsWhateverWasCompletedSince) {
  const test::LoopState a = test::assembled_state("fourbar_anderson", 1);
  // B: another closed state, its coordinates moved by 0.1 and closed again by gcp's analysis.
  VecX qb = a.q + VecX::Constant(a.model.nq, 0.1), ub = test::assembled_state("fourbar_anderson", 2).u;
  make_formulation("gcp", a.model)->complete_state(0.0, qb, ub);
  std::vector<std::string> with_rcr = methods;
  with_rcr.push_back("rcr");
  for (const std::string& method : with_rcr) {
    const Solved fresh_a(method, a.model, a.q, a.u), fresh_b(method, a.model, qb, ub);
    ASSERT_FALSE(near(fresh_a.f->multipliers(), fresh_b.f->multipliers(), 1e-3)) << method;
    auto f = make_formulation(method, a.model);
    VecX udot(a.model.nv), q = qb, u = ub;
    f->accelerations(0.0, a.q, a.u, udot);
    f->complete_state(0.0, q, u);
    EXPECT_TRUE(near(f->multipliers(), fresh_a.f->multipliers(), 1e-12)) << method;
    f->accelerations(0.0, q, u, udot);
    EXPECT_TRUE(near(f->multipliers(), fresh_b.f->multipliers(), 1e-12)) << method;
    // Asked twice, or after the state was completed again: the same.
    f->complete_accepted_state(0.0, q, u);
    EXPECT_TRUE(near(f->multipliers(), fresh_b.f->multipliers(), 1e-12)) << method;
  }
}

// Formulation::completed_kinematics, which the Simulator's rows and accepted-step checks read in
// place of a sweep: right after a completion (of a stage state, or of an accepted one) the
// positions and velocities of every body are those of the state it wrote, swept afresh here, to
// the bit (the same sweeps of the same state), whatever the method computed at other states
// before; those that keep none say nullptr (the partitioned methods and rcr keep them).
TEST(LoopMethods, CompletedKinematicsAreThoseOfTheStateWritten) {
  const test::LoopState a = test::assembled_state("fivebar_anderson", 1);
  const Model& m = a.model;
  // B: another closed state, its coordinates moved by 0.1 and closed again by gcp's analysis.
  VecX qb0 = a.q + VecX::Constant(m.nq, 0.1), ub0 = test::assembled_state("fivebar_anderson", 2).u;
  make_formulation("gcp", m)->complete_state(0.0, qb0, ub0);
  KinematicsData fresh(m);
  std::vector<std::string> with_rcr = methods;
  with_rcr.push_back("rcr");
  for (const std::string& method : with_rcr) {
    auto f = make_formulation(method, m);
    const bool keeps = method == "embedding" || method == "gcp" || method == "nullspace" || method == "rcr";
    VecX udot(m.nv), q = a.q, u = a.u, qb = qb0, ub = ub0;
    f->complete_state(0.0, q, u);
    for (int pass = 0; pass < 6; ++pass) {
      // An evaluation at the other state between completions, and the same state completed at
      // every other pass (what stands may be reused, not what another call swept); in the last
      // two passes the other state has the same positions and the opposite speeds.
      if (pass >= 4) qb = q, ub = -u;
      f->accelerations(0.0, qb, ub, udot);
      if (pass % 2) f->complete_accepted_state(0.0, q, u);
      else f->complete_state(0.0, q, u);
      const KinematicsData* kin = f->completed_kinematics();
      if (!kin) {
        EXPECT_FALSE(keeps) << method << " keeps none";
        if (pass < 4) std::swap(q, qb), std::swap(u, ub);
        continue;
      }
      update_positions(m, fresh, q);
      update_velocities(m, fresh, q, u);
      EXPECT_EQ(kin->q, q) << method;
      for (int i = 0; i < m.nbodies; ++i) {
        EXPECT_EQ(kin->X_world[i].R, fresh.X_world[i].R) << method << " body " << i;
        EXPECT_EQ(kin->X_world[i].p, fresh.X_world[i].p) << method << " body " << i;
        EXPECT_EQ(kin->v[i], fresh.v[i]) << method << " body " << i << " pass " << pass;
        EXPECT_EQ(kin->c[i], fresh.c[i]) << method << " body " << i << " pass " << pass;
      }
      if (pass < 4) std::swap(q, qb), std::swap(u, ub);
    }
  }
}

// A loop that cannot close (the four-bar's ground link longer than the three others together):
// the position analysis stops with the time, the loop and its residual.
// A call refused at a state the loops cannot close (q = 0 on this four-bar, where they also lose
// rank) left nullspace and embedding with a partition of the lower rank and rcr with the
// kinematics of q = 0 marked as those of q0: every later call at the start state returned
// accelerations that broke the loops (G u̇ − γ = [−7.4, 0.7]), without a word. Each call must
// depend on (t, q, u) alone: after the refusal, the first call's accelerations, which satisfy
// G u̇ = γ (the constraints' own evaluation; the file's spring and force are in u̇, so the
// gravity-only null-space reference does not apply).
TEST(LoopMethods, ARefusedCallLeavesNoTraceOnTheNextOne) {
  const test::LoopState c = test::file_state("fourbar_park_regular");
  const auto [phi, G, gamma] = test::constraint_values(c.model, c.q, c.u);
  for (const std::string method : {"lagrange-dense", "lagrange-on", "gcp", "nullspace", "embedding", "rcr"}) {
    const std::unique_ptr<Formulation> f = make_formulation(method, c.model);
    VecX first(c.model.nv), udot(c.model.nv);
    f->accelerations(0.0, c.q, c.u, first);
    EXPECT_TRUE(near(G * first, gamma, acc_tol)) << method;
    EXPECT_ANY_THROW(f->accelerations(0.0, VecX::Zero(c.model.nq), c.u, udot)) << method;
    for (int again = 0; again < 2; ++again) {
      f->accelerations(0.0, c.q, c.u, udot);
      EXPECT_TRUE(near(udot, first, acc_tol)) << method << ", call " << again << " after the refused one";
      EXPECT_TRUE(near(G * udot, gamma, acc_tol)) << method << ", call " << again << " after the refused one";
    }
  }
}

TEST(LoopMethods, PositionAnalysisFailureNamesTheLoopAndTheTime) {
  Mechanism mech = test::parallelogram_four_bar(true, 0.5);
  for (JointSpec& j : mech.joints)
    if (j.name == "D") j.parent_frame = Transform::translation(Vec3(3.5, 0, 0));
  const Model m = Model::build(mech);
  for (const std::string method : {"gcp", "nullspace"}) {
    auto f = make_formulation(method, m);
    VecX q = m.q0, u = VecX::Zero(m.nv);
    try {
      f->complete_state(0.25, q, u);
      ADD_FAILURE() << method << ": no error";
    } catch (const std::runtime_error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("position analysis did not converge at t = 0.25"), std::string::npos) << msg;
      EXPECT_NE(msg.find("loop joint 'C'"), std::string::npos) << msg;
    }
  }
}

// Without constraints the partition is empty (every speed independent) and gcp and nullspace
// reduce to the tree's dynamics: the same accelerations as the ABA, state left as given.
TEST(LoopMethods, PartitionedMethodsReduceToTheTreeWithoutLoops) {
  const Model m = Model::build(test::random_tree(4, 6, 3));
  std::mt19937_64 rng(4);
  VecX q = test::random_q(m, rng), u = test::random_vector(m.nv, rng);
  const VecX tree = Solved("tree", m, q, u).udot;
  for (const std::string method : {"gcp", "nullspace"}) {
    VecX qc = q, uc = u;
    auto f = make_formulation(method, m);
    f->complete_state(0.0, qc, uc);
    EXPECT_EQ(qc, q);
    EXPECT_EQ(uc, u);
    EXPECT_TRUE(near(Solved(method, m, q, u).udot, tree, acc_tol)) << method;
    EXPECT_EQ(f->multipliers().size(), 0) << method;
  }
}

}  // namespace
}  // namespace loopdyn
