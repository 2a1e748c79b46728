// Simulator: output times, recorded columns, CSV output, a formulation's own state layout.
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include "loopdyn/core/body_coordinates.hpp"
#include "loopdyn/formulations/formulation.hpp"
#include "loopdyn/formulations/tree.hpp"
#include "loopdyn/io/csv.hpp"
#include "loopdyn/mechanisms/iftomm.hpp"
#include "loopdyn/mechanisms/square_nets.hpp"
#include "loopdyn/run/method_choice.hpp"
#include "loopdyn/run/start_state.hpp"
#include "loopdyn/run/simulator.hpp"
#include "loopdyn/formulations/registry.hpp"
#include "test_support.hpp"

namespace loopdyn {
namespace {

// Fixed steps of 1e-3 s (rk4), rows every output_dt up to t_end.
SimulationSettings fixed_step_settings(double t_end, double output_dt) {
  SimulationSettings s;
  s.integrator.kind = IntegratorKind::rk4;
  s.integrator.dt = 1e-3;
  s.t_end = t_end;
  s.output_dt = output_dt;
  return s;
}

TEST(Simulator, OutputTimesIncludeZeroEveryIntervalAndTheEnd) {
  EXPECT_EQ(output_times(1.0, 0.25), (std::vector<double>{0.0, 0.25, 0.5, 0.75, 1.0}));
  EXPECT_EQ(output_times(1.0, 0.3), (std::vector<double>{0.0, 0.3, 0.6, 0.8999999999999999, 1.0}));
  EXPECT_EQ(output_times(0.0, 0.1), (std::vector<double>{0.0}));
  EXPECT_EQ(output_times(10.0, 0.1).size(), 101u);  // 100 · 0.1 lands on 10 despite round-off
  EXPECT_DOUBLE_EQ(output_times(10.0, 0.1).back(), 10.0);
  EXPECT_THROW(output_times(1.0, 0.0), std::invalid_argument);
  EXPECT_THROW(output_times(-1.0, 0.1), std::invalid_argument);
}

TEST(Simulator, RecordsStateMarkersAndEnergyAsCsv) {
  Mechanism mech = test::random_tree(5, 3, 3);
  mech.markers.push_back({"tip", "b2", Vec3(0.1, 0.2, 0.3), ""});
  const Model m = Model::build(mech);
  TreeFormulation tree(m);
  SimulationSettings s = fixed_step_settings(0.05, 0.01);
  Simulator sim(m, tree, s);
  const Trajectory traj = sim.run(m.q0, m.u0);
  ASSERT_EQ(traj.rows.size(), 6u);
  EXPECT_EQ(traj.columns.front(), "t");
  EXPECT_EQ(traj.columns.back(), "energy");
  EXPECT_NO_THROW(traj.column("tip.z"));
  EXPECT_EQ(traj.stats.steps_accepted, 50);
  // The marker column is the forward kinematics of the recorded q.
  KinematicsData kin(m);
  const VecX q = traj.rows.back().segment(1, m.nq);
  update_positions(m, kin, q);
  EXPECT_NEAR(traj.at(5, "tip.x"), point_position(kin, m.body_index("b2"), Vec3(0.1, 0.2, 0.3)).x(), 1e-15);

  std::ostringstream csv;
  write_csv(csv, traj);
  std::istringstream in(csv.str());
  std::string header, line;
  std::getline(in, header);
  EXPECT_EQ(header.substr(0, 2), "t,");
  int rows = 0;
  while (std::getline(in, line)) {
    ++rows;
    EXPECT_EQ(std::count(line.begin(), line.end(), ','), static_cast<long>(traj.columns.size() - 1));
  }
  EXPECT_EQ(rows, 6);
}

// A row of a partitioned method, or of rcr, reads the kinematics its completion swept
// (Formulation::completed_kinematics): its markers, energy and residuals are those of the row's
// own (q, u), swept afresh here, to the last bit (the same sweeps of the same state), at every row.
TEST(Simulator, RowsReadTheKinematicsOfTheirOwnState) {
  const test::LoopState c = test::assembled_state("fivebar_anderson", 1);
  const Model& m = c.model;
  ASSERT_FALSE(m.markers.empty());
  for (const char* method : {"embedding", "gcp", "nullspace", "rcr"}) {
    auto f = make_formulation(method, m);
    SimulationSettings s;
    s.t_end = 0.2;
    s.output_dt = 0.01;
    const Trajectory traj = Simulator(m, *f, s).run(c.q, c.u);
    EXPECT_NE(f->completed_kinematics(), nullptr) << method;
    KinematicsData kin(m);
    ConstraintData data(m);
    VecX phi(f->constraints().rows());
    for (std::size_t r = 0; r < traj.rows.size(); ++r) {
      const VecX q = traj.rows[r].segment(1, m.nq), u = traj.rows[r].segment(1 + m.nq, m.nv);
      update_positions(m, kin, q);
      update_velocities(m, kin, q, u);
      for (const ModelMarker& mk : m.markers)
        EXPECT_EQ(traj.at(r, mk.name + ".y"), point_position(kin, mk.body, mk.point).y()) << method << " row " << r;
      EXPECT_EQ(traj.at(r, "energy"), energy(m, kin, q).total()) << method << " row " << r;
      constraint_position(m, f->constraints(), kin, traj.rows[r](0), data, phi);
      EXPECT_EQ(traj.at(r, "residual.position"), phi.cwiseAbs().maxCoeff()) << method << " row " << r;
    }
  }
}

// Numbers are written as printf's %.15g writes them (the format is a promise to users' scripts),
// whatever the writer uses inside, and read back within 15 digits.
TEST(Simulator, CsvCellsArePrintfsFifteenDigits) {
  const std::vector<double> values = {0.0, -0.0, 0.1, 1.0 / 3.0, -2.0 / 3.0, 1e-300, 4.9e-324, 1e21, 123456789012345678.0,
                                      1e15, 1e16, -1.5e-7, 6.02214076e23, std::numeric_limits<double>::max(),
                                      std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()};
  Trajectory traj;
  VecX row(static_cast<Eigen::Index>(values.size()));
  std::string expected;
  for (std::size_t k = 0; k < values.size(); ++k) {
    traj.columns.push_back("c" + std::to_string(k));
    row(static_cast<Eigen::Index>(k)) = values[k];
    char cell[40];
    std::snprintf(cell, sizeof cell, k ? ",%.15g" : "%.15g", values[k]);
    expected += cell;
  }
  traj.rows.push_back(row);
  std::ostringstream csv;
  write_csv(csv, traj);
  const std::string text = csv.str();
  const std::string line = text.substr(text.find('\n') + 1);
  EXPECT_EQ(line, expected + "\n");
}

TEST(Simulator, WrongInitialStateSizeIsAnError) {
  const Model m = Model::build(test::random_tree(6, 2));
  TreeFormulation tree(m);
  Simulator sim(m, tree, SimulationSettings{});
  EXPECT_THROW(sim.run(VecX::Zero(m.nq + 1), m.u0), std::invalid_argument);
}

// A finite start whose energy overflows (speeds of 1e300: squares past double's range) is refused
// before the first step, naming the energy; the run watch stopped it at t = 0.001 with a balance
// of nan against a bound of inf.
TEST(Simulator, AStartWhoseEnergyOverflowsIsAnError) {
  const Model m = Model::build(test::random_tree(6, 2));
  TreeFormulation tree(m);
  Simulator sim(m, tree, SimulationSettings{});
  VecX u = m.u0;
  u.setConstant(1e300);
  try {
    sim.run(m.q0, u);
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("the start state's energy is not finite (kinetic inf J"), std::string::npos)
        << e.what();
  }
}

TEST(Simulator, NonFiniteAccelerationStopsWithTheTime) {
  Mechanism mech = test::random_tree(7, 2);
  mech.callbacks.push_back([](double t, const Model&, const KinematicsData&, const VecX&, const VecX&, AppliedForces& out) {
    if (t > 0.02) out.tau(0) = std::nan("");
  });
  const Model m = Model::build(mech);
  TreeFormulation tree(m);
  SimulationSettings s;
  s.t_end = 0.1;
  Simulator sim(m, tree, s);
  try {
    sim.run(m.q0, m.u0);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("t = 0.02"), std::string::npos) << e.what();
  }
}

