// Drives (prescribed motions, `drives:`), loads with a time profile (`profile:`), PD controllers
// (`joint_pd`) and the functions of time they follow (time_function.hpp): each kind against its
// exact value and derivatives, the driven slider-crank, a bar under a sine torque and under a PD
// controller against their closed forms, and the refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "loopdyn/core/time_function.hpp"
#include "loopdyn/io/model_file.hpp"
#include "loopdyn/run/run.hpp"
#include "loopdyn/run/start_state.hpp"
#include "slider_crank_closed_form.hpp"
#include "test_support.hpp"

namespace loopdyn {
namespace {

TEST(TimeFunction, PolynomialAndSineAreExact) {
  const TimeFunction p = TimeFunction::polynomial({1.0, -2.0, 0.5, 3.0});  // 1 − 2t + t²/2 + 3t³
  for (double t : {-1.3, 0.0, 0.7, 2.5}) {
    const TimeValue v = p(t);
    EXPECT_DOUBLE_EQ(v.value, 1.0 - 2.0 * t + 0.5 * t * t + 3.0 * t * t * t);
    EXPECT_DOUBLE_EQ(v.rate, -2.0 + t + 9.0 * t * t);
    EXPECT_DOUBLE_EQ(v.acceleration, 1.0 + 18.0 * t);
  }
  const TimeFunction s = TimeFunction::sine(0.3, 2.0, 0.1, 1.0);
  const double w = 4.0 * std::numbers::pi;
  for (double t : {0.0, 0.37, 1.9}) {
    const TimeValue v = s(t);
    EXPECT_DOUBLE_EQ(v.value, 1.0 + 0.3 * std::sin(w * t + 0.1));
    EXPECT_NEAR(v.rate, 0.3 * w * std::cos(w * t + 0.1), 1e-14 * 0.3 * w);
    EXPECT_NEAR(v.acceleration, -0.3 * w * w * std::sin(w * t + 0.1), 1e-14 * 0.3 * w * w);
  }
}

// The natural cubic spline through points of a straight line is that line; through any points it
// passes the knots, and its derivatives are those of its own values (central differences, whose
// error h²/6 f''' at h = 1e-5 is far below the 1e-7 allowed) and continuous at the knots.
TEST(TimeFunction, TableIsANaturalCubicSpline) {
  const TimeFunction line = TimeFunction::table({0.0, 0.5, 1.5, 2.0}, {1.0, 2.0, 4.0, 5.0});
  for (double t : {0.0, 0.2, 0.5, 1.1, 2.0}) {
    EXPECT_NEAR(line(t).value, 1.0 + 2.0 * t, 1e-14);
    EXPECT_NEAR(line(t).rate, 2.0, 1e-13);
    EXPECT_NEAR(line(t).acceleration, 0.0, 1e-12);
  }
  const std::vector<double> times{0.0, 0.3, 0.5, 1.0, 1.6}, values{0.0, 0.4, -0.2, 0.7, 0.1};
  const TimeFunction f = TimeFunction::table(times, values);
  for (std::size_t i = 0; i < times.size(); ++i) EXPECT_NEAR(f(times[i]).value, values[i], 1e-15);
  EXPECT_NEAR(f(0.0).acceleration, 0.0, 1e-12);  // natural ends
  EXPECT_NEAR(f(1.6).acceleration, 0.0, 1e-12);
  const double h = 1e-5;
  for (double t : {0.1, 0.41, 0.77, 1.3}) {
    EXPECT_NEAR(f(t).rate, (f(t + h).value - f(t - h).value) / (2 * h), 1e-7);
    EXPECT_NEAR(f(t).acceleration, (f(t + h).rate - f(t - h).rate) / (2 * h), 1e-6);
  }
  for (double knot : {0.3, 0.5, 1.0}) {
    EXPECT_NEAR(f(knot - 1e-12).rate, f(knot + 1e-12).rate, 1e-9);
    EXPECT_NEAR(f(knot - 1e-12).acceleration, f(knot + 1e-12).acceleration, 1e-9);
  }
  EXPECT_NE(test::message_of([&] { f(1.7); }).find("t = 1.7 s is outside the table's times [0, 1.6] s"),
            std::string::npos);
  // Just past the end: digits enough to tell it from the end (it read "t = 1.6 s ... [0, 1.6]").
  EXPECT_NE(test::message_of([&] { f(std::nextafter(1.6, 2.0)); }).find("t = 1.6000000000000003 s is outside"),
            std::string::npos);
  EXPECT_NE(test::message_of([] { TimeFunction::table({0.0, 0.0}, {1.0, 2.0}); }).find("times must increase"),
            std::string::npos);
}

// Without the derivatives, an expression's come from Richardson-extrapolated differences: for
// sin(3t) their O(h⁴) error, h = 2 ms, is about 3⁵ (2e-3)⁴ / 30 ~ 1e-10 in the rate; round-off
// 1e-16 / h² ~ 3e-11 in the acceleration. Given derivatives are exact.
TEST(TimeFunction, ExpressionsOfTime) {
  const TimeFunction e = TimeFunction::expression("0.5*sin(3*t) + pi");
  const TimeFunction exact = TimeFunction::expression("0.5*sin(3*t)", "1.5*cos(3*t)", "-4.5*sin(3*t)");
  for (double t : {0.0, 0.4, 2.2}) {
    EXPECT_NEAR(e(t).value, 0.5 * std::sin(3 * t) + std::numbers::pi, 1e-15);
    EXPECT_NEAR(e(t).rate, 1.5 * std::cos(3 * t), 1e-9);
    EXPECT_NEAR(e(t).acceleration, -4.5 * std::sin(3 * t), 1e-8);
    EXPECT_DOUBLE_EQ(exact(t).rate, 1.5 * std::cos(3 * t));
    EXPECT_DOUBLE_EQ(exact(t).acceleration, -4.5 * std::sin(3 * t));
  }
  const std::string bad = test::message_of([] { TimeFunction::expression("0.5*sin(3*t"); });
  EXPECT_NE(bad.find("expression '0.5*sin(3*t' does not parse"), std::string::npos) << bad;
  EXPECT_NE(bad.find("at character"), std::string::npos) << bad;
  // One position, counted from 1 (muParser's own "at position 4" counted from 0 beside it).
  const std::string token = test::message_of([] { TimeFunction::expression("sin(x)"); });
  EXPECT_NE(token.find("(at character 5)"), std::string::npos) << token;
  EXPECT_EQ(token.find("position"), std::string::npos) << token;
  EXPECT_NE(test::message_of([] { TimeFunction::expression("t", "2*x"); }).find("rate '2*x' does not parse"),
            std::string::npos);
  // A given derivative that is not the expression's ran, and the watch blamed the loop's accuracy.
  const std::string rate = test::message_of([] { TimeFunction::expression("0.5*sin(3*t)", "3*cos(3*t)"); });
  EXPECT_NE(rate.find("rate '3*cos(3*t)' is not the rate of the expression '0.5*sin(3*t)': at t = "),
            std::string::npos) << rate;
  const std::string acceleration =
      test::message_of([] { TimeFunction::expression("0.5*sin(3*t)", "1.5*cos(3*t)", "4.5*sin(3*t)"); });
  EXPECT_NE(acceleration.find("acceleration '4.5*sin(3*t)' is not the derivative of the rate '1.5*cos(3*t)'"),
            std::string::npos) << acceleration;
  EXPECT_NE(test::message_of([] { TimeFunction::expression("t^3", "", "3*t"); }).find("of the rate of 't^3'"),
            std::string::npos);
  // A piecewise motion with its piecewise rate and acceleration is taken, kink and jump included.
  EXPECT_NO_THROW(TimeFunction::expression("(t > 0.5) * (t - 0.5)^2", "(t > 0.5) * 2 * (t - 0.5)", "(t > 0.5) * 2"));
  // Two expressions, or an assignment to t, made a constant drive; a comparison stays a value.
  EXPECT_NE(test::message_of([] { TimeFunction::expression("1,2"); }).find("'1,2' holds 2 expressions"),
            std::string::npos);
  EXPECT_NE(test::message_of([] { TimeFunction::expression("t=5"); }).find("'t=5' assigns with '='"),
            std::string::npos);
  const TimeFunction step = TimeFunction::expression("(t >= 1) * 2 + (t == 0.5)");
  EXPECT_EQ(step(0.0).value, 0.0);
  EXPECT_EQ(step(0.5).value, 1.0);
  EXPECT_EQ(step(2.0).value, 2.0);
  const TimeFunction nan = TimeFunction::expression("sqrt(t - 1)");
  EXPECT_NE(test::message_of([&] { nan(0.5); }).find("not finite"), std::string::npos);
}

// Every method that takes drives, and auto, over one revolution at 100 rpm (dopri5, rtol 1e-8):
// the crank follows ω t (u̇ = f̈ = 0: every stage integrates it exactly, 1e-12 rad asked), the
// slider the closed-form x_B(ω t) within dopri5's rtol on its 0.4 m (4e-9 m; 1e-8 asked), and the
// drive's column is the closed-form motor torque within the same relative accuracy, 1e-8 of its
// largest value. Measured: lagrange-dense and lagrange-on (acceleration level) 1.5e-9 m and 3.3e-9
// of the torque, gcp, nullspace and embedding (position analysis) 9.5e-11 m and 2.3e-10.
TEST(Drives, SliderCrankAt100RpmGivesTheClosedFormMotorTorque) {
  const Model model = test::load_model("slider_crank_driven");
  const StartState start = start_state(model, model.q0, model.u0, true);
  const double w = 2.0 * std::numbers::pi * 100.0 / 60.0;
  const test::SliderCrank sc;
  double range = 0.0;
  for (double th = 0.0; th < 2 * std::numbers::pi; th += 0.01) range = std::max(range, std::abs(sc.torque(th, w)));
  ASSERT_GT(range, 1.0);
  for (const char* method : {"lagrange-dense", "lagrange-on", "gcp", "nullspace", "embedding", "auto"}) {
    RunSettings s;
    s.method = method;
    s.simulation.t_end = 0.6;  // one revolution
    s.simulation.output_dt = 0.01;
    const RunResult r = run(model, start.q, start.u, s);
    ASSERT_TRUE(r.completed()) << method << ": " << r.stop.message;
    const Trajectory& traj = r.trajectory;
    double worst_torque = 0.0, worst_angle = 0.0, worst_slider = 0.0;
    for (std::size_t k = 0; k < traj.rows.size(); ++k) {
      const double t = traj.at(k, "t"), th = w * t;
      worst_angle = std::max(worst_angle, std::abs(traj.at(k, "q.crank_pivot") - th));
      worst_slider = std::max(worst_slider, std::abs(traj.at(k, "q.guide") - sc.slider(th)));
      worst_torque = std::max(worst_torque, std::abs(traj.at(k, "drive.crank_pivot") - sc.torque(th, w)));
    }
    EXPECT_LT(worst_angle, 1e-12) << method;
    EXPECT_LT(worst_slider, 1e-8) << method;
    EXPECT_LT(worst_torque, 1e-8 * range) << method << " (largest torque " << range << " N m)";
  }
}

Mechanism slider_crank() {
  return load_mechanism(std::string(LOOPDYN_SOURCE_DIR) + "/models/slider_crank_driven.yaml");
}

TEST(Drives, MethodsWithoutTimeDerivativesRefuse) {
  const Model model = Model::build(slider_crank());
  for (const char* method : {"rcr", "srm", "dca"}) {
    const std::string e = test::error_of([&] { make_formulation(method, model); });
    EXPECT_NE(e.find(std::string(method) + " does not take drives (`drive.crank_pivot`)"), std::string::npos) << e;
    EXPECT_NE(e.find("Use lagrange-dense"), std::string::npos) << e;
  }
}

TEST(Drives, BadDrivesAreNamed) {
  Mechanism m = slider_crank();
  m.drives[0].joint = "rod_slider";
  EXPECT_NE(test::error_of([&] { Model::build(m); }).find("drive on joint 'rod_slider': it closes a loop"),
            std::string::npos);
  m = slider_crank();
  m.drives[0].joint = "nothing";
  EXPECT_NE(test::error_of([&] { Model::build(m); }).find("drive on joint 'nothing': unknown joint"), std::string::npos);
  // The slider's motion follows from the crank's: driving both over-determines it.
  m = slider_crank();
  m.drives.push_back({"guide", TimeFunction::constant(0.4), ""});
  EXPECT_NE(test::error_of([&] { Model::build(m); }).find("drive 'drive.guide': the loops and the other drives"),
            std::string::npos);
  m = slider_crank();
  m.drives[0].motion = TimeFunction::table({0.5, 1.0}, {0.0, 1.0});
  EXPECT_NE(test::error_of([&] { Model::build(m); }).find("its motion starts at t = 0.5"), std::string::npos);
}

// A table that ends before the run does: the run lands on its last time with a row there, then
// stops at the first evaluation past it, naming the time, and keeps the rows. (The step that
// crossed the end failed at its probing stages, and the run stopped at that step's start: a
// table ending at 0.23 left the last row at 0.15.) The grid of rows stays k output_dt.
TEST(Drives, ATableThatEndsStopsTheRunWithTheRowsBefore) {
  Mechanism m = slider_crank();
  m.drives[0].motion = TimeFunction::table({0.0, 0.1, 0.23}, {0.0, 0.1, 0.3});
  const Model model = Model::build(m);
  const StartState start = start_state(model, model.q0, model.u0, true);
  RunSettings s;
  s.method = "lagrange-dense";
  s.simulation.t_end = 0.5;
  s.simulation.output_dt = 0.05;
  const RunResult r = run(model, start.q, start.u, s);
  ASSERT_FALSE(r.completed());
  EXPECT_EQ(r.stop.kind, RunStopKind::input);
  EXPECT_NE(r.stop.message.find("drive 'drive.crank_pivot': t = "), std::string::npos) << r.stop.message;
  EXPECT_NE(r.stop.message.find("outside the table's times [0, 0.23] s"), std::string::npos) << r.stop.message;
  const std::vector<double> times = {0.0, 0.05, 0.1, 0.15, 0.2, 0.23};
  ASSERT_EQ(r.trajectory.rows.size(), times.size());
  for (std::size_t k = 0; k < times.size(); ++k) EXPECT_NEAR(r.trajectory.rows[k](0), times[k], 1e-15) << k;
}

TEST(Drives, ModelFileMotions) {
  const std::string head = R"(
bodies:
  - {name: arm, mass: 1.0, com: [0.5, 0, 0], inertia: [0.0, 0.1, 0.1]}
joints:
  - {name: pivot, type: revolute, parent: ground, child: arm, axis: [0, 0, 1], q: 0.2}
drives:
)";
  const auto motion = [&](const std::string& item) {
    return parse_mechanism(head + "  - {joint: pivot, " + item + "}\n", "m.yaml").drives.at(0).motion;
  };
  EXPECT_DOUBLE_EQ(motion("speed: 2.0")(1.5).value, 0.2 + 3.0);  // from the joint's q
  EXPECT_DOUBLE_EQ(motion("polynomial: [1, 0, 3]")(2.0).acceleration, 6.0);
  EXPECT_DOUBLE_EQ(motion("sine: {amplitude: 2, frequency: 0.25}")(1.0).value, 2.0);
  EXPECT_DOUBLE_EQ(motion("table: [[0, 1], [1, 3]]")(0.5).value, 2.0);
  EXPECT_DOUBLE_EQ(motion("expression: '2*t', rate: '2', acceleration: '0'")(0.25).value, 0.5);
  const auto error = [&](const std::string& item) {
    return test::error_of([&] { parse_mechanism(head + "  - {joint: pivot, " + item + "}\n", "m.yaml"); });
  };
  EXPECT_NE(error("speed: 1, sine: {amplitude: 1, frequency: 1}").find("gives both 'speed' and 'sine'"), std::string::npos);
  EXPECT_NE(error("rate: '1'").find("has no motion"), std::string::npos);
  const std::string e = error("expression: 'sin(t'");
  EXPECT_NE(e.find("m.yaml:"), std::string::npos) << e;
  EXPECT_NE(e.find("'expression' of drive on joint 'pivot': expression 'sin(t' does not parse"), std::string::npos) << e;
  const std::string rate = error("expression: '2*t', rate: '3'");
  EXPECT_NE(rate.find("m.yaml:"), std::string::npos) << rate;
  EXPECT_NE(rate.find("rate '3' is not the rate of the expression '2*t': at t = 0.013 s it is 3"), std::string::npos)
      << rate;
  EXPECT_NE(error("table: [[0, 1], [0, 3]]").find("times must increase"), std::string::npos);
  // Points counted from 1 by both checks (the order's check counted from 0).
  EXPECT_NE(error("table: [[0, 0], [1, 1], [0.5, 3]]").find("(point 3: 0.5 after 1)"), std::string::npos);
  EXPECT_NE(error("table: [[0, 0], [1, 1, 1]]").find("(point 2) must have 2 numbers"), std::string::npos);
}

// A bar on a pivot without gravity under τ(t) = A sin(ω t) (joint_force times a sine profile):
// J θ̈ = τ from rest gives θ(t) = A/(J ω) (t − sin(ω t)/ω). dopri5's rtol 1e-8 on θ of ~6 rad:
// 1e-7 asked. The work column is ∫ τ θ̇ dt, integrated as one more state at the same rtol, and
// equals the kinetic energy gained (a few J; measured 1.6e-7 J off at most): 1e-6 J asked.
const std::string kPendulum = test::bar_text() + "forces:\n";

// The bar with one force element (a flow-style `forces:` item), run by default from rest to t_end.
RunResult run_bar(const std::string& force, double t_end) {
  const Model model = Model::build(parse_mechanism(kPendulum + "  - " + force + "\n", "bar.yaml"));
  RunSettings s;
  s.simulation.t_end = t_end;
  s.simulation.output_dt = 0.1;
  return run(model, model.q0, model.u0, s);
}

TEST(Profiles, SineTorqueOnABarFollowsTheClosedForm) {
  const RunResult r =
      run_bar("{type: joint_force, joint: pivot, value: 2.0, profile: {sine: {amplitude: 1, frequency: 0.5}}}", 2.0);
  ASSERT_TRUE(r.completed()) << r.stop.message;
  const double J = 0.1 + 0.25, A = 2.0, w = std::numbers::pi;
  for (std::size_t k = 0; k < r.trajectory.rows.size(); ++k) {
    const double t = r.trajectory.at(k, "t");
    EXPECT_NEAR(r.trajectory.at(k, "q.pivot"), A / (J * w) * (t - std::sin(w * t) / w), 1e-7) << t;
    EXPECT_NEAR(r.trajectory.at(k, "work"), r.trajectory.at(k, "energy") - r.trajectory.at(0, "energy"), 1e-6) << t;
  }
}

// A body torque whose table ends before the run: the run stops there, naming the force.
TEST(Profiles, ATableThatEndsNamesTheForce) {
  const RunResult r = run_bar("{type: body_torque, body: arm, torque: [0, 0, 1], profile: {table: [[0, 0], [0.3, 1]]}}", 1.0);
  ASSERT_FALSE(r.completed());
  EXPECT_NE(r.stop.message.find("force #1 (body_torque on 'arm'), its profile: t = "), std::string::npos) << r.stop.message;
  const std::string e = test::error_of([] {
    parse_mechanism(kPendulum + "  - {type: joint_spring_damper, joint: pivot, stiffness: 1, profile: {polynomial: [1]}}\n",
                    "bar.yaml");
  });
  EXPECT_NE(e.find("unknown key 'profile'"), std::string::npos) << e;
}

// A load's profile that ends stops the run as an input error, which `auto` does not hand over to
// dca (dca would stop at the same time): on a four-bar, whose `auto` method dca takes over.
TEST(Profiles, AnInputThatFailsIsNotHandedOver) {
  Mechanism m = test::parallelogram_four_bar();
  m.forces.emplace_back(BodyTorqueSpec{m.bodies[0].name, Vec3(0.0, 0.0, 1.0)}, "",
                        TimeFunction::table({0.0, 0.1}, {0.0, 1.0}));
  const Model model = Model::build(m);
  const StartState start = start_state(model, model.q0, model.u0, true);
  RunSettings s;
  s.simulation.t_end = 0.5;
  const RunResult r = run(model, start.q, start.u, s);
  ASSERT_FALSE(r.completed());
  EXPECT_EQ(r.stop.kind, RunStopKind::input);
  EXPECT_TRUE(r.handovers.empty());
  EXPECT_NE(r.stop.message.find("its profile: t = "), std::string::npos) << r.stop.message;
}

// A critically damped PD step on the bar (J = 0.35 kg m², no gravity): kp = J ω², kd = 2 J ω
// from rest to the target 1 rad gives θ(t) = 1 − (1 + ω t) e^(−ω t). dopri5's rtol 1e-8 on θ ≤ 1:
// 1e-7 asked.
TEST(JointPd, CriticallyDampedStepFollowsTheClosedForm) {
  const double J = 0.35, w = 4.0;
  const RunResult r = run_bar("{type: joint_pd, joint: pivot, stiffness: " + std::to_string(J * w * w) +
                                  ", damping: " + std::to_string(2 * J * w) + ", target: 1.0}",
                              2.0);
  ASSERT_TRUE(r.completed()) << r.stop.message;
  for (std::size_t k = 0; k < r.trajectory.rows.size(); ++k) {
    const double t = r.trajectory.at(k, "t");
    EXPECT_NEAR(r.trajectory.at(k, "q.pivot"), 1.0 - (1.0 + w * t) * std::exp(-w * t), 1e-7) << t;
  }
}

// A target far away saturates the controller at its effort for the whole run: θ = e t² / (2 J).
// The effort comes from the element, else from the joint (a URDF's <limit effort>).
TEST(JointPd, OutputIsClampedToTheEffort) {
  const double J = 0.35, e = 0.5;
  const RunResult r = run_bar("{type: joint_pd, joint: pivot, stiffness: 1000, target: 100, effort: 0.5}", 1.0);
  ASSERT_TRUE(r.completed()) << r.stop.message;
  for (std::size_t k = 0; k < r.trajectory.rows.size(); ++k) {
    const double t = r.trajectory.at(k, "t");
    EXPECT_NEAR(r.trajectory.at(k, "q.pivot"), e * t * t / (2 * J), 1e-9) << t;
  }
  Mechanism m = parse_mechanism(kPendulum + "  - {type: joint_pd, joint: pivot, stiffness: 1000, target: 100}\n", "bar.yaml");
  m.joints[0].effort = e;
  const Model model = Model::build(m);
  EXPECT_EQ(model.forces[0].effort, e);
}

TEST(JointPd, BadControllersAreNamed) {
  const auto error = [](const std::string& force) {
    return test::error_of([&] { Model::build(parse_mechanism(kPendulum + "  - " + force + "\n", "bar.yaml")); });
  };
  EXPECT_NE(error("{type: joint_pd, joint: pivot, stiffness: -1, target: 0}").find("must not be negative"), std::string::npos);
  EXPECT_NE(error("{type: joint_pd, joint: pivot, stiffness: 1, target: 0, effort: 0}").find("effort must be > 0"),
            std::string::npos);
  EXPECT_NE(error("{type: joint_pd, joint: nowhere, stiffness: 1, target: 0}").find("unknown joint 'nowhere'"),
            std::string::npos);
  EXPECT_NE(error("{type: joint_pd, joint: pivot, stiffness: 1}").find("missing required key 'target'"), std::string::npos);
  EXPECT_NE(error("{type: joint_pd, joint: pivot, stiffness: 1, target: {speed: 1}}").find("unknown key 'speed'"),
            std::string::npos);
}

}  // namespace
}  // namespace loopdyn
