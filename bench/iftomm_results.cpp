// The IFToMM benchmark cases (reference/iftomm_cases.hpp) run by every loop method and by `auto`,
// each against its reference: the table of docs/results.md, "IFToMM benchmarks"
// (bench/run_iftomm.sh). Usage: iftomm_results [case ...] with cases a02-2, a02-4, a02-40, a03,
// a04, park-singular, fivebar, doubleloop (all by default).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "iftomm_cases.hpp"
#include "loopdyn/formulation.hpp"
#include "loopdyn/simulator.hpp"

using namespace loopdyn;

namespace {

struct Row {
  std::string method, outcome;
  double marker_error = 0, energy_drift = 0, position_residual = 0, velocity_residual = 0, cpu = 0;
  int events = 0;
  std::size_t crossings = 0;
};

Row run(const reference::BenchmarkCase& c, const Model& model, const std::string& method,
        const std::vector<Vec3>& ref) {
  Row row;
  row.method = method;
  const std::string chosen = method == "auto" ? default_method(model).method : method;
  if (method == "auto") row.method += " (" + chosen + ")";
  const auto start = std::chrono::steady_clock::now();
  try {
    auto f = make_formulation(chosen, model);
    f->set_event_sink([&](const FormulationEvent&) { ++row.events; });
    const Trajectory traj = reference::simulate_case(c, model, *f);
    row.crossings = traj.crossings.size();
    const int x = traj.column(c.marker + ".x");
    const int rp = traj.column("residual.position"), rv = traj.column("residual.velocity");
    for (std::size_t k = 0; k < traj.rows.size(); ++k) {
      const VecX& r = traj.rows[k];
      row.marker_error = std::max(row.marker_error, (r.segment<3>(x) - ref[k]).norm());
      const double drift = std::abs(reference::energy_drift(c.mechanism, traj, k)) / c.energy_scale;
      row.energy_drift = std::max(row.energy_drift, drift);
      row.position_residual = std::max(row.position_residual, r(rp));
      row.velocity_residual = std::max(row.velocity_residual, r(rv));
    }
    const bool pass = row.marker_error <= 1e-6 && row.energy_drift <= 1e-6 && row.position_residual <= 1e-6 &&
                      row.velocity_residual <= 1e-6;
    row.outcome = pass ? "pass" : "**wrong**";
  } catch (const std::exception& ex) {
    // The first sentence of the message: the table stays readable, the CLI prints the whole.
    const std::string what = ex.what();
    row.outcome = "stopped: " + what.substr(0, std::min(what.find(". "), what.size()));
  }
  row.cpu = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> wanted(argv + 1, argv + argc);
  if (wanted.empty()) wanted = {"a02-2", "a02-4", "a02-40", "a03", "a04", "park-singular", "fivebar", "doubleloop"};
  const std::vector<std::string> methods{"lagrange-dense", "lagrange-on", "gcp", "nullspace", "rcr", "embedding", "auto"};
  for (const std::string& name : wanted) {
    reference::BenchmarkCase c;
    if (name == "a02-2") c = reference::a02_case(2, 10.0);
    else if (name == "a02-4") c = reference::a02_case(4, 20.0);
    else if (name == "a02-40") c = reference::a02_case(40, 20.0);
    else if (name == "a03") c = reference::a03_case(LOOPDYN_MODELS_DIR, 0.03);
    else if (name == "a04") c = reference::a04_case(LOOPDYN_MODELS_DIR, 10.0);
    else if (name == "park-singular") c = reference::park_singular_case(LOOPDYN_MODELS_DIR, 10.0);
    else if (name == "fivebar") c = reference::fivebar_case(LOOPDYN_MODELS_DIR, 10.0);
    else if (name == "doubleloop") c = reference::doubleloop_case(LOOPDYN_MODELS_DIR, 10.0);
    else {
      std::fprintf(stderr,
                   "unknown case '%s' (known: a02-2, a02-4, a02-40, a03, a04, park-singular, fivebar, doubleloop)\n",
                   name.c_str());
      return 2;
    }
    const Model model = Model::build(c.mechanism);
    const std::vector<double> times = output_times(c.t_end, c.output_dt);
    const std::vector<Vec3> ref = c.reference(times);
    std::printf("\n%s, %g s, %zu output rows, marker %s\n\n", c.name.c_str(), c.t_end, times.size(), c.marker.c_str());
    std::printf("| method | result | max marker error [m] | max energy drift / scale | max abs Phi | max abs G u | events | crossings | CPU [s] |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|\n");
    for (const std::string& m : methods) {
      const Row r = run(c, model, m, ref);
      std::printf("| %s | %s | %.2e | %.2e | %.1e | %.1e | %d | %zu | %.3f |\n", r.method.c_str(), r.outcome.c_str(),
                  r.marker_error, r.energy_drift, r.position_residual, r.velocity_residual, r.events, r.crossings, r.cpu);
      std::fflush(stdout);
    }
  }
  return 0;
}