// A method whose state is not [q; u]: x = [u; q; s] with s = t integrated alongside (ẋ = 1),
// wrapping another formulation for the dynamics. Its Simulator integrates x and writes the joint
// columns through to_joint() only.
class ReorderedState final : public Formulation {
 public:
  ReorderedState(const Model& model, Formulation& inner)
      : Formulation(model), inner_(inner), dx_(model.nq + model.nv) {}
  std::string_view name() const override { return "reordered"; }
  void accelerations(double t, const VecX& q, const VecX& u, Eigen::Ref<VecX> udot) override {
    inner_.accelerations(t, q, u, udot);
  }
  Coordinates coordinates() const override { return Coordinates::absolute; }
  int state_size() const override { return model_.nq + model_.nv + 1; }
  void to_state(const VecX& q, const VecX& u, Eigen::Ref<VecX> x) const override {
    VecX inner(model_.nq + model_.nv);
    inner_.to_state(q, u, inner);
    x << inner.tail(model_.nv), inner.head(model_.nq), 0.0;
  }
  void derivative(double t, const VecX& x, Eigen::Ref<VecX> dx) override {
    inner_.derivative(t, joint_layout(x), dx_);
    dx << dx_.tail(model_.nv), dx_.head(model_.nq), 1.0;
  }
  void accept(double t, Eigen::Ref<VecX> x) override { pass(t, x, &Formulation::accept); }
  void complete(double t, Eigen::Ref<VecX> x) override { pass(t, x, &Formulation::complete); }
  void to_joint(const VecX& x, Eigen::Ref<VecX> q, Eigen::Ref<VecX> u) const override {
    q = x.segment(model_.nv, model_.nq);
    u = x.head(model_.nv);
  }

