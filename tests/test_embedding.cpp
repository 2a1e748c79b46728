// Constraint embedding (paper 002) against lagrange-dense on every model of issue 7: accelerations
// and multipliers at random closed states, trajectories, terminal against internal cut, and the
// aggregated tree it runs on.
#include <algorithm>
#include <cmath>

#include "loopdyn/formulations/formulation.hpp"
#include "loopdyn/formulations/embedding.hpp"
#include "loopdyn/mechanisms/generators.hpp"
#include "loopdyn/io/model_file.hpp"
#include "loopdyn/core/linalg.hpp"
#include "loopdyn/loops/loop_structure.hpp"
#include "loopdyn/run/simulator.hpp"
#include "loopdyn/mechanisms/square_nets.hpp"
#include "loopdyn/formulations/registry.hpp"
#include "loopdyn/run/method_choice.hpp"
#include "long_double_kkt.hpp"
#include "test_support.hpp"

namespace loopdyn {
namespace {

using test::near;

// Both methods solve well-conditioned systems (masses 0.1-4 kg, lengths 0.03-1 m) by different
// eliminations; 1e-9 relative on accelerations and 1e-8 on multipliers (issue 7's bounds) leave
// digits of margin over the observed ~1e-12.
constexpr double acc_tol = 1e-9, lambda_tol = 1e-8;

std::vector<test::LoopState> every_state() {
  std::vector<test::LoopState> out;
  for (const char* file : {"fourbar_jain_terminal", "fourbar_jain_internal", "geared_chain", "double_wishbone",
                           "fourbar_spatial_park", "fourbar_anderson", "fivebar_malczyk", "doubleloop_malczyk"})
    for (std::uint64_t seed : {1, 2}) out.push_back(test::assembled_state(file, seed));
  for (std::uint64_t seed = 1; seed <= 6; ++seed) out.push_back(test::random_loop_state(seed, 2));
  for (LadderLayout layout : {LadderLayout::serial, LadderLayout::comb, LadderLayout::comb_parents_first}) {
    Model m = Model::build(ladder_mechanism(5, layout));
    const LadderState s = ladder_state(m, 5);
    out.push_back({"ladder-5", std::move(m), s.q, s.u});
  }
  return out;
}

TEST(Embedding, AccelerationsAndMultipliersEqualLagrangeDenseAtClosedStates) {
  for (const test::LoopState& c : every_state()) {
    auto dense = make_formulation("lagrange-dense", c.model);
    auto embedding = make_formulation("embedding", c.model);
    VecX a_dense(c.model.nv), a_emb(c.model.nv);
    dense->accelerations(0.0, c.q, c.u, a_dense);
    embedding->accelerations(0.0, c.q, c.u, a_emb);
    EXPECT_TRUE(near(a_emb, a_dense, acc_tol)) << c.name;
    // Multipliers are unique where the kept rows are independent at q (every case here).
    EXPECT_EQ(constraint_rank(c.model, c.model.loops().constraints, c.q).rank, c.model.loops().constraints.rows()) << c.name;
    EXPECT_TRUE(near(embedding->multipliers(), dense->multipliers(), lambda_tol)) << c.name;
  }
}

TEST(Embedding, EveryLoopAndGearLandsInOneAggregatedBodyOfTheExpectedSize) {
  struct Expected {
    const char* file;
    int aggregated, largest_nv;
  };
  for (const Expected e : {Expected{"fourbar_jain_terminal", 1, 3}, Expected{"fourbar_jain_internal", 1, 3},
                           Expected{"geared_chain", 3, 2}, Expected{"double_wishbone", 1, 7}}) {
    const Model m = test::load_model(e.file);
    const Embedding f(m, {});
    int aggregated = 0;
    for (const AggregatedBody& n : f.aggregation().nodes) aggregated += n.aggregated();
    EXPECT_EQ(aggregated, e.aggregated) << e.file;
    EXPECT_EQ(f.aggregation().largest_nv(), e.largest_nv) << e.file;
  }
}

// The rule of `--method auto` (formulation.hpp): embedding while every aggregated body is small.
TEST(Embedding, DefaultMethodFollowsTheSizeOfTheLargestAggregatedBody) {
  EXPECT_EQ(default_method(test::load_model("double_pendulum")).method, "tree");
  for (const char* file : {"fourbar_jain_terminal", "geared_chain", "double_wishbone", "doubleloop_malczyk"})
    EXPECT_EQ(default_method(test::load_model(file)).method, "embedding") << file;
  // A 13-link chain closed to ground by a spherical joint at its tip: one aggregated body of 13
  // speeds, beyond kSmallAggregatedBody = 12, and one loop, which rcr takes in linear time.
  Mechanism chain = chain_mechanism(13);
  chain.add_joint("tip", JointType::spherical, "link12", "ground", Transform::translation(Vec3(0.0, 0.0, 1.0)),
                  Transform::translation(Vec3(0.0, 0.0, 13.0)))
      .cut = true;
  const MethodChoice choice = default_method(Model::build(chain));
  EXPECT_EQ(choice.method, "rcr");
  EXPECT_NE(choice.reason.find("13 joint speeds"), std::string::npos) << choice.reason;
  // A second loop from the tip back to link1 couples the two loops through bodies without a
  // common base (ground and link1): outside rcr's scope, so the dense method.
  chain.add_joint("back", JointType::spherical, "link12", "link1", Transform::translation(Vec3(0.0, 0.0, 0.5)),
                  Transform::translation(Vec3(0.0, 0.0, 11.5)))
      .cut = true;
  EXPECT_EQ(default_method(Model::build(chain)).method, "lagrange-dense");
  // The spatial ladder of 000 §4.3: one aggregated body of 4L + 2 speeds, every loop on ground.
  const Model ladder = Model::build(spatial_ladder_mechanism(4));
  EXPECT_EQ(default_method(ladder, spatial_ladder_state(ladder, 4).q).method, "rcr");
}

// benchmarks.md: the check value for every L, both layouts and the non-depth-first order equals
// lagrange-dense's, and 6 g sin(0.3) / 5 at L = 1 (issue 7, up to the benchmark's L = 128).
TEST(Embedding, PlanarLadderCheckValueUpToL128) {
  const double exact_L1 = 6.0 * 9.81 * std::sin(0.3) / 5.0;
  for (int L = 1; L <= 128; L *= 2) {
    for (LadderLayout layout : {LadderLayout::serial, LadderLayout::comb, LadderLayout::comb_parents_first}) {
      const Model m = Model::build(ladder_mechanism(L, layout));
      const LadderState s = ladder_state(m, L);
      const int v = m.v_index[m.joint_index("lp0_bottom")];
      VecX a_dense(m.nv), a_emb(m.nv);
      make_formulation("lagrange-dense", m)->accelerations(0.0, s.q, s.u, a_dense);
      make_formulation("embedding", m)->accelerations(0.0, s.q, s.u, a_emb);
      EXPECT_NEAR(a_emb(v), a_dense(v), 1e-9 * std::abs(a_dense(v))) << "L " << L;
      if (L == 1) {
        EXPECT_NEAR(a_emb(v), exact_L1, 1e-9 * exact_L1);
      }
    }
  }
}

// A net of loops hanging from its first bar is one aggregated body whose projected inertia
// C − U D⁻¹ Uᵀ (002 eq 50) cancels most of C. Computed through the explicit D⁻¹ of eq 60's basis,
// the accelerations were 2.8e-8 relative off at R = 16 (1.3e-6 at R = 32), while lagrange-dense,
// gcp, srm and dca agree to 2e-12 there; as C − W Wᵀ in an orthonormal basis they are 5e-12 off.
// 1e-10 leaves a factor 20 over that and fails the former by a factor 280.
TEST(Embedding, NetOfLoopsKeepsItsDigits) {
  const Model m = Model::build(square_net_mechanism(16, 16, 0.5));
  VecX a_dense(m.nv), a_emb(m.nv);
  make_formulation("lagrange-dense", m)->accelerations(0.0, m.q0, m.u0, a_dense);
  make_formulation("embedding", m)->accelerations(0.0, m.q0, m.u0, a_emb);
  EXPECT_TRUE(near(a_emb, a_dense, 1e-10));
}

// Paper 003's square chain of 256 bars: bars 2..256 are one aggregated body of 85 independent
// speeds hanging from bar 1. In motion its D_S is ill-conditioned, and forming D_S⁻¹ (G = U D⁻¹,
// ν = D⁻¹ ε) put the speeds 5.5 to 6.5 times what one rounding of M and G moves the long-double
// solve by at the states below (and 20 times at others: 1.0e-8 relative at t = 0.5 s of steps of
// 1e-3); solving with D_S's factor gives 0.39 of it at most. The bound, 3 times the largest change
// of three roundings, leaves a factor of 7 over that and fails the inverse. Which states show the
// loss depends on the motion (with the inverse, the state reached by steps of 5e-3 is within the
// bound): three states of one run are checked.
TEST(Embedding, FloppyChainInMotionKeepsItsDigits) {
  const Model m = Model::build(square_chain_mechanism(85));
  auto embedding = make_formulation("embedding", m);
  const Constraints& cons = embedding->constraints();
  double worst = 0.0;
  for (const reference::ClosedState& s : reference::moving_states(m, cons, 2e-3, 0.1, 0.3, 0.5)) {
    const VecX exact = reference::long_double_accelerations(m, cons, s.q, s.u);
    const double rounding = reference::rounding_change(m, cons, s.q, s.u, exact);
    VecX udot(m.nv);
    embedding->accelerations(0.0, s.q, s.u, udot);
    const double off = (udot - exact).norm() / exact.norm();
    EXPECT_LT(off, 3.0 * rounding) << "t = " << s.t << ": one rounding moves the solve by " << rounding;
    worst = std::max(worst, off / rounding);
  }
  RecordProperty("off_per_rounding", test::fmt(worst));
}

// Gram-Schmidt twice on columns whose condition number is 2.3e5 (a Vandermonde matrix): QᵀQ = 1
// and X = Q R with R upper triangular, both to a few ε times the size.
TEST(Linalg, OrthonormalizedColumnsSpanTheSameSpace) {
  const int rows = 30, cols = 8;
  MatX X(rows, cols);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) X(i, j) = std::pow(0.1 + i / double(rows), j);
  MatX Q = X;
  orthonormalize_columns(Q);
  EXPECT_TRUE(near(Q.transpose() * Q, MatX::Identity(cols, cols), 1e-14));
  const MatX R = Q.transpose() * X;
  EXPECT_TRUE(near(Q * R.triangularView<Eigen::Upper>().toDenseMatrix(), X, 1e-14));
  MatX dependent = X;
  dependent.col(5) = 2.0 * X.col(1) - X.col(3);
  EXPECT_THROW(orthonormalize_columns(dependent), std::runtime_error);
}

// SquareLu's written-out factors (n <= 4) and Eigen's (above) against an SVD's solution and
// condition number, on random matrices of sizes 1-7 with condition numbers 1 to 1e8 (singular
// values spaced logarithmically between the two ends): A x = b and Aᵀ x = b to κ · 1e-15 relative
// (the forward error of a backward-stable solve is κ ε times a small growth factor), and the 1-norm
// condition number exact (n <= 4: 1e-12 relative, from the SVD's inverse) or within Hager's
// guarantee (a lower bound, here within a factor 3). One pivot that must swap rows, and a
// singular matrix (infinite condition), are checked at every small size.
TEST(Linalg, SquareLuSolvesAndConditionAgreeWithTheSvd) {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> normal;
  const auto random_matrix = [&](int n) {
    MatX M(n, n);
    for (double& v : M.reshaped()) v = normal(rng);
    return M;
  };
  SquareLu lu;
  for (int n = 1; n <= 7; ++n) {
    lu.resize(n);
    VecX x(n), xt(n);
    for (const double kappa : {1.0, 1e4, 1e8}) {
      const MatX U = random_matrix(n).householderQr().householderQ();
      const MatX V = random_matrix(n).householderQr().householderQ();
      VecX sigma(n);
      for (int i = 0; i < n; ++i) sigma(i) = std::pow(kappa, -static_cast<double>(i) / std::max(n - 1, 1));
      const MatX A = U * sigma.asDiagonal() * V.transpose();
      const VecX b = test::random_vector(n, rng);
      lu.compute(A);
      lu.solve(b, x);
      lu.solve_transposed(b, xt);
      const MatX inverse = V * sigma.cwiseInverse().asDiagonal() * U.transpose();
      const VecX exact = inverse * b, exact_t = inverse.transpose() * b;
      const double tol = std::max(kappa, 1.0) * 1e-15 * 10.0;
      EXPECT_LE((x - exact).norm(), tol * exact.norm()) << "n " << n << " kappa " << kappa;
      EXPECT_LE((xt - exact_t).norm(), tol * exact_t.norm()) << "n " << n << " kappa " << kappa;
      const double norm1 = A.cwiseAbs().colwise().sum().maxCoeff();
      const double condition = std::max(norm1 * inverse.cwiseAbs().colwise().sum().maxCoeff(), 1.0);
      if (n <= 4) EXPECT_NEAR(lu.condition() / condition, 1.0, kappa * 1e-12) << "n " << n;
      else EXPECT_TRUE(lu.condition() <= condition * (1 + 1e-8) && lu.condition() >= condition / 3.0) << "n " << n;
    }
    if (n > 4) continue;
    if (n > 1) {
      // A zero where the first pivot would be without pivoting: the rows must swap.
      MatX A = MatX::Identity(n, n);
      A(0, 0) = 0.0;
      A(1, 0) = A(0, 1) = 2.0;
      const VecX b = VecX::LinSpaced(n, 1.0, 2.0);
      lu.compute(A);
      lu.solve(b, x);
      EXPECT_TRUE(near(A * x, b, 1e-15)) << "n " << n;
      lu.solve_transposed(b, xt);
      EXPECT_TRUE(near(A.transpose() * xt, b, 1e-15)) << "n " << n;
    }
    MatX singular = random_matrix(n);
    singular.col(n - 1).setZero();
    lu.compute(singular);
    EXPECT_TRUE(std::isinf(lu.condition())) << "n " << n;
  }
}

// 002 §5.2-5.3: the same four-bar cut at the end of the chain and in its middle. Both files pin
// the crank as the independent coordinate, and embedding integrates only it (the other
// coordinates are solved from it at every stage), so with the same fixed RK4 steps the two runs
// see the same physical u̇(θ, θ̇). What separates them is how closely each closes its loop at every
// stage: with the default Newton tolerance (|Φ| <= 1e-10) they drift apart by ~1.2e-9 in 5 s, so
// the test closes the loops to 1e-13 and the issue's 1e-9 bound then holds with margin; a wrong
// embedded inertia or bias in either tree breaks it at once.
TEST(Embedding, TerminalAndInternalCutGiveTheSameMotion) {
  std::vector<Trajectory> runs;
  for (const char* file : {"fourbar_jain_terminal", "fourbar_jain_internal"}) {
    const Model m = test::load_model(file);
    FormulationSettings settings;
    settings.position_tolerance = 1e-13;
    auto f = make_formulation("embedding", m, settings);
    Simulator sim(m, *f, test::fixed_step_settings(1e-3, 5.0, 0.1));
    runs.push_back(sim.run(m.q0, m.u0));
  }
  const Trajectory &a = runs[0], &b = runs[1];
  ASSERT_EQ(a.rows.size(), b.rows.size());
  for (std::size_t r = 0; r < a.rows.size(); ++r) {
    for (const char* column : {"q.crank_pivot", "q.crank_pin", "u.crank_pivot", "u.crank_pin", "energy"})
      EXPECT_NEAR(a.at(r, column), b.at(r, column), 1e-9 * std::max(1.0, std::abs(a.at(r, column))))
          << column << ", t = " << a.at(r, "t");
  }
}

// Issue 36: planar four-bars whose joints reach limits of their motion, where the coordinate
// partition of gcp, nullspace and embedding must change (coordinate_partition.hpp).
// Triple rocker (ground 1.2, crank 0.8, coupler 0.9, rocker 0.7: not Grashof), every joint
// swinging between limits.
constexpr const char* kTripleRocker = R"(name: triple_rocker
gravity: [0, -9.81, 0]
bodies:
  - {name: crank, mass: 0.5, com: [0.4, 0, 0], inertia: [0.0001, 0.00375, 0.00375]}
  - {name: coupler, mass: 1.0, com: [0.5, 0, 0], inertia: [0.0001, 0.0833, 0.0833]}
  - {name: rocker, mass: 0.8, com: [0.4, 0, 0], inertia: [0.0001, 0.0427, 0.0427]}
joints:
  - {name: j_crank, type: revolute, parent: ground, child: crank, axis: [0, 0, 1], q: 1.2, u: 2.0}
  - {name: j_coupler, type: revolute, parent: crank, child: coupler, parent_frame: {xyz: [0.8, 0, 0]}, q: -1.0}
  - {name: j_rocker, type: revolute, parent: ground, child: rocker, parent_frame: {xyz: [1.2, 0, 0]}, q: 1.8}
  - {name: closure, type: revolute, parent: coupler, child: rocker, parent_frame: {xyz: [0.9, 0, 0]}, child_frame: {xyz: [0.7, 0, 0]}, cut: true}
markers:
  - {name: tip, body: coupler, xyz: [0.5, 0.2, 0]}
)";
// Grashof four-bar (ground 1.0, crank 0.3, coupler 1.0, closure 0.1 along the rocker): the link
// marked independent is the one that swings between limits, the short one turns round.
constexpr const char* kMarkedRocker = R"(name: my_fourbar
gravity: [0, -9.81, 0]
bodies:
  - {name: crank, mass: 0.5, com: [0.15, 0, 0], inertia: [0.0001, 0.00375, 0.00375]}
  - {name: coupler, mass: 1.0, com: [0.5, 0, 0], inertia: [0.0001, 0.0833, 0.0833]}
  - {name: rocker, mass: 0.8, com: [0.05, 0, 0], inertia: [0.0001, 0.0427, 0.0427]}
