// IFToMM benchmark cases and references (iftomm_cases.hpp).
#include "iftomm_cases.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <variant>

#include "absolute_coordinates.hpp"
#include "andrews.hpp"
#include "loopdyn/mechanisms/iftomm.hpp"
#include "loopdyn/io/model_file.hpp"
#include "loopdyn/core/kinematics.hpp"
#include "loopdyn/run/integrators.hpp"

namespace loopdyn::reference {

double weight(const Mechanism& m) {
  double total = 0.0;
  for (const BodySpec& b : m.bodies) total += b.mass;
  return total * m.gravity.norm();
}

namespace {

// A case whose reference is the absolute-coordinate solution (absolute_coordinates.hpp) from the
// model's initial state with RK4 step h; energy scale total weight × 1 m. Output every 0.025 s
// unless said otherwise: 400 output steps over 10 s (A04's and paper 004's length).
BenchmarkCase absolute_case(const std::string& name, const std::string& path, const std::string& marker,
                            double t_end, double h, double output_dt = 0.025) {
  BenchmarkCase c;
  c.name = name;
  c.mechanism = load_mechanism(path);
  c.t_end = t_end;
  c.output_dt = output_dt;
  c.marker = marker;
  c.energy_scale = weight(c.mechanism);
  const Mechanism m = c.mechanism;
  c.reference = [m, marker, h](const std::vector<double>& t) {
    const AbsoluteCoordinates ref(m);
    State s = ref.start(initial_bodies(m));
    const MarkerSpec& p = *std::find_if(m.markers.begin(), m.markers.end(), [&](const MarkerSpec& k) { return k.name == marker; });
    const int body = ref.body(p.body);
    std::vector<Vec3> out;
    double now = 0.0;
    for (double target : t) {
      ref.advance(s, now, target, h);
      now = target;
      out.push_back(ref.point(s.bodies, body, p.point));
    }
    return out;
  };
  return c;
}

// Paper 001 §4.2 case I on its parallelogram branch (park_parallelogram_exact, iftomm_cases.hpp):
// m1, m2, m3 = 5, 7, 9 kg, J1, J3 = 10, 25 kg m², a1 = a3 = 1 m, l = a1 + b1 = 2 m, K = 100 N m/rad,
// θs = 0.524 rad, Fp = (80, 70) N, θ(0) = 1.074 rad; g = 9.81 m/s² along −y (the model's choice).
constexpr double kParkLink = 2.0;
constexpr double kParkInertia = 10.0 + 5.0 * 1.0 + 7.0 * kParkLink * kParkLink + 25.0 + 9.0 * 1.0;
constexpr double kParkStiffness = 100.0, kParkRest = 0.524, kParkTheta0 = 1.074;
// P = (m1 a1 + m3 a3) g + l (m2 g + Fp) with g = (0, −9.81).
const Eigen::Vector2d kParkPull(kParkLink * 80.0, -9.81 * (5.0 * 1.0 + 9.0 * 1.0 + kParkLink * 7.0) + kParkLink * 70.0);

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

BenchmarkCase a03_case(const std::string& models_dir, double t_end, double h) {
  return {
      .name = "A03 Andrews' squeezer",
      .mechanism = load_mechanism(models_dir + "/iftomm_a03_andrews.yaml"),
      .t_end = t_end,
      .output_dt = 3e-4,  // 100 output steps over the benchmark's 0.03 s
      .marker = "F",
      // No weight to scale by: the spring's energy at release, ½ c0 (L − l0)² = 1.436 J, which the
      // motion turns into kinetic energy together with the torque's work (0.524 J over 0.03 s).
      .energy_scale = andrews::energy(andrews::initial_state()),
      .reference =
          [h](const std::vector<double>& t) {
            andrews::State s = andrews::initial_state();
            std::vector<Vec3> out;
            double now = 0.0;
            for (double target : t) {
              andrews::advance(s, now, target, h);
              now = target;
              out.push_back(andrews::crank_tip(s.q));
            }
            return out;
          },
  };
}

BenchmarkCase a04_case(const std::string& models_dir, double t_end, double h) {
  return absolute_case("A04 Bricard", models_dir + "/iftomm_a04_bricard.yaml", "P3", t_end, h);
}

BenchmarkCase a05_case(const std::string& models_dir, double t_end, double h) {
  return absolute_case("A05 stiff flyball governor", models_dir + "/iftomm_a05_flyball.yaml", "slider", t_end, h,
                       0.01);
}

BenchmarkCase fivebar_case(const std::string& models_dir, double t_end, double h) {
  return absolute_case("Five-bar (paper 004)", models_dir + "/fivebar_malczyk.yaml", "apex3", t_end, h);
}

BenchmarkCase doubleloop_case(const std::string& models_dir, double t_end, double h) {
  return absolute_case("Double loop (paper 004)", models_dir + "/doubleloop_malczyk.yaml", "lower_apex2", t_end, h);
}

std::vector<PendulumSample> park_parallelogram_exact(const std::vector<double>& t_out, double h) {
  // U′(θ) = K (θ − θs) + Px sin θ − Py cos θ (iftomm_cases.hpp); released from rest.
  auto accel = [](double theta) {
    return -(kParkStiffness * (theta - kParkRest) + kParkPull.x() * std::sin(theta) - kParkPull.y() * std::cos(theta)) /
           kParkInertia;
  };
  return integrate_pendulum(accel, {kParkTheta0, 0.0}, t_out, h);
}

double park_parallelogram_energy(const PendulumSample& s) {
  const double spring = 0.5 * kParkStiffness * (s.theta - kParkRest) * (s.theta - kParkRest);
  return 0.5 * kParkInertia * s.theta_dot * s.theta_dot + spring -
         kParkPull.dot(Eigen::Vector2d(std::cos(s.theta), std::sin(s.theta)));
}

BenchmarkCase park_singular_case(const std::string& models_dir, double t_end, double h) {
  BenchmarkCase c;
  c.name = "Singular four-bar (paper 001, case I)";
  c.mechanism = load_mechanism(models_dir + "/fourbar_park_singular.yaml");
  c.t_end = t_end;
  c.output_dt = 0.01;  // 1000 output rows over the paper's 10 s: every passage is seen from 0.01 s away
  c.marker = "link2_com";
  c.energy_scale = weight(c.mechanism);
  c.reference = [h](const std::vector<double>& t) {
    // Link 2 translates, horizontal: its mass centre a2 = 1 m along x from the crank tip.
    std::vector<Vec3> out;
    for (const PendulumSample& s : park_parallelogram_exact(t, h))
      out.emplace_back(kParkLink * std::cos(s.theta) + 1.0, kParkLink * std::sin(s.theta), 0.0);
    return out;
  };
  return c;
}

double energy_drift(const Mechanism& m, const Trajectory& traj, std::size_t k) {
  const int e = traj.column("energy");
  double drift = traj.rows[k](e) - traj.rows[0](e);
  for (const ForceSpec& f : m.forces) {
    if (const auto* bf = std::get_if<BodyForceSpec>(&f.element)) {
      const auto at = std::find_if(m.markers.begin(), m.markers.end(), [&](const MarkerSpec& p) {
        return p.body == bf->body && p.point == bf->point;
      });
      if (at == m.markers.end())
        throw std::invalid_argument("energy_drift: no marker at the point of the body_force on '" + bf->body + "'");
      const int x = traj.column(at->name + ".x");
      drift -= bf->force.dot(traj.rows[k].segment<3>(x) - traj.rows[0].segment<3>(x));
      continue;
    }
    const auto* jf = std::get_if<JointForceSpec>(&f.element);
    if (!jf) continue;
    if (jf->value.size() != 1)
      throw std::invalid_argument("energy_drift: joint_force on '" + jf->joint + "' has more than one value");
    const int q = traj.column("q." + jf->joint);
    drift -= jf->value[0] * (traj.rows[k](q) - traj.rows[0](q));
  }
  return drift;
}

IntegratorSettings dopri5_at(double tolerance) {
  IntegratorSettings integrator;
  integrator.kind = IntegratorKind::dopri5;
  integrator.rtol = integrator.atol = tolerance;
  return integrator;
}

IntegratorSettings fixed_step_integrator(const BenchmarkCase& c, double steps) {
  IntegratorSettings integrator;
  integrator.kind = IntegratorKind::rk4;
  integrator.dt = c.t_end / steps;
  return integrator;
}

Trajectory simulate_case(const BenchmarkCase& c, const Model& model, Formulation& f,
                         const IntegratorSettings& integrator) {
  SimulationSettings s;
  s.integrator = integrator;
  s.t_end = c.t_end;
  s.output_dt = c.output_dt;
  Simulator sim(model, f, s);
  return sim.run(model.q0, model.u0);
}

}  // namespace loopdyn::reference
