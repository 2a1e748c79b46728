// Paper 000 §4 "Results" reproduced with `rcr`: the equivalent spatial ladders of Fig. 10 against
// the 2-dof pendulum, the parallel manipulators of §4.2 (the five-bar of Figs. 7-8 and a 3-RRR)
// against lagrange-dense and nullspace, and the shape of the four-bar drift of Fig. 6.
#include <cmath>
#include <cstdio>

#include "loopdyn/formulations/rcr.hpp"
#include "loopdyn/mechanisms/generators.hpp"
#include "pendulums.hpp"
#include "loopdyn/formulations/registry.hpp"
#include "test_support.hpp"

namespace loopdyn {
namespace {

using test::near;

// A measured number for RecordProperty (gtest's XML output).
std::string fixed(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", x);
  return buf;
}

// The equivalent ladders' masses make the pendulum the L = 1 one at every L (generators.hpp): the
// closed-form accelerations agree to round-off (a and c are sums of L-dependent fractions).
TEST(RcrPaper, EquivalentLaddersHaveTheOneCellPendulum) {
  for (int L : {1, 2, 3, 4, 8, 64}) {
    for (double beta : {-0.25, 0.9}) {
      const Eigen::Vector2d one = spatial_ladder_pendulum_accelerations(0.4, beta, 0.6, -0.35, 1);
      EXPECT_TRUE(near(spatial_ladder_pendulum_accelerations(0.4, beta, 0.6, -0.35, L, LadderMasses::equivalent), one,
                       1e-14))
          << L;
    }
    const Mechanism m = spatial_ladder_mechanism(L, LadderMasses::equivalent);
    EXPECT_EQ(m.name, test::indexed("spatial-ladder-equivalent-", L));
    double mass = 0;
    for (const BodySpec& b : m.bodies) mass += b.mass;
    EXPECT_NEAR(mass, 3.0, 1e-14) << L << ": posts 2 kg, rungs 1 kg in all";
  }
  EXPECT_EQ(spatial_ladder_mechanism(4).name, "spatial-ladder-4") << "the benchmark ladder keeps its name";
}

// rcr's accelerations at the benchmark state are the pendulum's, on every post and rung, for both
// mass variants (the closed form of spatial_ladder_pendulum_accelerations against the ladder).
TEST(RcrPaper, LadderAccelerationsAreThePendulums) {
  for (LadderMasses masses : {LadderMasses::uniform, LadderMasses::equivalent})
    for (int L : {1, 2, 4, 8}) {
      const Model m = Model::build(spatial_ladder_mechanism(L, masses));
      SCOPED_TRACE(m.name);
      const SpatialLadderState s = spatial_ladder_state(m, L);
      VecX udot(m.nv);
      make_formulation("rcr", m)->accelerations(0.0, s.q, s.u, udot);
      const Eigen::Vector4d x = reference::SpatialLadderPendulum::state_of(m, s.q, s.u);
      const Eigen::Vector2d p = spatial_ladder_pendulum_accelerations(x(0), x(1), x(2), x(3), L, masses);
      for (int k = 0; k <= L; ++k)
        EXPECT_TRUE(near(udot.segment<2>(m.v_index[m.joint_index(test::indexed("post", k) + "_top")]), p, 1e-12));
      for (int k = 1; k <= L; ++k)
        EXPECT_TRUE(near(udot.segment<2>(m.v_index[m.joint_index(test::indexed("rung", k) + "_left")]),
                         Eigen::Vector2d(-p(1), 0.0), 1e-12));
    }
}

// 000 Fig. 10: ladders of different L built to be kinematically and dynamically equivalent give
// the same independent-coordinate trajectories (q1, q2) = (α, β) of post0_top, those of the
// 2-dof pendulum. The pendulum is integrated on its own (4 states, dopri5 at 1e-12, error
// ~1e-11); rcr's run of the whole ladder at rtol = atol = 1e-10 has a global error of ~1e-9
// (dopri5 at this tolerance, test_integrators) over the 3 s, plus a position drift of the same
// order in the dependent coordinates that does not feed back into (α, β) beyond it (measured:
// 1.6e-10 at every L). 1e-7 leaves two digits over the expected error; a wrong mass factor (an
// L-dependent pendulum) shows at 1e-2 within 1 s.
TEST(RcrPaper, Fig10EquivalentLaddersFollowTheTwoDofPendulum) {
  const double t_end = 3.0, dt = 0.1;
  for (int L : {1, 2, 4, 8}) {
    SCOPED_TRACE(test::indexed("L = ", L));
    const Model m = Model::build(spatial_ladder_mechanism(L, LadderMasses::equivalent));
    const SpatialLadderState s = spatial_ladder_state(m, L);
    auto f = make_formulation("rcr", m);
    const Trajectory t = test::dopri5_run(m, *f, s.q, s.u, t_end, dt);
    const std::vector<Eigen::Vector4d> ref =
        reference::SpatialLadderPendulum(1).solve(reference::SpatialLadderPendulum::state_of(m, s.q, s.u), output_times(t_end, dt));
    ASSERT_EQ(t.rows.size(), ref.size());
    double worst = 0;
    for (std::size_t r = 0; r < ref.size(); ++r) {
      const Eigen::Vector2d ab(t.at(r, "q.post0_top.0"), t.at(r, "q.post0_top.1"));
      EXPECT_TRUE(near(ab, ref[r].head<2>(), 1e-7)) << "t = " << t.at(r, "t");
      worst = std::max(worst, (ab - ref[r].head<2>()).cwiseAbs().maxCoeff());
    }
    RecordProperty(test::indexed("max_angle_difference_L", L), fixed(worst));
  }
}

// §4.2: the five-bar (Figs. 7-8) and the 3-RRR, legs closed one at a time on their common base.
const char* const manipulators[] = {"fivebar_anderson", "parallel_3rrr"};

// Closed states with random speeds in ker G (|u| up to ~2): the two eliminations give the same
// accelerations; the differences seen are ~1e-14 relative, so 1e-9 (as in test_rcr) leaves a wide
// margin while a wrong term shows at O(1).
TEST(RcrPaper, ParallelManipulatorAccelerationsEqualLagrangeDense) {
  for (const char* file : manipulators)
    for (std::uint64_t seed : {1, 2, 3}) {
      const test::LoopState c = test::assembled_state(file, seed);
      EXPECT_TRUE(near(test::accelerations("rcr", c), test::accelerations("lagrange-dense", c), 1e-9))
          << file << ", seed " << seed;
    }
}

// The five-bar's marked base joints are rcr's independent speeds (Fig. 8 plots them). The 3-RRR
// has no marks: leg 2's closure takes elbow2 and platform1 (nearest its cut), leg 3's the speeds
// of leg 3 (leg 2's closure was solved with base1, elbow1 and base2, which stay independent).
TEST(RcrPaper, ParallelManipulatorIndependentSpeeds) {
  for (const char* file : manipulators) {
    const test::LoopState c = test::file_state(file);
    Rcr rcr(c.model, {});
    VecX q = c.q, u = c.u;
    rcr.complete_state(0.0, q, u);
    std::vector<std::string> names;
    for (int k : rcr.independent_speeds()) names.push_back(c.model.coordinate_names()[c.model.nq + k]);
    if (std::string(file) == "fivebar_anderson") {
      EXPECT_EQ(names, (std::vector<std::string>{"u.base_left", "u.base_right"}));
    } else {
      EXPECT_EQ(names, (std::vector<std::string>{"u.base1", "u.elbow1", "u.base2"}));
    }
    std::string joined;
    for (const std::string& n : names) joined.append(joined.empty() ? "" : ", ").append(n);
    RecordProperty(std::string("independent_speeds_").append(file), joined);
    EXPECT_TRUE(near(u, c.u, 1e-13)) << file << ": the file's state is closed";
  }
}

// Five-bar and 3-RRR from their files' states, 5 s, dopri5 at rtol = atol = 1e-10: positions at
// every output row within 1e-7 of lagrange-dense and nullspace. dopri5's global error at this
// tolerance is ~1e-9 and rcr's position drift is of the same size (it integrates the dependent
// coordinates; nothing is solved at position level), which leaves two digits of margin (measured:
// at most 1.5e-9, the 3-RRR against lagrange-dense); the swings are regular (no switch of
// independent speeds in any method).
TEST(RcrPaper, ParallelManipulatorTrajectoriesAgreeWithLagrangeDenseAndNullspace) {
  for (const char* file : manipulators) {
    const test::LoopState c = test::file_state(file);
    auto rcr = make_formulation("rcr", c.model);
    const Trajectory t = test::dopri5_run(c.model, *rcr, c.q, c.u, 5.0, 0.05);
    for (const char* reference : {"lagrange-dense", "nullspace"}) {
      auto f = make_formulation(reference, c.model);
      int events = 0;
      f->set_event_sink([&](const FormulationEvent&) { ++events; });
      const Trajectory ref = test::dopri5_run(c.model, *f, c.q, c.u, 5.0, 0.05);
      ASSERT_EQ(t.rows.size(), ref.rows.size());
      double worst = 0;
      for (std::size_t r = 0; r < t.rows.size(); ++r) {
        const VecX q = t.rows[r].segment(1, c.model.nq), q_ref = ref.rows[r].segment(1, c.model.nq);
        EXPECT_TRUE(near(q, q_ref, 1e-7)) << file << " against " << reference << ", t = " << t.at(r, "t");
        worst = std::max(worst, (q - q_ref).cwiseAbs().maxCoeff());
      }
      EXPECT_EQ(events, 0) << file << ", " << reference;
      RecordProperty(std::string("max_position_difference_").append(file).append("_").append(reference), fixed(worst));
    }
    for (std::size_t r = 0; r < t.rows.size(); ++r)
      EXPECT_LT(t.at(r, "residual.velocity"), 1e-13) << file << ", t = " << t.at(r, "t");
  }
}

// Least-squares slope of log y on log t over the rows with t >= 1 s: the exponent p of y ~ t^p.
double log_log_slope(const Trajectory& t, const char* column) {
  std::vector<double> x, y;
  for (std::size_t r = 0; r < t.rows.size(); ++r)
    if (t.at(r, "t") >= 1.0) {
      x.push_back(std::log(t.at(r, "t")));
      y.push_back(std::log(t.at(r, column)));
    }
  MatX A(x.size(), 2);
  A.col(0) = Eigen::Map<const VecX>(x.data(), static_cast<Eigen::Index>(x.size()));
  A.col(1).setOnes();
  return A.colPivHouseholderQr().solve(Eigen::Map<const VecX>(y.data(), static_cast<Eigen::Index>(y.size())))(0);
}

// 000 §4.1, Fig. 6: RK4 with h = 0.01 s, no error control, on the four-bar. rcr enforces the
// velocity constraints at every evaluation: |G u| stays at round-off (|G| |u| ~ 1, so 1e-13 is a
// few hundred ulps), and the position error grows at a constant rate ("a constant rate of drift");
// lagrange-on enforces them at acceleration level only and drifts about quadratically (exponent
// 1.88 measured over 10 s). rcr's |Φ| is ~5e-7 after the first fall of the crank (0.5 s) and then
// grows by ~1e-7 per second (fit a + b t on t = 1..10 s: a = 3.9e-7, b = 7.5e-8 /s, under a
// periodic ripple of ±2e-7): on t = 1..10 s that offset hides the linear growth from a log-log fit
// (exponent 0.31), which sees it once the drift outweighs the offset: 0.60 on t = 1..20 s, 0.81
// on t = 1..40 s. Hence the exponent of rcr is checked below 1 (not quadratic) over the paper's
// 10 s and between 0.5 and 1.5 over 40 s.
TEST(RcrPaper, Fig6FourBarDriftIsLinearUnderRcrAndQuadraticUnderLagrangeOn) {
  const test::LoopState c = test::file_state("fourbar_anderson");
  auto run = [&](const char* method, double t_end) {
    auto f = make_formulation(method, c.model);
    // The drift itself is measured: the run watch, which stops lagrange-on's at 1e-3 of the
    // energy (t = 4.7 s), is off.
    SimulationSettings s = test::fixed_step_settings(0.01, t_end, 1.0);
    s.watch.enabled = false;
    Simulator sim(c.model, *f, s);
    return sim.run(c.q, c.u);
  };
  const Trajectory rcr = run("rcr", 10.0), on = run("lagrange-on", 10.0), rcr_long = run("rcr", 40.0);
  ASSERT_EQ(rcr.rows.size(), 11u);
  for (const Trajectory* t : {&rcr, &rcr_long})
    for (std::size_t r = 0; r < t->rows.size(); ++r)
      EXPECT_LE(t->at(r, "residual.velocity"), 1e-13) << "t = " << t->at(r, "t");
  const double p_rcr = log_log_slope(rcr, "residual.position"), p_on = log_log_slope(on, "residual.position");
  const double p_long = log_log_slope(rcr_long, "residual.position");
  EXPECT_LT(p_rcr, 1.0);
  EXPECT_GT(p_on, 1.5);
  EXPECT_GE(p_long, 0.5);
  EXPECT_LE(p_long, 1.5);
  EXPECT_GT(rcr_long.at(40, "residual.position"), 3.0 * rcr.at(10, "residual.position")) << "the drift grows";
  RecordProperty("drift_exponent_rcr_10s", fixed(p_rcr));
  RecordProperty("drift_exponent_rcr_40s", fixed(p_long));
  RecordProperty("drift_exponent_lagrange_on_10s", fixed(p_on));
}

}  // namespace
}  // namespace loopdyn
