// The run layer (run.hpp) and the run watch (run_watch.hpp): the default run of a new user's
// four-bars is right or stops, against the absolute-coordinate reference (reference/, its own code
// path); a method that leaves the motion is stopped by the watch whatever it is; a stop keeps its
// rows; `auto` hands over on every stop of its first choice.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "absolute_coordinates.hpp"
#include "iftomm_cases.hpp"
#include "loopdyn/loops/assembly.hpp"
#include "loopdyn/formulations/gcp.hpp"
#include "loopdyn/formulations/lagrange_dense.hpp"
#include "loopdyn/io/model_file.hpp"
#include "loopdyn/run/run.hpp"
#include "test_support.hpp"

namespace loopdyn {
namespace {

// A planar four-bar in the x-y plane as a new user writes it (issue 36's two files): crank on the
// ground pivot at the origin, rocker on the pivot at (ground, 0), the loop cut between coupler and
// rocker; link lengths crank, coupler, rocker; initial crank angle and speed 1.2 rad, 2 rad/s.
Mechanism four_bar(double ground, double crank, double coupler, double rocker, const Vec3& crank_com,
                   const Vec3& rocker_com, bool pin_crank) {
  Mechanism m;
  m.name = "four_bar";
  m.gravity = Vec3(0, -9.81, 0);
  m.add_body("crank", 0.5, crank_com, Vec3(1e-4, 0.00375, 0.00375).asDiagonal());
  m.add_body("coupler", 1.0, Vec3(0.5, 0, 0), Vec3(1e-4, 0.0833, 0.0833).asDiagonal());
  m.add_body("rocker", 0.8, rocker_com, Vec3(1e-4, 0.0427, 0.0427).asDiagonal());
  JointSpec& j1 = m.add_joint("j_crank", JointType::revolute, "ground", "crank");
  j1.axis = Vec3::UnitZ();
  j1.q = {1.2};
  j1.u = {2.0};
  j1.independent = pin_crank;
  m.add_joint("j_coupler", JointType::revolute, "crank", "coupler", Transform::translation(Vec3(crank, 0, 0))).q = {-1.0};
  m.add_joint("j_rocker", JointType::revolute, "ground", "rocker", Transform::translation(Vec3(ground, 0, 0))).q = {1.8};
  JointSpec& cut = m.add_joint("closure", JointType::revolute, "coupler", "rocker",
                               Transform::translation(Vec3(coupler, 0, 0)), Transform::translation(Vec3(rocker, 0, 0)));
  cut.cut = true;
  m.markers.push_back({"tip", "coupler", Vec3(0.5, 0.2, 0), ""});
  return m;
}

// Issue 36's triple-rocker (ground 1.2, links 0.8 / 0.9 / 0.7 m): its crank swings between limits,
// where every method in joint coordinates must choose its independent coordinate again.
Mechanism triple_rocker() { return four_bar(1.2, 0.8, 0.9, 0.7, Vec3(0.4, 0, 0), Vec3(0.4, 0, 0), false); }
// Issue 36's Grashof crank-rocker (ground 1.0, crank 0.3, coupler 1.0, rocker 0.8; the cut frame
// on the rocker at 0.1 as the user wrote it), the crank marked `independent: true`.
Mechanism crank_rocker() { return four_bar(1.0, 0.3, 1.0, 0.1, Vec3(0.15, 0, 0), Vec3(0.05, 0, 0), true); }

struct Assembled {
  Mechanism mechanism;  ///< with the assembled q and u written into its joints
  Model model;
};

// The loops closed from the file's q and u as `loopdyn simulate` does (the marked joints kept).
Assembled assembled(Mechanism m) {
  Model model = Model::build(m);
  const AssemblyResult a = assemble(model, model.loops().constraints, model.q0, model.u0);
  for (int i = 0; i < model.nbodies; ++i) {
    JointSpec& j = *std::find_if(m.joints.begin(), m.joints.end(),
                                 [&](const JointSpec& s) { return s.name == model.joints[i].name; });
    j.q = {a.q(model.q_index[i])};
    j.u = {a.u(model.v_index[i])};
  }
  Model closed = Model::build(m);
  return {std::move(m), std::move(closed)};
}

// The largest distance between the run's tip marker and the absolute-coordinate reference's (RK4
// at h = 4e-4 with projections; its own code path) over the run's rows. Against dca at rtol 1e-12
// over the triple-rocker's 5 s the reference is 3.8e-8 m off at h = 4e-4, 1.8e-9 at 2e-4, 1.5e-10
// at 1e-4 (fourth order): h = 4e-4 is 250 times inside the tests' 1e-5 m and 4 times cheaper.
// The reference's position of `marker` at the given times (from t = 0).
std::vector<Vec3> reference_marker(const Mechanism& m, const std::vector<double>& times, const std::string& marker) {
  const reference::AbsoluteCoordinates ref(m);
  std::vector<reference::BodyState> s = reference::initial_bodies(m);
  const MarkerSpec& spec = *std::find_if(m.markers.begin(), m.markers.end(), [&](const MarkerSpec& k) { return k.name == marker; });
  const int body = ref.body(spec.body);
  std::vector<Vec3> points;
  double now = 0.0;
  for (double t : times) {
    ref.advance(s, now, t, 4e-4);
    now = t;
    points.push_back(ref.point(s, body, spec.point));
  }
  return points;
}

// The largest distance of the run's `marker` from the reference's points at its rows.
double marker_error(const std::vector<Vec3>& reference, const Trajectory& traj, const std::string& marker) {
  double worst = 0.0;
  for (std::size_t k = 0; k < traj.rows.size() && k < reference.size(); ++k) {
    const Vec3 run(traj.at(k, marker + ".x"), traj.at(k, marker + ".y"), traj.at(k, marker + ".z"));
    worst = std::max(worst, (run - reference[k]).norm());
  }
  return traj.rows.size() <= reference.size() ? worst : std::numeric_limits<double>::infinity();
}

double marker_error(const Mechanism& m, const Trajectory& traj, const std::string& marker) {
  std::vector<double> times;
  for (std::size_t k = 0; k < traj.rows.size(); ++k) times.push_back(traj.rows[k](0));
  return marker_error(reference_marker(m, times, marker), traj, marker);
}
double tip_error(const Assembled& c, const Trajectory& traj) { return marker_error(c.mechanism, traj, "tip"); }

RunSettings default_run(double t_end) {
  RunSettings s;
  s.simulation.t_end = t_end;
  s.simulation.output_dt = 0.05;
  return s;
}

// The default run (auto, dopri5 at rtol 1e-8) of both four-bars follows the reference, and its
// error is the integrator's: it falls with the tolerance. The triple-rocker's crank keeps the
// 2 rad/s its file gives (assembly keeps the speed a state sets); on that motion the default run
// (embedding) ends 1.8e-5 m off over 5 s (1 m links), 1.9e-6 m at rtol 1e-9 and 6.5e-8 m at
// 1e-10, in proportion to the tolerance (dca 5.7e-7, 5.9e-8, 1.0e-8); the reference is within
// 4e-8 m. Bounds: 1e-4 m at the default, four orders below a motion on another branch (~1 m),
// and 1e-6 m at rtol 1e-10, which only a run converging to the reference's motion meets. On
// dadfa00 the triple-rocker ended 2.6 rad off dca in its input angle under the then default rk4
// run, and the crank-rocker stopped at t = 0.3135.
TEST(Run, DefaultRunOfTheNewUsersFourBarsFollowsTheReference) {
  for (const auto& [name, mechanism] : {std::pair{"triple_rocker", triple_rocker()}, {"crank_rocker", crank_rocker()}}) {
    const Assembled c = assembled(mechanism);
    EXPECT_EQ(c.model.u0(c.model.v_index[c.model.joint_index("j_crank")]), 2.0) << name;
    const RunResult r = run(c.model, c.model.q0, c.model.u0, default_run(5.0));
    ASSERT_TRUE(r.completed()) << name << ": " << r.stop.message;
    EXPECT_EQ(r.integrator, IntegratorKind::dopri5);
    const double error = tip_error(c, r.trajectory);
    EXPECT_LT(error, 1e-4) << name << " with " << r.method;
    EXPECT_TRUE(r.trajectory.watch.watched);
    RunSettings tight = default_run(5.0);
    tight.simulation.integrator.rtol = tight.simulation.integrator.atol = 1e-10;
    const RunResult t = run(c.model, c.model.q0, c.model.u0, tight);
    ASSERT_TRUE(t.completed()) << name << ": " << t.stop.message;
    const double tight_error = tip_error(c, t.trajectory);
    std::printf("%s (%s): tip %.2g m off at the default, %.2g m at rtol 1e-10\n", name, r.method.c_str(), error,
                tight_error);  // docs/methods.md, "The run"
    EXPECT_LT(tight_error, 1e-6) << name << " with " << t.method << " at rtol 1e-10";
  }
}

// Cancellation is checked between output times too: with one output interval of 1e4 s, checked
// at the row at t = 0, then at once at the first poll (64 evaluations in), then 20 ms later, the
// run stops at that third check, long before the interval ends, with only the row at t = 0; the
// same under bdf, where the check's throw crosses CVODE's C frames as a stored exception. Checked
// at output times only, the third check would come at t = 1e4, after the interval's row.
TEST(Run, CancellationIsCheckedBetweenOutputTimes) {
  const Assembled c = assembled(crank_rocker());
  for (IntegratorKind integrator : {IntegratorKind::dopri5, IntegratorKind::bdf}) {
    RunSettings s = default_run(1e4);
    s.simulation.output_dt = 1e4;
    s.integrator = integrator;
    int checks = 0;
    RunCallbacks callbacks;
    callbacks.cancelled = [&checks] { return ++checks == 3; };
    const RunResult r = run(c.model, c.model.q0, c.model.u0, s, callbacks);
    const std::string name(to_string(integrator));
    EXPECT_EQ(r.stop.kind, RunStopKind::cancelled) << name << ": " << r.stop.message;
    EXPECT_EQ(checks, 3) << name;
    EXPECT_EQ(r.trajectory.rows.size(), 1u) << name;
    EXPECT_EQ(r.stop.message.rfind("cancelled at t = ", 0), 0u) << name << ": " << r.stop.message;
    EXPECT_LT(std::stod(r.stop.message.substr(17)), 1e4) << name;
  }
}

// IFToMM A04's Bricard linkage with its loop closed at the fifth revolute instead of the sixth
// (issue 36): rod5 hangs from the ground by J6 and J5 is cut. J5's 5 rows have rank 4 everywhere
// (the redundancy is geometric: it comes from the closed linkage's special axes), and the 4 rows
// the structural check keeps lose rank at t = 1.25 s while all 5 keep it. On dadfa00 the default
// (embedding) and nullspace then followed another motion of the 4 rows, 2 m off the reference with
// their residual at 1e-10 and the energy held; lagrange-dense, lagrange-on and gcp stopped at a
// "singular configuration" that is not one. Each method now chooses J5's rows again between steps
// (row_choice.hpp), says so, and follows the reference. The bound 1e-5 m: the default's accuracy
// (rtol 1e-8) on 1 m rods, as for the four-bars above.
TEST(Run, BricardClosedAtItsFifthJointFollowsTheReference) {
  Mechanism m = load_mechanism(std::string(LOOPDYN_SOURCE_DIR) + "/models/iftomm_a04_bricard.yaml");
  auto joint = [&](const char* name) {
    return std::find_if(m.joints.begin(), m.joints.end(), [&](const JointSpec& j) { return j.name == name; });
  };
  JointSpec j6 = *joint("J6");
  j6.parent = "ground";
  j6.child = "rod5";
  std::swap(j6.parent_frame, j6.child_frame);
  j6.cut = false;
  m.joints.erase(joint("J6"));
  joint("J5")->cut = true;
  m.joints.insert(joint("J5"), j6);
  const Model model = Model::build(m);
  ASSERT_EQ(model.loops().constraints.dropped().size(), 1u);
  ASSERT_EQ(model.loops().constraints.alternates().size(), 1u);
  const double t_end = 2.0;
  const std::vector<Vec3> reference = reference_marker(m, output_times(t_end, default_run(t_end).simulation.output_dt), "P3");
  for (const std::string method : {"auto", "embedding", "nullspace", "gcp", "lagrange-dense", "lagrange-on"}) {
    SCOPED_TRACE(method);
    RunSettings s = default_run(t_end);
    s.method = method;
    int exchanges = 0;
    RunCallbacks callbacks;
    callbacks.event = [&](const FormulationEvent& e) {
      if (e.message.find("rows chosen again") != std::string::npos) ++exchanges;
    };
    const RunResult r = run(model, model.q0, model.u0, s, callbacks);
    ASSERT_TRUE(r.completed()) << r.stop.message;
    EXPECT_TRUE(r.handovers.empty());
    EXPECT_GT(exchanges, 0);
    EXPECT_LT(marker_error(reference, r.trajectory, "P3"), 1e-5) << r.method;
  }
}

// A Simulator's settings for a method outside the registry: dopri5 at its defaults up to t_end.
SimulationSettings dopri5_run(double t_end) {
  SimulationSettings s;
  s.integrator.kind = IntegratorKind::dopri5;
  s.t_end = t_end;
  return s;
}

// A formulation outside the registry made from a registered one, Inner with default settings: its
// accelerations and completions, for the tests below to change one of them.
template <class Inner>
class Wrapped : public Formulation {
 public:
  explicit Wrapped(const Model& model) : Formulation(model), inner_(model, {}) {}
  void accelerations(double t, const VecX& q, const VecX& u, Eigen::Ref<VecX> udot) override {
    inner_.accelerations(t, q, u, udot);
  }
  void complete_state(double t, Eigen::Ref<VecX> q, Eigen::Ref<VecX> u) override { inner_.complete_state(t, q, u); }
  void complete_accepted_state(double t, Eigen::Ref<VecX> q, Eigen::Ref<VecX> u) override {
    inner_.complete_accepted_state(t, q, u);
  }

