// The zoo's differential runs (zoo_runs.hpp).
#include "zoo_runs.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "absolute_coordinates.hpp"
#include "iftomm_cases.hpp"
#include "loopdyn/formulations/formulation.hpp"
#include "loopdyn/run/run.hpp"
#include "loopdyn/formulations/registry.hpp"

namespace loopdyn::reference {

namespace {

// Largest marker distance from the reference over the rows, markers in mechanism order.
double marker_error(const Mechanism& m, const Trajectory& traj, const ZooTruth& truth) {
  double worst = 0.0;
  for (std::size_t j = 0; j < m.markers.size(); ++j) {
    const int x = traj.column(m.markers[j].name + ".x");
    for (std::size_t k = 0; k < traj.rows.size(); ++k)
      worst = std::max(worst, (traj.rows[k].segment<3>(x) - truth.markers[k][j]).norm());
  }
  return worst;
}

// The balance E − W of the run against the reference's E(0): the energy column holds the springs'
// potential (forces.hpp) and the work column, present when the model has force elements, the
// work of the others (the dampers'), as the reference's energy() and State::work.
double energy_error(const Trajectory& traj, const ZooTruth& truth) {
  const int e = traj.column("energy");
  const bool forces = std::find(traj.columns.begin(), traj.columns.end(), "work") != traj.columns.end();
  const int w = forces ? traj.column("work") : -1;
  double worst = 0.0;
  for (const VecX& row : traj.rows) worst = std::max(worst, std::abs(row(e) - (forces ? row(w) : 0.0) - truth.energy));
  return worst / truth.energy_scale;
}

ZooRun judge(const Mechanism& m, const Trajectory& traj, const ZooTruth& truth, const ZooBounds& bounds) {
  ZooRun r;
  if (traj.rows.size() != truth.t.size()) {
    r.message = "the run ended after " + std::to_string(traj.rows.size()) + " of " + std::to_string(truth.t.size()) +
                " output rows without an error";
    return r;
  }
  r.marker_error = marker_error(m, traj, truth);
  r.energy_error = energy_error(traj, truth);
  // NaN errors fail both comparisons: a run that went non-finite without an error is wrong.
  if (r.marker_error <= bounds.marker && r.energy_error <= bounds.energy) r.outcome = ZooOutcome::pass;
  else r.message = "completed off the reference";
  return r;
}

// A run without errors to report: refused, or wrong without completing.
ZooRun outcome(ZooOutcome kind, std::string message) {
  ZooRun r;
  r.outcome = kind;
  r.message = std::move(message);
  return r;
}

}  // namespace

ZooTruth zoo_truth(const Mechanism& m, double t_end, double output_dt, double h) {
  const AbsoluteCoordinates ref(m);
  State s = ref.start(initial_bodies(m));
  ZooTruth truth;
  truth.t = output_times(t_end, output_dt);
  truth.energy = ref.energy(s);
  truth.step = h;
  const double potential = truth.energy - ref.kinetic(s.bodies);
  truth.energy_scale = weight(m);
  double now = 0.0, balance = 0.0;
  for (double target : truth.t) {
    ref.advance(s, now, target, h);
    now = target;
    std::vector<Vec3>& row = truth.markers.emplace_back();
    for (const MarkerSpec& p : m.markers) row.push_back(ref.point(s.bodies, ref.body(p.body), p.point));
    const double E = ref.energy(s), T = ref.kinetic(s.bodies);
    truth.energy_scale = std::max(truth.energy_scale, T + std::abs(E - T - potential) + std::abs(s.work));
    balance = std::max(balance, std::abs(E - s.work - truth.energy));
  }
  truth.balance = balance / truth.energy_scale;
  return truth;
}

ZooTruth zoo_truth_resolved(const Mechanism& m, double t_end, double output_dt, double h, double tolerance,
                            double smallest) {
  ZooTruth coarse = zoo_truth(m, t_end, output_dt, h);
  for (;;) {
    h /= 2;
    ZooTruth fine = zoo_truth(m, t_end, output_dt, h);
    for (std::size_t k = 0; k < fine.t.size(); ++k)
      for (std::size_t j = 0; j < fine.markers[k].size(); ++j)
        fine.error = std::max(fine.error, (fine.markers[k][j] - coarse.markers[k][j]).norm());
    if (fine.error <= tolerance || h / 2 < smallest) return fine;
    coarse = std::move(fine);
  }
}

std::string_view to_string(ZooOutcome outcome) {
  switch (outcome) {
    case ZooOutcome::pass: return "pass";
    case ZooOutcome::refused: return "refused";
    case ZooOutcome::wrong: return "wrong";
  }
  return "?";
}

ZooRun run_zoo_method(const Mechanism& m, const std::string& method, const ZooTruth& truth, const ZooBounds& bounds,
                      double fixed_step) {
  const auto start = std::chrono::steady_clock::now();
  ZooRun r;
  try {
    const Model model = Model::build(m);
    RunSettings settings;  // the defaults a user gets: integrator, watch, auto's hand-over
    settings.method = method;
    settings.simulation.integrator.dt = fixed_step;
    settings.simulation.t_end = truth.t.back();
    settings.simulation.output_dt = truth.t.size() > 1 ? truth.t[1] : settings.simulation.t_end;
    const RunResult run_result = run(model, model.q0, model.u0, settings);
    if (run_result.completed()) r = judge(m, run_result.trajectory, truth, bounds);
    else r = outcome(ZooOutcome::refused, run_result.stop.message);
    r.method = run_result.method;
  } catch (const std::runtime_error& e) {
    r = outcome(ZooOutcome::refused, e.what());
  } catch (const std::invalid_argument& e) {
    r = outcome(ZooOutcome::refused, e.what());
  } catch (const std::exception& e) {
    r = outcome(ZooOutcome::wrong, std::string("not a clear refusal: ") + e.what());
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

std::vector<std::string> zoo_methods() {
  std::vector<std::string> methods = loop_methods();
  methods.insert(methods.begin(), "auto");
  return methods;
}

}  // namespace loopdyn::reference