 private:
  VecX joint_layout(const VecX& x) const {
    VecX j(model_.nq + model_.nv);
    j << x.segment(model_.nv, model_.nq), x.head(model_.nv);
    return j;
  }
  void pass(double t, Eigen::Ref<VecX> x, void (Formulation::*step)(double, Eigen::Ref<VecX>)) {
    VecX j = joint_layout(x);
    (inner_.*step)(t, j);
    x.head(model_.nv) = j.tail(model_.nv);
    x.segment(model_.nv, model_.nq) = j.head(model_.nq);
  }
  Formulation& inner_;
  VecX dx_;
};

// The Simulator assumes nothing of a method's state: gcp (whose completion overwrites the
// dependent coordinates of every stage, accepted and output state) integrated as [u; q; t] gives
// the rows of gcp integrated as [q; u], bit for bit (rk4 combines the components one by one with
// the same arithmetic in both layouts), with and without the projection of every accepted step
// (which projects the joint state and maps it back into the method's layout).
TEST(Simulator, AMethodOwnsItsStateLayout) {
  const Model m = test::load_model("fourbar_anderson");
  for (bool project : {false, true}) {
    SimulationSettings s = fixed_step_settings(0.05, 0.01);
    s.project = project;
    auto direct = make_formulation("gcp", m);
    const Trajectory a = Simulator(m, *direct, s).run(m.q0, m.u0);
    auto inner = make_formulation("gcp", m);
    ReorderedState reordered(m, *inner);
    const Trajectory b = Simulator(m, reordered, s).run(m.q0, m.u0);
    EXPECT_EQ(b.columns, a.columns);
    ASSERT_EQ(b.rows.size(), a.rows.size());
    for (std::size_t r = 0; r < a.rows.size(); ++r) EXPECT_EQ(b.rows[r], a.rows[r]) << "row " << r << ", " << project;
    EXPECT_EQ(b.projection.calls, a.projection.calls);
  }
}