 private:
  Inner inner_;
};

// A formulation that leaks energy: lagrange-dense's accelerations with a hidden damping u̇ −= c u,
// which no residual shows (G u = 0, so G (u̇ − c u) = γ: the loops stay closed), while the energy
// falls at the rate 2 c T. c = 1e-3/s: 2e-3 of the kinetic energy per second, 7 times the watch's
// budget for dopri5 at τ = 1e-8 (30 τ S_E per step, about 200 steps per second, S_E 47 J against
// T of about 20 J), and past its floor (1e3 τ S_E) after some 10 ms.
class Leaky final : public Wrapped<LagrangeDense> {
 public:
  using Wrapped::Wrapped;
  std::string_view name() const override { return "leaky"; }
  void accelerations(double t, const VecX& q, const VecX& u, Eigen::Ref<VecX> udot) override {
    Wrapped::accelerations(t, q, u, udot);
    udot -= 1e-3 * u;
  }
};

// The watch stops any method that leaves the motion (here: one outside the registry), names the
// check, and the stopped run keeps its rows up to the stop; with the watch off it runs to the end.
TEST(RunWatch, StopsAMethodThatLosesEnergyAndKeepsTheRows) {
  const Assembled c = assembled(triple_rocker());
  Leaky leaky(c.model);
  SimulationSettings s = dopri5_run(5.0);
  s.output_dt = 1e-3;
  Simulator sim(c.model, leaky, s);
  Trajectory traj;
  try {
    sim.run(c.model.q0, c.model.u0, traj);
    FAIL() << "the watch did not stop a run that loses energy";
  } catch (const RunWatchError& e) {
    EXPECT_NE(std::string(e.what()).find("energy balance"), std::string::npos) << e.what();
  }
  ASSERT_GT(traj.rows.size(), 1u);
  EXPECT_LT(traj.rows.back()(0), 5.0);
  EXPECT_TRUE(traj.watch.watched);
  EXPECT_GT(traj.watch.worst_balance, 0.0);
  s.watch.enabled = false;
  Simulator unwatched(c.model, leaky, s);
  EXPECT_DOUBLE_EQ(unwatched.run(c.model.q0, c.model.u0).rows.back()(0), 5.0);
}

// A formulation whose completion of an accepted step jumps once: gcp, but at the first accepted
// step after t = 0.5 s every joint angle moves by 1e-3 rad and the loop is closed again there for
// the independent one (the dependent ones go back), as a
// partition change that lands on another point of the motion would. The state stays closed and its
// energy changes by about m g r 1e-3 ~ 2e-3 J of 12 J; the continuity check (bound 1e3 τ (L + |q|),
// about 3e-5 rad at τ = 1e-8) stops it at that step, before the energy check sees anything.
class Jumpy final : public Wrapped<Gcp> {
 public:
  using Wrapped::Wrapped;
  std::string_view name() const override { return "jumpy"; }
  void complete_accepted_state(double t, Eigen::Ref<VecX> q, Eigen::Ref<VecX> u) override {
    if (t >= 0.5 && !jumped_) {
      jumped_ = true;
      jumped_at_ = t;
      q.array() += 1e-3;
    }
    Wrapped::complete_accepted_state(t, q, u);
  }
  double jumped_at() const { return jumped_at_; }

