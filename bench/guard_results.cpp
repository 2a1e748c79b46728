// Singular configurations that no survey predicts: paper 003's square chain (3 squares) and net
// (2 x 2), whose loops leave 4 degrees of freedom and which, hanging under gravity, pass nearly
// flat squares again and again. Prints for docs/results.md (bench/run_results.sh):
//  * the passages: local minima of the SingularityGuard's ρ/ρ(q0) below kGuardNear along dca's
//    run (dopri5 1e-10, rows every 1e-3 s);
//  * every loop method against the absolute-coordinate reference (reference/absolute_coordinates,
//    RK4 with projections, no code shared with the formulations) over 2 s: with its defaults (the
//    guard on: where it stops) and told to go on (`--on-singular continue`: the largest error at
//    a body's centre of mass and the first output time where it exceeds 1e-6 m).
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "absolute_coordinates.hpp"
#include "iftomm_cases.hpp"
#include "loopdyn/loops/change_points.hpp"
#include "loopdyn/formulations/formulation.hpp"
#include "loopdyn/loops/loop_structure.hpp"
#include "loopdyn/run/simulator.hpp"
#include "loopdyn/mechanisms/square_nets.hpp"
#include "loopdyn/formulations/registry.hpp"

using namespace loopdyn;

namespace {

constexpr double kEnd = 2.0, kRow = 0.01, kFineRow = 1e-3;
constexpr double kReferenceStep = 1.25e-4;
constexpr double kFollow = 1e-6;  // m: issue 14's marker bound

struct Case {
  std::string name;
  Mechanism mechanism;
};

// Every body's centre of mass (mechanism order) at each output row of the reference.
std::vector<std::vector<Vec3>> reference_centres(const Mechanism& mech, double h) {
  const reference::AbsoluteCoordinates ref(mech);
  std::vector<reference::BodyState> s = reference::initial_bodies(mech);
  std::vector<std::vector<Vec3>> out;
  const std::vector<double> times = output_times(kEnd, kRow);
  double now = 0.0;
  for (double t : times) {
    ref.advance(s, now, t, h);
    now = t;
    std::vector<Vec3> row;
    for (const BodySpec& b : mech.bodies) row.push_back(ref.point(s, ref.body(b.name), b.com));
    out.push_back(std::move(row));
  }
  return out;
}

double largest_difference(const std::vector<Vec3>& a, const std::vector<Vec3>& b) {
  double worst = 0.0;
  for (std::size_t k = 0; k < a.size(); ++k) worst = std::max(worst, (a[k] - b[k]).norm());
  return worst;
}

SimulationSettings settings_for(const MethodInfo& info, double output_dt) {
  SimulationSettings s;
  if (info.fixed_step) {
    s.integrator.kind = IntegratorKind::rk2;
    s.integrator.dt = 2.5e-4;
  } else {
    s.integrator.kind = IntegratorKind::dopri5;
    s.integrator.rtol = s.integrator.atol = 1e-10;
  }
  s.t_end = kEnd;
  s.output_dt = output_dt;
  return s;
}

void passages(const Case& c) {
  const Model m = Model::build(c.mechanism);
  auto f = make_formulation("dca", m);
  const Trajectory traj = Simulator(m, *f, settings_for(method_info("dca"), kFineRow)).run(m.q0, m.u0);
  SingularityGuard guard(m, m.loops().constraints, m.q0);
  std::vector<double> rho;
  for (const VecX& row : traj.rows) rho.push_back(guard.relative_indicator(row.segment(1, m.nq)));
  std::printf("%s: nearly flat squares along dca's run (ρ/ρ(q0) at its local minima below %g, rows every %g s):",
              c.name.c_str(), kGuardNear, kFineRow);
  int count = 0;
  for (std::size_t k = 1; k + 1 < rho.size(); ++k)
    if (rho[k] < kGuardNear && rho[k] < rho[k - 1] && rho[k] <= rho[k + 1])
      std::printf("%s t = %.3f (%.2g)", count++ ? "," : "", traj.rows[k](0), rho[k]);
  std::printf(".\n\n");
}

void methods_table(const Case& c) {
  const Model m = Model::build(c.mechanism);
  const auto reference = reference_centres(c.mechanism, kReferenceStep);
  // RK4's error falls 16-fold when h halves: the reference's own error is about that of 2h / 15.
  const auto coarser = reference_centres(c.mechanism, 2.0 * kReferenceStep);
  double own = 0.0;
  for (std::size_t k = 0; k < reference.size(); ++k) own = std::max(own, largest_difference(reference[k], coarser[k]));
  std::printf("%s, %g s: reference RK4 at h = %g; at 2h it differs by %.2g m, so its own error is about %.1g m.\n\n",
              c.name.c_str(), kEnd, kReferenceStep, own, own / 15.0);
  std::printf("| method | integrator | defaults (guard on) | told to go on: largest error [m] | leaves 1e-6 m at t "
              "| energy change [J] | CPU [s] |\n|---|---|---|---:|---:|---:|---:|\n");
  for (const std::string& method : loop_methods()) {
    const MethodInfo& info = method_info(method);
    const std::string integrator = info.fixed_step ? "rk2, h = 2.5e-4" : "dopri5, 1e-10";
    if (const std::string why = info.scope_problem(m, m.q0); !why.empty()) {
      std::printf("| %s | %s | out of scope | | | | |\n", method.c_str(), integrator.c_str());
      continue;
    }
    std::string guarded = "passes";
    try {
      auto f = make_formulation(method, m);
      Simulator(m, *f, settings_for(info, kRow)).run(m.q0, m.u0);
    } catch (const SingularConfigurationError& e) {
      // "t = T: M stops: ..." (the guard) or "M: ... at t = T: ..." (the method's own check).
      const std::string what = e.what();
      const std::size_t at = what.find("t = ") + 4;
      const bool guard = what.find(" stops: the loops") != std::string::npos;
      guarded = "stops at t = " + what.substr(at, std::min<std::size_t>(5, what.find(':', at) - at)) +
                (guard ? " (guard)" : " (own check)");
    }
    FormulationSettings go_on;
    go_on.on_singular = FormulationSettings::OnSingular::proceed;
    SimulationSettings s = settings_for(info, kRow);
    s.guard_singular_configurations = false;
    auto f = make_formulation(method, m, go_on);
    const auto start = std::chrono::steady_clock::now();
    try {
      const Trajectory traj = Simulator(m, *f, s).run(m.q0, m.u0);
      const double cpu = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      KinematicsData kin(m);
      double worst = 0.0, leaves = -1.0;
      for (std::size_t row = 0; row < traj.rows.size(); ++row) {
        update_positions(m, kin, traj.rows[row].segment(1, m.nq));
        std::vector<Vec3> centres;
        for (const BodySpec& b : c.mechanism.bodies) centres.push_back(point_position(kin, m.body_index(b.name), b.com));
        const double e = largest_difference(centres, reference[row]);
        worst = std::max(worst, e);
        if (e > kFollow && leaves < 0.0) leaves = traj.rows[row](0);
      }
      const int energy = traj.column("energy");
      char left[16] = "-";
      if (leaves >= 0.0) std::snprintf(left, sizeof left, "%.2f", leaves);
      std::printf("| %s | %s | %s | %.2g | %s | %.2g | %.2f |\n", method.c_str(), integrator.c_str(), guarded.c_str(),
                  worst, left, traj.rows.back()(energy) - traj.rows.front()(energy), cpu);
    } catch (const std::runtime_error& e) {
      std::printf("| %s | %s | %s | failed: %.60s | | | |\n", method.c_str(), integrator.c_str(), guarded.c_str(),
                  e.what());
    }
  }
  std::printf("\n");
}

}  // namespace

int main() {
  const std::vector<Case> cases{{"Square chain, 3 squares", square_chain_mechanism(3)},
                                {"Square net, 2 x 2", square_net_mechanism(2, 2, 0.5)}};
  for (const Case& c : cases) passages(c);
  for (const Case& c : cases) methods_table(c);
  return 0;
}