// A method as another, but through a derivative() of its own: Formulation::evaluated_at is false,
// so dopri5 evaluates again at every accepted state its method moved (the refresh before
// 2026-11-30).
class Refreshed final : public Formulation {
 public:
  Refreshed(const Model& model, Formulation& inner) : Formulation(model), inner_(inner) {}
  std::string_view name() const override { return inner_.name(); }  // the method's scope (drives)
  void accelerations(double t, const VecX& q, const VecX& u, Eigen::Ref<VecX> udot) override {
    inner_.accelerations(t, q, u, udot);
  }
  void joint_accelerations(double t, const VecX& x, Eigen::Ref<VecX> udot) override {
    inner_.joint_accelerations(t, x, udot);
  }
  std::optional<double> applied_power() const override { return inner_.applied_power(); }
  const VecX& multipliers() const override { return inner_.multipliers(); }
  const Constraints& constraints() const override { return inner_.constraints(); }
  void derivative(double t, const VecX& x, Eigen::Ref<VecX> dx) override { inner_.derivative(t, x, dx); }
  void accept(double t, Eigen::Ref<VecX> x) override { inner_.accept(t, x); }
  void complete(double t, Eigen::Ref<VecX> x) override { inner_.complete(t, x); }

 private:
  Formulation& inner_;
};

// An accepted state that the method only completed is the state dopri5's last stage evaluated:
// that stage is the next step's first, bit for bit what evaluating again would give. The rows
// (completion, kinematics, Φ, Φ̇, energy, a drive's force) are those of the refreshing run bit for
// bit, with one evaluation fewer per accepted step: 1 + 6 per attempted step, where the refresh
// made one more per accepted step the method moved (all of them: its Newton moves q, or its
// velocity analysis u, by more than round-off).
TEST(Simulator, Dopri5KeepsTheLastStageWhereAcceptOnlyCompletesTheState) {
  for (const char* file : {"fourbar_anderson", "fourbar_spatial_park", "slider_crank_driven"})
    for (const char* method : {"embedding", "gcp", "nullspace", "rcr"}) {
      const test::LoopState c = test::file_state(file);  // assembled as `loopdyn simulate` does
      const Model& m = c.model;
      SimulationSettings s;
      s.integrator.kind = IntegratorKind::dopri5;  // as `loopdyn simulate` runs
      s.integrator.rtol = 1e-8;
      s.integrator.atol = 1e-10;
      s.t_end = 0.5;
      if (!method_info(method).scope_problem(m, c.q).empty()) continue;
      auto direct = make_formulation(method, m);
      const Trajectory a = Simulator(m, *direct, s).run(c.q, c.u);
      auto inner = make_formulation(method, m);
      Refreshed refreshed(m, *inner);
      const Trajectory b = Simulator(m, refreshed, s).run(c.q, c.u);
      const IntegrationStats& k = a.stats;
      SCOPED_TRACE(std::string(file) + ", " + method);
      EXPECT_EQ(k.rhs_evaluations, 1 + 6 * (k.steps_accepted + k.steps_rejected));
      EXPECT_EQ(b.stats.rhs_evaluations, k.rhs_evaluations + k.steps_accepted);
      ASSERT_EQ(b.rows.size(), a.rows.size());
      for (std::size_t r = 0; r < a.rows.size(); ++r) EXPECT_EQ(b.rows[r], a.rows[r]) << "row " << r;
    }
}