joints:
  - {name: j_crank, type: revolute, parent: ground, child: crank, axis: [0, 0, 1], q: 1.2, u: 2.0, independent: true}
  - {name: j_coupler, type: revolute, parent: crank, child: coupler, parent_frame: {xyz: [0.3, 0, 0]}, q: -1.0}
  - {name: j_rocker, type: revolute, parent: ground, child: rocker, parent_frame: {xyz: [1.0, 0, 0]}, q: 1.8}
  - {name: closure, type: revolute, parent: coupler, child: rocker, parent_frame: {xyz: [1.0, 0, 0]}, child_frame: {xyz: [0.1, 0, 0]}, cut: true}
markers:
  - {name: tip, body: coupler, xyz: [0.5, 0.2, 0]}
)";

struct EventfulRun {
  Trajectory trajectory;
  std::vector<FormulationEvent> events;
  int count(const std::string& text) const {
    return static_cast<int>(std::count_if(events.begin(), events.end(), [&](const FormulationEvent& e) {
      return e.message.find(text) != std::string::npos;
    }));
  }
};

// `method` from the assembled initial state, as `loopdyn simulate` starts it.
EventfulRun run_from_file_text(const char* text, const std::string& method, const SimulationSettings& settings) {
  const Model m = Model::build(parse_mechanism(text, "issue 36"));
  const AssemblyResult a = assemble(m, m.loops().constraints, m.q0, m.u0);
  auto f = make_formulation(method, m);
  EventfulRun out;
  f->set_event_sink([&out](const FormulationEvent& e) { out.events.push_back(e); });
  Simulator sim(m, *f, settings);
  out.trajectory = sim.run(a.q, a.u);
  return out;
}

