// Links against one layer (and what it depends on) alone: a layer whose code reached into a higher
// one would leave undefined symbols here (tests/CMakeLists.txt builds it once per layer; the
// include direction is scripts/check_layers.py's). Simulates a pendulum for 0.1 s through the
// highest part of the layer and prints its angle.
#include <cstdio>

#include "loopdyn/core/mechanism.hpp"
#include "loopdyn/core/model.hpp"
#if LOOPDYN_LAYER >= 2
#include "loopdyn/formulations/registry.hpp"
#endif
#if LOOPDYN_LAYER >= 3
#include "loopdyn/run/run.hpp"
#endif

int main() {
  using namespace loopdyn;
  Mechanism m;
  m.gravity = Vec3(0, 0, -9.81);
  BodySpec body;
  body.name = "bob";
  body.mass = 1.0;
  body.com = Vec3(1, 0, 0);
  body.inertia = Mat3::Identity() * 1e-3;
  m.bodies.push_back(body);
  JointSpec pin;
  pin.name = "pin";
  pin.type = JointType::revolute;
  pin.parent = std::string(ground_name);
  pin.child = "bob";
  pin.axis = Vec3::UnitY();
  m.joints.push_back(pin);
  const Model model = Model::build(m);  // loops: the loop structure (none here)
#if LOOPDYN_LAYER == 1
  std::printf("loops: model with %d bodies and %d loop joints\n", model.nbodies, int(model.loop_joints.size()));
#elif LOOPDYN_LAYER == 2
  const auto tree = make_formulation("tree", model);
  VecX udot(model.nv);
  tree->accelerations(0.0, model.q0, model.u0, udot);
  std::printf("formulations: tree u' = %.6f\n", udot(0));
#else
  RunSettings settings;
  settings.simulation.t_end = 0.1;
  const RunResult result = run(model, model.q0, model.u0, settings);
  std::printf("run: %s, %d rows, angle %.6f\n", result.method.c_str(), int(result.trajectory.rows.size()),
              result.trajectory.rows.back()(1));
#endif
  return 0;
}