// `auto`'s choice surveys the change points from the start state when an aggregated body is
// large (method_choice.hpp); the run takes that survey instead of walking the curve again, but only
// from the same start: from another the survey is its own.
TEST(Simulator, TakesTheChoicesSurveyFromTheSameStartOnly) {
  const Model m = Model::build(nfourbar_mechanism(6));  // 13 speeds in one aggregated body: surveyed
  const StartState s = start_state(m, m.q0, m.u0, true);
  const MethodChoice choice = default_method(m, s.q, s.u);
  ASSERT_TRUE(choice.survey);
  EXPECT_EQ(choice.survey->q0, s.q);
  EXPECT_EQ(choice.survey->u0, s.u);  // the energy of the start state bounds the walk
  ASSERT_TRUE(choice.survey->survey.walked);
  SimulationSettings settings;
  settings.t_end = 0.01;
  const auto run = [&](const SurveyedStart* told, const VecX& u) {
    auto f = make_formulation(choice.method, m);
    Simulator sim(m, *f, settings);
    if (told) sim.use_survey(*told);
    return sim.run(s.q, u).change_points;
  };
  const ChangePointSurvey own = run(nullptr, s.u);
  EXPECT_EQ(own.steps, choice.survey->survey.steps);
  EXPECT_EQ(own.points.size(), choice.survey->survey.points.size());
  SurveyedStart marked = *choice.survey;
  marked.survey.steps = -7;  // no walk takes -7 steps: seen only where the told survey is taken
  EXPECT_EQ(run(&marked, s.u).steps, -7);
  const VecX slower = 0.5 * s.u;  // still closes the loops (G u = 0 is linear), less energy
  const ChangePointSurvey other = run(&marked, slower);
  EXPECT_EQ(other.steps, survey_change_points(m, m.loops().constraints, s.q, slower).steps);
}

// Only the singularity guard's stop leaves a continuation (RunContinuation): its state, after the
// rows written, closes the loops as an accepted state does; a method that cannot cross singular
// configurations taking it over is guarded against the run's start and stopped again at once; dca
// goes on from it into the same rows, on the same grid. A stop of any other kind (here the progress
// callback's, in a new run of the same Simulator) leaves none.
TEST(Simulator, GoesOnOnlyFromTheGuardsStop) {
  const Model m = Model::build(square_chain_mechanism(3));  // flat squares from t = 0.489
  SimulationSettings settings;
  settings.t_end = 0.6;
  auto embedding = make_formulation("embedding", m);
  Simulator guarded(m, *embedding, settings);
  Trajectory traj;
  EXPECT_THROW(guarded.run(m.q0, m.u0, traj), SingularConfigurationError);
  ASSERT_TRUE(guarded.continuation());
  const RunContinuation c = *guarded.continuation();
  EXPECT_GT(c.t, traj.rows.back()(0));
  EXPECT_LT(c.t, traj.rows.back()(0) + settings.output_dt);
  KinematicsData kin(m);
  update_positions(m, kin, c.q);
  ConstraintData data(m);
  VecX phi(m.loops().constraints.rows());
  constraint_position(m, m.loops().constraints, kin, c.t, data, phi);
  EXPECT_LT(phi.cwiseAbs().maxCoeff(), 1e-12);  // completed by position analysis: round-off

  auto again = make_formulation("embedding", m);
  Simulator stopped_again(m, *again, settings);
  ASSERT_TRUE(stopped_again.can_resume(c, traj));
  Trajectory copy = traj;
  stopped_again.resume(c, copy);
  EXPECT_THROW(stopped_again.advance(settings.t_end, copy), SingularConfigurationError);
  EXPECT_LT(stopped_again.continuation()->t, c.t + 0.01);
  EXPECT_LT(copy.rows.back()(0), c.t + 0.01);

  auto dca = make_formulation("dca", m);
  SimulationSettings diagnostics = settings;
  diagnostics.diagnostics = true;  // dca's own columns
  EXPECT_FALSE(Simulator(m, *dca, diagnostics).can_resume(c, traj));
  EXPECT_THROW(Simulator(m, *dca, diagnostics).resume(c, traj), std::invalid_argument);
  Simulator goes_on(m, *dca, settings);
  ASSERT_TRUE(goes_on.can_resume(c, traj));
  const std::size_t before = traj.rows.size();
  goes_on.resume(c, traj);
  EXPECT_EQ(traj.rows.size(), before);  // no row at the hand-over, which is not an output time
  // A piece that ends where it resumed still writes its end's row (a hand-over at a run's last
  // step: 3a6946b ended such a run "completed" one row short, the comb ladder at t = 9.99 of 10).
  Trajectory ends_there = traj;
  goes_on.advance(c.t, ends_there);
  ASSERT_EQ(ends_there.rows.size(), before + 1);
  EXPECT_EQ(ends_there.rows.back()(0), c.t);
  EXPECT_LT((ends_there.rows.back().segment(1, m.nq) - c.q).cwiseAbs().maxCoeff(), 1e-12);
  goes_on.resume(c, traj);
  goes_on.advance(settings.t_end, traj);
  const std::vector<double> times = output_times(settings.t_end, settings.output_dt);
  ASSERT_EQ(traj.rows.size(), times.size());
  for (std::size_t k = 0; k < times.size(); ++k) EXPECT_EQ(traj.rows[k](0), times[k]) << k;
  EXPECT_FALSE(goes_on.continuation());

  // The guarded Simulator again, stopped before the guard would.
  EXPECT_THROW(guarded.run(m.q0, m.u0, traj,
                           [](double t) {
                             if (t > 0.1) throw std::runtime_error("stop");
                           }),
               std::runtime_error);
  EXPECT_FALSE(guarded.continuation());
}

