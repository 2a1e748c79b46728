// Simulator: output times, recorded columns, CSV output.
#include <sstream>

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

}  // namespace
}  // namespace loopdyn