double largest_energy_change(const Trajectory& t) {
  const double e0 = t.at(0, "energy");
  double worst = 0.0;
  for (std::size_t r = 0; r < t.rows.size(); ++r) worst = std::max(worst, std::abs(t.at(r, "energy") - e0) / e0);
  return worst;
}

TEST(CoordinatePartition, TripleRockerKeepsEnergyAndMotionAcrossPartitionChanges) {
  SimulationSettings reference_settings;
  reference_settings.integrator.kind = IntegratorKind::dopri5;
  reference_settings.integrator.rtol = reference_settings.integrator.atol = 1e-11;
  reference_settings.t_end = 5.0;
  reference_settings.output_dt = 0.01;
  const Trajectory reference = run_from_file_text(kTripleRocker, "dca", reference_settings).trajectory;
  for (const char* method : {"embedding", "gcp", "nullspace"}) {
    const EventfulRun run = run_from_file_text(kTripleRocker, method, test::fixed_step_settings(1e-3, 5.0, 0.01));
    const Trajectory& t = run.trajectory;
    // Every joint swings between limits: the partition must change on the way.
    EXPECT_GE(run.count("independent speeds chosen again"), 4) << method;
    // lagrange-dense, whose right-hand side is smooth, keeps the energy to 6.7e-6 at this step and
    // the partitioned methods to 2.2e-6 (issue 36; they lost 20 % when they kept an independent
    // coordinate up to 100 times its condition, choosing again inside a step). 1e-5 is
    // lagrange-dense's figure with 50 % margin.
    EXPECT_LT(largest_energy_change(t), 1e-5) << method;
    ASSERT_EQ(t.rows.size(), reference.rows.size()) << method;
    // The tip marker against dca at rtol 1e-11 (energy kept to 1e-10), row by row: every 10 ms, so
    // that each partition change lies within 5 ms of a compared row. RK4's error at h = 1e-3 is
    // 6.5e-5 m over the 5 s for these methods and 7.1e-5 m for lagrange-dense; 2e-4 m leaves a
    // factor 3 (the changes inside a step left the motion by 1.2 m).
    double worst = 0.0;
    for (std::size_t r = 0; r < t.rows.size(); ++r)
      for (const char* column : {"tip.x", "tip.y"})
        worst = std::max(worst, std::abs(t.at(r, column) - reference.at(r, column)));
    EXPECT_LT(worst, 2e-4) << method;
  }
}

