// A double pendulum built in C++, simulated for 2 s by the library's default run (run.hpp: method
// auto, dopri5 at rtol 1e-8, the run watch on); prints the final angles and energy.
#include <cstdio>

#include "loopdyn/run/run.hpp"

int main() {
  using namespace loopdyn;
  Mechanism mech;
  mech.name = "pendulum2";
  const Mat3 rod = Vec3(1.0 / 12, 1.0 / 12, 1e-4).asDiagonal();  // 1 kg, 1 m rods along -z
  mech.add_body("upper", 1.0, Vec3(0, 0, -0.5), rod);
  mech.add_body("lower", 1.0, Vec3(0, 0, -0.5), rod);
  mech.add_joint("shoulder", JointType::revolute, "ground", "upper").axis = Vec3::UnitY();
  JointSpec& elbow = mech.add_joint("elbow", JointType::revolute, "upper", "lower",
                                    Transform::translation(Vec3(0, 0, -1)));
  elbow.axis = Vec3::UnitY();
  elbow.q = {0.5};

  const Model model = Model::build(mech);  // validated, immutable
  RunSettings settings;
  settings.simulation.t_end = 2.0;
  const RunResult result = run(model, model.q0, model.u0, settings);
  if (!result.completed()) {
    std::fprintf(stderr, "stopped: %s\n", result.stop.message.c_str());
    return 1;
  }
  const Trajectory& traj = result.trajectory;

  const std::size_t last = traj.rows.size() - 1;
  std::printf("t = %.2f  shoulder = %.6f  elbow = %.6f  energy = %.9f (start %.9f)\n", traj.at(last, "t"),
              traj.at(last, "q.shoulder"), traj.at(last, "q.elbow"), traj.at(last, "energy"), traj.at(0, "energy"));
  return 0;
}