// accept() of the state the last evaluation started from (dopri5's last stage is at the accepted
// state) takes that evaluation's completion (the partition's analysis, rcr's reduction): bit for
// bit what the same method computes for a state it never saw; a state one bit away is analysed.
TEST(Simulator, AcceptReusesTheLastEvaluationsCompletionBitForBit) {
  const test::LoopState c = test::file_state("fourbar_spatial_park");
  const Model& m = c.model;
  VecX x(m.nq + m.nv), dx(m.nq + m.nv);
  x << c.q, c.u;
  x.head(m.nq) += VecX::LinSpaced(m.nq, 1e-5, 2e-5);  // off the loops: Newton has work to do
  x.tail(m.nv) += VecX::LinSpaced(m.nv, 1e-3, -1e-3);
  VecX other = x;
  other(0) = std::nextafter(other(0), 1.0);
  for (const char* method : {"embedding", "gcp", "nullspace", "rcr"}) {
    SCOPED_TRACE(method);
    for (const VecX* accepted : {&x, &other}) {
      auto used = make_formulation(method, m);
      used->derivative(0.25, x, dx);
      VecX a = *accepted, b = *accepted;
      used->accept(0.25, a);
      make_formulation(method, m)->accept(0.25, b);
      EXPECT_EQ(a, b);
      EXPECT_NE(a, *accepted);  // it completed the state
    }
  }
}

