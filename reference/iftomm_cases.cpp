// IFToMM benchmark cases and references (iftomm_cases.hpp).
#include "iftomm_cases.hpp"

#include <algorithm>
#include <cmath>

#include "absolute_coordinates.hpp"
#include "loopdyn/iftomm.hpp"
#include "loopdyn/io/model_file.hpp"
#include "loopdyn/kinematics.hpp"

namespace loopdyn::reference {

namespace {

double weight(const Mechanism& m) {
  double total = 0.0;
  for (const BodySpec& b : m.bodies) total += b.mass;
  return total * m.gravity.norm();
}

}  // namespace

std::vector<BodyState> initial_bodies(const Mechanism& m) {
  const Model model = Model::build(m);
  KinematicsData kin(model);
  update_positions(model, kin, model.q0);
  update_velocities(model, kin, model.q0, model.u0);
  std::vector<BodyState> s(m.bodies.size());
  for (int i = 0; i < model.nbodies; ++i) {
    BodyState& b = s[model.mechanism_body[i]];
    const Transform& X = kin.X_world[i];
    b.r = X.apply(model.com[i]);
    b.p = Eigen::Quaterniond(X.R);
    b.v = point_velocity(kin, i, model.com[i]);
    b.w = X.R * kin.v[i].head<3>();
  }
  return s;
}

BenchmarkCase a02_case(int n, double t_end) {
  BenchmarkCase c;
  c.name = "A02 N-four-bar, N = " + std::to_string(n);
  c.mechanism = nfourbar_mechanism(n);
  c.t_end = t_end;
  c.output_dt = 0.05;  // the benchmark's 400 output steps over 20 s
  c.marker = "B0";
  c.energy_scale = weight(c.mechanism);
  c.reference = [n](const std::vector<double>& t) {
    std::vector<Vec3> out;
    for (const PendulumSample& s : nfourbar_exact(n, t)) out.emplace_back(std::cos(s.theta), std::sin(s.theta), 0.0);
    return out;
  };
  return c;
}

BenchmarkCase a04_case(const std::string& models_dir, double t_end, double h) {
  BenchmarkCase c;
  c.name = "A04 Bricard";
  c.mechanism = load_mechanism(models_dir + "/iftomm_a04_bricard.yaml");
  c.t_end = t_end;
  c.output_dt = 0.025;  // 400 output steps over 10 s
  c.marker = "P3";
  c.energy_scale = weight(c.mechanism);
  const Mechanism m = c.mechanism;
  c.reference = [m, h](const std::vector<double>& t) {
    const AbsoluteCoordinates ref(m);
    std::vector<BodyState> s = initial_bodies(m);
    const MarkerSpec& p3 = *std::find_if(m.markers.begin(), m.markers.end(), [](const MarkerSpec& k) { return k.name == "P3"; });
    const int body = ref.body(p3.body);
    std::vector<Vec3> out;
    double now = 0.0;
    for (double target : t) {
      ref.advance(s, now, target, h);
      now = target;
      out.push_back(ref.point(s, body, p3.point));
    }
    return out;
  };
  return c;
}

Trajectory simulate_case(const BenchmarkCase& c, const Model& model, Formulation& f) {
  SimulationSettings s;
  s.integrator.kind = IntegratorKind::dopri5;
  s.integrator.rtol = s.integrator.atol = 1e-10;
  s.t_end = c.t_end;
  s.output_dt = c.output_dt;
  Simulator sim(model, f, s);
  return sim.run(model.q0, model.u0);
}

}  // namespace loopdyn::reference
