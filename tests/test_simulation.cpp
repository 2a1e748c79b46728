// Simulation (simulation.hpp), a run advanced step by step with held forces: against a run of the
// same settings, against the closed form of a bar under piecewise-constant torques, on a drive's
// absolute time, its work column, and its refusals and stops.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "loopdyn/io/model_file.hpp"
#include "loopdyn/run/simulation.hpp"
#include "loopdyn/run/start_state.hpp"
#include "test_support.hpp"

namespace loopdyn {
namespace {


RunSettings with_method(const char* method) {
  RunSettings s;
  s.method = method;
  return s;
}

// Fixed steps: rk4 at dt = 1 ms in steps of 0.1 s takes the run's own steps, so the rows are the
// run's to round-off (1e-12 on the five-bar's angles and speeds of order 1).
TEST(Simulation, StepsWithoutForcesAreTheRun) {
  const Model model = test::load_model("fivebar_anderson");
  const StartState start = start_state(model, model.q0, model.u0, true);
  RunSettings s = with_method("lagrange-dense");
  s.integrator = IntegratorKind::rk4;
  s.simulation.integrator.dt = 1e-3;
  s.simulation.output_dt = 0.1;
  s.simulation.t_end = 1.0;
  const RunResult run_result = run(model, start.q, start.u, s);
  ASSERT_TRUE(run_result.completed());
  Simulation sim(model, s, start.q, start.u);
  for (int k = 0; k < 10; ++k) sim.step(0.1, VecX::Zero(model.nv));
  EXPECT_NEAR(sim.time(), 1.0, 1e-15);
  const Trajectory& a = run_result.trajectory;
  const Trajectory& b = sim.trajectory();
  ASSERT_EQ(a.rows.size(), b.rows.size());
  for (std::size_t r = 0; r < a.rows.size(); ++r)
    for (const char* column : {"t", "q.base_left", "q.elbow_right", "u.base_right", "energy"})
      EXPECT_NEAR(a.at(r, column), b.at(r, column), 1e-12) << column << " row " << r;
  EXPECT_NEAR(sim.q()(0), a.rows.back()(1), 1e-12);
}

// Torque +1 N m for five steps of 0.1 s, then −1 N m for five (dopri5, default tolerances): θ is
// a quadratic in each piece, which dopri5 integrates exactly: θ(1) = 0.25 / J, θ̇(1) = 0 to
// round-off. The work of the held torque is in the work column: energy − work stays 0.
TEST(Simulation, HeldTorquesGiveThePiecewiseClosedForm) {
  const Model model = Model::build(parse_mechanism(test::bar_text(), "bar.yaml"));
  Simulation sim(model, {}, model.q0, model.u0);
  const double J = 0.35;  // tests/models/bar.yaml
  for (int k = 0; k < 10; ++k) sim.step(0.1, VecX::Constant(1, k < 5 ? 1.0 : -1.0));
  EXPECT_NEAR(sim.q()(0), 0.25 / J, 1e-12);
  EXPECT_NEAR(sim.u()(0), 0.0, 1e-12);
  const Trajectory& t = sim.trajectory();
  ASSERT_EQ(t.rows.size(), 101u);  // every output_dt = 0.01 s within the steps
  EXPECT_NEAR(t.at(50, "t"), 0.5, 1e-15);
  EXPECT_NEAR(t.at(50, "q.pivot"), 0.125 / J, 1e-12);
  for (std::size_t r = 0; r < t.rows.size(); ++r) EXPECT_NEAR(t.at(r, "energy") - t.at(r, "work"), 0.0, 1e-12);
  EXPECT_EQ(sim.method(), "tree");
}

// The driven slider-crank stepped 10 ms at a time: the drive reads the absolute time, so the
// crank is at ω t after each step (u̇ = 0: exact to round-off).
TEST(Simulation, DrivesSeeTheAbsoluteTime) {
  const Model model = test::load_model("slider_crank_driven");
  const StartState start = start_state(model, model.q0, model.u0, true);
  Simulation sim(model, {}, start.q, start.u);
  const double w = 2.0 * std::numbers::pi * 100.0 / 60.0;
  for (int k = 1; k <= 10; ++k) {
    sim.step(0.01, VecX::Zero(model.nv));
    EXPECT_NEAR(sim.q()(model.q_index[model.joint_index("crank_pivot")]), w * 0.01 * k, 1e-12) << k;
  }
}

// 200 steps of 0.01 s summed as doubles end at 2.0000000000000013: a drive whose table ends at
// t = 2 refused the last step ("t = 2 s is outside the table's times [0, 2] s"). Summed with
// compensation they end at 2 exactly, and the drive holds the table's last value there.
TEST(Simulation, StepsEndWhereTheirSumDoes) {
  const Model model = Model::build(parse_mechanism(
      test::bar_text() + "drives:\n  - {joint: pivot, table: [[0, 0], [1, 0.5], [2, 1]]}\n", "bar.yaml"));
  const StartState start = start_state(model, model.q0, model.u0, true);
  Simulation sim(model, {}, start.q, start.u);
  for (int k = 0; k < 200; ++k) sim.step(0.01, VecX::Zero(model.nv));
  EXPECT_EQ(sim.time(), 2.0);
  EXPECT_NEAR(sim.q()(0), 1.0, 1e-12);
}

TEST(Simulation, BadStepsAndStopsAreNamed) {
  const Model model = Model::build(parse_mechanism(test::bar_text(), "bar.yaml"));
  Simulation sim(model, {}, model.q0, model.u0);
  EXPECT_NE(test::message_of([&] { sim.step(0.0, VecX::Zero(1)); }).find("dt must be finite and > 0"), std::string::npos);
  EXPECT_NE(test::message_of([&] { sim.step(0.1, VecX::Zero(2)); }).find("tau has 2 entries, expected nv = 1"),
            std::string::npos);
  EXPECT_NE(test::message_of([&] { sim.step(0.1, VecX::Constant(1, std::nan(""))); }).find("tau[0] (u.pivot) is not finite"),
            std::string::npos);
  EXPECT_EQ(sim.time(), 0.0);  // refused steps do not move it
  // A step shorter than the spacing of doubles at t moved nothing, and said nothing.
  sim.step(1.0, VecX::Zero(1));
  EXPECT_NE(test::message_of([&] { sim.step(1e-17, VecX::Zero(1)); }).find("dt = 1e-17 s does not advance t = 1 s"),
            std::string::npos);
  sim.step(1e-15, VecX::Zero(1));  // above the spacing (2.2e-16 at t = 1): a step
  EXPECT_GT(sim.time(), 1.0);

  // A load whose table ends at 0.15 s: the second step reaches the table's end (with a row), then
  // stops as an input error, the rows kept, and the simulation stays stopped.
  Mechanism m = parse_mechanism(test::bar_text(), "bar.yaml");
  m.forces.emplace_back(JointForceSpec{"pivot", {1.0}}, "", TimeFunction::table({0.0, 0.15}, {0.0, 1.0}));
  const Model ending = Model::build(m);
  Simulation stops(ending, {}, ending.q0, ending.u0);
  stops.step(0.1, VecX::Zero(1));
  EXPECT_THROW(stops.step(0.1, VecX::Zero(1)), InputError);
  EXPECT_EQ(stops.time(), 0.15);
  EXPECT_EQ(stops.trajectory().rows.back()(0), 0.15);
  EXPECT_NE(test::message_of([&] { stops.step(0.1, VecX::Zero(1)); }).find("the simulation stopped: force #1"),
            std::string::npos);
}

}  // namespace
}  // namespace loopdyn