// A method in absolute coordinates, as srm and dca will be: x holds per body its world position,
// the unit quaternion [w, x, y, z] of its rotation and its spatial velocity in body axes (13
// numbers). The dynamics are the tree's, at the joint state of x (joint_state), carried to the
// bodies: ṗ = R v_O, quaternion rate of ω, and d/dt of the body-axes velocity = the spatial
// acceleration (its derivative term −v × v vanishes). Output reads x's joint coordinates through
// each joint type's inverse kinematics, continuous from the last accepted state.
class AbsoluteTree final : public Formulation {
 public:
  explicit AbsoluteTree(const Model& model)
      : Formulation(model), tree_(model), kin_(model), q_(model.nq), u_(model.nv), udot_(model.nv), near_(model.q0) {}
  std::string_view name() const override { return "absolute-tree"; }
  void accelerations(double t, const VecX& q, const VecX& u, Eigen::Ref<VecX> udot) override {
    tree_.accelerations(t, q, u, udot);
  }
  Coordinates coordinates() const override { return Coordinates::absolute; }
  int state_size() const override { return 13 * model_.nbodies; }
  void to_state(const VecX& q, const VecX& u, Eigen::Ref<VecX> x) const override {
    BodyState s;
    body_state(model_, q, u, s);
    for (int i = 0; i < model_.nbodies; ++i) {
      const Quat r(s.pose[i].R);
      x.segment<13>(13 * i) << s.pose[i].p, r.w(), r.x(), r.y(), r.z(), s.velocity[i];
    }
  }
  void derivative(double t, const VecX& x, Eigen::Ref<VecX> dx) override {
    to_joint(x, q_, u_);
    tree_.accelerations(t, q_, u_, udot_);
    update_positions(model_, kin_, q_);
    update_velocities(model_, kin_, q_, u_);
    body_accelerations(model_, kin_, udot_, a_);
    for (int i = 0; i < model_.nbodies; ++i) {
      const double* quat = x.data() + 13 * i + 3;
      const Vec6 v = x.segment<6>(13 * i + 7);
      dx.segment<3>(13 * i) = detail::quaternion_matrix(quat) * v.tail<3>();
      detail::quaternion_rate(quat, v.head<3>(), dx.data() + 13 * i + 3);
      dx.segment<6>(13 * i + 7) = a_[i];
    }
  }
  void accept(double, Eigen::Ref<VecX> x) override {
    for (int i = 0; i < model_.nbodies; ++i) detail::normalize_quaternion(x.data() + 13 * i + 3);
    to_joint(x, q_, u_);
    near_ = q_;
  }
  void complete(double, Eigen::Ref<VecX>) override {}
  void to_joint(const VecX& x, Eigen::Ref<VecX> q, Eigen::Ref<VecX> u) const override {
    BodyState s;
    for (int i = 0; i < model_.nbodies; ++i) {
      s.pose.push_back({detail::quaternion_matrix(x.data() + 13 * i + 3), x.segment<3>(13 * i)});
      s.velocity.push_back(x.segment<6>(13 * i + 7));
    }
    VecX qj, uj;
    joint_state(model_, s, near_, qj, uj);
    q = qj;
    u = uj;
  }

 private:
  TreeFormulation tree_;
  KinematicsData kin_;
  std::vector<Vec6> a_;
  VecX q_, u_, udot_, near_;
};

// The joint columns of a method in absolute coordinates are those of the joint method: the tree
// with every joint type (revolute, planar, prismatic, cylindrical, universal, spherical, fixed,
// free, and its force elements) integrated in body coordinates writes the columns of `tree` to
// the integration error. rk4 at 1e-3 s over 0.5 s: the two ODEs differ, and their global errors,
// O(h⁴) times the fourth derivatives of the motion, measure below 1e-10 in every column; 1e-8
// leaves a factor 100, where a wrong joint map (a sign, a frame, a branch) gives errors of order one.
TEST(Simulator, AnAbsoluteCoordinateMethodWritesTheJointColumns) {
  const Model m = test::load_model("chain3d_all_joints");
  SimulationSettings s = fixed_step_settings(0.5, 0.05);
  TreeFormulation tree(m);
  const Trajectory a = Simulator(m, tree, s).run(m.q0, m.u0);
  AbsoluteTree absolute(m);
  const Trajectory b = Simulator(m, absolute, s).run(m.q0, m.u0);
  ASSERT_EQ(b.columns, a.columns);
  ASSERT_EQ(b.rows.size(), a.rows.size());
  double moved = 0.0;
  for (std::size_t r = 0; r < a.rows.size(); ++r) {
    EXPECT_LT((b.rows[r] - a.rows[r]).cwiseAbs().maxCoeff(), 1e-8) << "row " << r;
    moved = std::max(moved, (a.rows[r] - a.rows[0]).segment(1, m.nq).cwiseAbs().maxCoeff());
  }
  EXPECT_GT(moved, 0.1);  // the comparison is of a motion, not of a state at rest
}

}  // namespace
}  // namespace loopdyn