 private:
  bool jumped_ = false;
  double jumped_at_ = 0.0;
};

TEST(RunWatch, StopsACompletionThatMovesTheState) {
  const Assembled c = assembled(triple_rocker());
  Jumpy jumpy(c.model);
  Simulator sim(c.model, jumpy, dopri5_run(2.0));
  Trajectory traj;
  try {
    sim.run(c.model.q0, c.model.u0, traj);
    FAIL() << "the watch did not stop a completion that jumped";
  } catch (const RunWatchError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("continuity"), std::string::npos) << what;
    EXPECT_NE(what.find("moved q.j_"), std::string::npos) << what;
    char at[48];
    std::snprintf(at, sizeof at, "t = %.9g:", jumpy.jumped_at());
    EXPECT_EQ(what.rfind(at, 0), 0u) << what;
  }
}

// The methods that complete their states (position analysis, rcr's dependent speeds) on the
// triple-rocker, whose independent speeds are chosen again several times in 5 s: with rk4 at
// h = 1e-3 (the fixed-step τ 1e-6) and with dopri5 (τ 1e-8), every completion moves the state by
// far less than the continuity bound, partition changes included.
TEST(RunWatch, CompletionsAcrossPartitionChangesAreContinuous) {
  const Assembled c = assembled(triple_rocker());
  for (const IntegratorKind kind : {IntegratorKind::rk4, IntegratorKind::dopri5})
    for (const std::string method : {"gcp", "nullspace", "embedding", "rcr"}) {
      SCOPED_TRACE(method + " " + std::string(to_string(kind)));
      RunSettings s = default_run(5.0);
      s.method = method;
      s.integrator = kind;
      int changes = 0;
      RunCallbacks callbacks;
      callbacks.event = [&](const FormulationEvent& e) {
        if (e.message.find("chosen again") != std::string::npos) ++changes;
      };
      const RunResult r = run(c.model, c.model.q0, c.model.u0, s, callbacks);
      ASSERT_TRUE(r.completed()) << r.stop.message;
      if (method != "rcr") {
        EXPECT_GT(changes, 0);
      }
      const WatchSummary& w = r.trajectory.watch;
      std::printf("%s %s: completions moved q by at most %.2g\n", method.c_str(), std::string(to_string(kind)).c_str(),
                  w.worst_completion);  // docs/methods.md, "The run watch"
      // The bound at the crank, 1e3 τ (max(1, L) + |q|) with L >= 1.2 m: at least 1.2e3 τ.
      EXPECT_LT(w.worst_completion, 1.2e3 * w.accuracy / 10);
    }
}

// The watch at a fixed step: rk4 at a step far too long for the motion (h = 0.05 s against a
// swing of about 1 s) ends far off; it is stopped, and `auto` hands the run to dca, which stops
// too at that step: the run ends with a watch stop, never a completed wrong motion.
TEST(Run, FixedStepTooLongIsStoppedNotWrong) {
  const Assembled c = assembled(triple_rocker());
  RunSettings s = default_run(5.0);
  s.integrator = IntegratorKind::rk4;
  s.simulation.integrator.dt = 0.05;
  const RunResult r = run(c.model, c.model.q0, c.model.u0, s);
  if (r.completed()) {
    EXPECT_LT(tip_error(c, r.trajectory), 1e-3) << r.method;  // 1e3 τ of the watch's τ = 1e-6, on 1 m links
  } else {
    EXPECT_EQ(r.stop.kind, RunStopKind::watch) << r.stop.message;
    EXPECT_FALSE(r.handovers.empty());
    EXPECT_FALSE(r.trajectory.rows.empty());
  }
}

// Applied forces: the `work` column is the work of the non-conservative forces (the spring is in
// `energy`), so energy − work stays at its start on an accurate run, and the watch checks that
// balance on every step. The triple-rocker with a spring-damper on the crank, a constant force on
// the coupler and a time-varying torque from a callback: the damper takes about a third of the
// energy in 3 s, while energy − work must hold to dopri5's accuracy (rtol 1e-8: a few 1e-8 of the
// energy scale; 1e-6 leaves the margin of the watch's own bound, 1e3 τ). A sign slip in the power
// of any element would leave energy − work off by the order of the work itself.
TEST(RunWatch, WorkOfAppliedForcesBalancesTheEnergy) {
  Assembled c = assembled(triple_rocker());
  c.mechanism.forces.push_back({JointSpringDamperSpec{"j_crank", 2.0, 0.3, 1.0}, ""});
  c.mechanism.forces.push_back({BodyForceSpec{"coupler", Vec3(0.5, 0, 0), Vec3(1.0, 0.5, 0)}, ""});
  c.mechanism.callbacks.push_back([](double t, const Model& model, const KinematicsData&, const VecX&, const VecX&,
                                     AppliedForces& out) { out.tau(model.v_index[2]) += 0.4 * std::sin(3.0 * t); });
  const Model model = Model::build(c.mechanism);
  RunSettings s = default_run(3.0);
  for (const std::string method : {"lagrange-dense", "embedding", "dca"}) {
    s.method = method;
    const RunResult r = run(model, model.q0, model.u0, s);
    ASSERT_TRUE(r.completed()) << method << ": " << r.stop.message;
    const Trajectory& traj = r.trajectory;
    const std::size_t last = traj.rows.size() - 1;
    const double e0 = traj.at(0, "energy"), scale = traj.watch.balance_scale;
    EXPECT_EQ(traj.at(0, "work"), 0.0);
    EXPECT_GT(std::abs(traj.at(last, "work")), 0.1 * scale) << method;
    for (std::size_t k = 0; k <= last; ++k)
      EXPECT_LT(std::abs(traj.at(k, "energy") - traj.at(k, "work") - e0), 1e-6 * scale) << method << " row " << k;
  }
}

// The balance is a difference of sums whose terms can dwarf the motion's energy: a pendulum
// hanging 1e9 m above the origin, let go at rest for 1 ms, has −m g·c = 9.8e9 J against a kinetic
// energy of 9e-5 J. Its positions are rounded to 1.2e-7 m there, and without a floor the watch
// stopped this correct run: the balance off by 1.9e-6 J (0.9 ε m g·c) against F τ S_E = 9e-10 J.
// The bound is now at least kWatchRoundoff ε Σ |m g·c| (RunWatch.StopsAMethodThatLosesEnergy-
// AndKeepsTheRows shows that a real loss still stops a run).
TEST(RunWatch, TheBalanceIsJudgedAboveItsRoundOff) {
  Mechanism m;
  m.name = "high_pendulum";
  m.gravity = Vec3(0, -9.81, 0);
  m.add_body("bob", 1.0, Vec3(1.0, 0, 0), Vec3(1e-3, 1e-3, 1e-3).asDiagonal());
  m.add_joint("pivot", JointType::revolute, "ground", "bob", Transform::translation(Vec3(0, 1e9, 0))).q = {-0.3};
  const Model model = Model::build(m);
  const RunResult r = run(model, model.q0, model.u0, default_run(1e-3));
  ASSERT_TRUE(r.completed()) << r.stop.message;
  EXPECT_GT(r.trajectory.watch.steps, 0);
}

// A spring of negative stiffness stores negative energy; the watch scaled its bound by the signed
// energy, so atol's share turned negative and this correct run was stopped at t = 0.002 (with the
// watch off it held its energy to 3e-9). Without gravity the motion is exact: I q̈ = |k| q, so
// q = q0 cosh(ω t) with ω² = |k| / I, I = 1 kg m² (the bob at 1 m) + 0.01 (its own). dopri5 at
// rtol 1e-8 on a motion growing like e^(ω t) keeps a few 1e-8 of q; 1e-6 leaves margin, while a
// sign slip in the spring's torque gives cos instead of cosh (q of the other sign).
TEST(RunWatch, ASpringOfNegativeStiffnessIsWatchedByItsSize) {
  Mechanism m;
  m.name = "snap_through";
  m.gravity = Vec3::Zero();
  m.add_body("bob", 1.0, Vec3(0, 0, -1), Vec3(0.01, 0.01, 0.01).asDiagonal());
  JointSpec& pivot = m.add_joint("pivot", JointType::revolute, "ground", "bob");
  pivot.axis = Vec3::UnitY();
  pivot.q = {0.5};
  m.forces.push_back({JointSpringDamperSpec{"pivot", -1000.0, 0.0, 0.0}, ""});
  const Model model = Model::build(m);
  const RunResult r = run(model, model.q0, model.u0, default_run(0.1));
  ASSERT_TRUE(r.completed()) << r.stop.message;
  const Trajectory& traj = r.trajectory;
  const double omega = std::sqrt(1000.0 / 1.01);
  for (std::size_t k = 0; k < traj.rows.size(); ++k) {
    const double t = traj.at(k, "t"), exact = 0.5 * std::cosh(omega * t);
    EXPECT_NEAR(traj.at(k, "q.pivot"), exact, 1e-6 * exact) << "t = " << t;
  }
}

}  // namespace
}  // namespace loopdyn
