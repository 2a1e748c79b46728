// Simulator: output times, recorded columns, CSV output, a formulation's own state layout.
#include <sstream>

#include "loopdyn/formulation.hpp"
#include "loopdyn/formulations/tree.hpp"
#include "loopdyn/io/csv.hpp"
#include "loopdyn/simulator.hpp"
#include "test_support.hpp"

namespace loopdyn {
namespace {

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
  SimulationSettings s;
  s.integrator.kind = IntegratorKind::rk4;
  s.integrator.dt = 1e-3;
  s.t_end = 0.05;
  s.output_dt = 0.01;
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

TEST(Simulator, WrongInitialStateSizeIsAnError) {
  const Model m = Model::build(test::random_tree(6, 2));
  TreeFormulation tree(m);
  Simulator sim(m, tree, SimulationSettings{});
  EXPECT_THROW(sim.run(VecX::Zero(m.nq + 1), m.u0), std::invalid_argument);
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
// the same arithmetic in both layouts).
TEST(Simulator, AMethodOwnsItsStateLayout) {
  const Model m = test::load_model("fourbar_anderson");
  SimulationSettings s;
  s.integrator.kind = IntegratorKind::rk4;
  s.integrator.dt = 1e-3;
  s.t_end = 0.05;
  s.output_dt = 0.01;
  auto direct = make_formulation("gcp", m);
  const Trajectory a = Simulator(m, *direct, s).run(m.q0, m.u0);
  auto inner = make_formulation("gcp", m);
  ReorderedState reordered(m, *inner);
  const Trajectory b = Simulator(m, reordered, s).run(m.q0, m.u0);
  EXPECT_EQ(b.columns, a.columns);
  ASSERT_EQ(b.rows.size(), a.rows.size());
  for (std::size_t r = 0; r < a.rows.size(); ++r) EXPECT_EQ(b.rows[r], a.rows[r]) << "row " << r;
  // Projection is of joint coordinates: refused for a method that integrates others.
  s.project = true;
  EXPECT_THROW(Simulator(m, reordered, s), std::invalid_argument);
}

}  // namespace
}  // namespace loopdyn