TEST(CoordinatePartition, MarkedIndependentJointIsAPreferenceNotAPromise) {
  const Model m = Model::build(parse_mechanism(kMarkedRocker, "issue 36"));
  const std::string default_choice = default_method(m, IntegratorKind::rk4).method;
  EXPECT_EQ(default_choice, "embedding");
  for (const std::string& method : {default_choice, std::string("rcr")}) {
    EventfulRun run;
    ASSERT_NO_THROW(run = run_from_file_text(kMarkedRocker, method.c_str(), test::fixed_step_settings(1e-3, 10.0, 0.01)))
        << method;
    const Trajectory& t = run.trajectory;
    EXPECT_NEAR(t.rows.back()(0), 10.0, 1e-9) << method;
    // The marked joint swings between limits, where it cannot stay independent: the method says so.
    EXPECT_GE(run.count("marked independent"), 1) << method;
    // Energy kept to 1e-8 by embedding (lagrange-dense: 1.6e-8) and to 1.7e-5 by rcr, which
    // integrates its dependent coordinates and chooses again 56 times; 1e-4 leaves a factor 6 (at
    // dadfa00 rcr multiplied the energy by 32). Loop residual: embedding closes to its 1e-10
    // tolerance, rcr drifts to 5e-10 (4e-3 at dadfa00); 1e-8 leaves a factor 20.
    EXPECT_LT(largest_energy_change(t), 1e-4) << method;
    double drift = 0.0;
    for (std::size_t r = 0; r < t.rows.size(); ++r) drift = std::max(drift, t.at(r, "residual.position"));
    EXPECT_LT(drift, 1e-8) << method;
  }
}

}  // namespace
}  // namespace loopdyn
