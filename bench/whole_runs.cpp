// Whole runs against their kernels (bench/run_whole.sh, docs/performance.md "Whole runs against
// their evaluations"): for each model file, the default run as `loopdyn simulate` makes it (start
// state assembled, method `auto` and its choice, dopri5 at its default tolerances, the guard and
// the run watch on, rows every 0.01 s) over T seconds, beside the time its evaluations took: the
// wall time inside the chosen method's derivative, measured during the run
// (SimulationSettings::time_evaluations), stage states and their position analysis included.
// Model::build and the start state's assembly are timed apart, in the last two columns: a user
// waits for them too (at c46b317 the assembly of the 64-cell spatial ladder took 0.8 s for a run
// of 0.05 s, and the run's columns did not show it).
// Usage: whole_runs T MODEL.yaml [MODEL.yaml ...]   prints one Markdown table row per model.
#include <chrono>
#include <cstdio>
#include <string>

#include "loopdyn/io/model_file.hpp"
#include "loopdyn/loops/loop_structure.hpp"
#include "loopdyn/run/run.hpp"
#include "loopdyn/run/start_state.hpp"

using namespace loopdyn;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

void row(const std::string& file, double t_end) {
  Clock::time_point start = Clock::now();
  const Model model = Model::build(load_mechanism(file));
  const double build = seconds_since(start);
  start = Clock::now();
  const StartState s = start_state(model, model.q0, model.u0, true);
  const double assembly = seconds_since(start);
  RunSettings settings;
  settings.simulation.t_end = t_end;
  settings.simulation.output_dt = 0.01;
  settings.simulation.time_evaluations = true;
  start = Clock::now();
  const RunResult r = run(model, s.q, s.u, settings);
  const double wall = seconds_since(start);
  const Trajectory& traj = r.trajectory;
  std::string name = file.substr(file.find_last_of('/') + 1);
  name = name.substr(0, name.rfind(".yaml"));
  if (!r.completed()) {
    std::printf("| %s | %s | stopped: %s |\n", name.c_str(), r.method.c_str(), r.stop.message.c_str());
    return;
  }
  // Hand-overs: the methods, and how many. The evaluations are those of every stretch where dca went
  // on from the choice's state (the kernel column their mean), the last method's where it started
  // again from the start; the run's time holds every attempt.
  std::string method = r.method;
  if (r.handovers.size() == 1) method = r.handovers[0].from + " → " + method;
  if (r.handovers.size() > 1)
    method = r.handovers[0].from + " ⇄ " + r.handovers[0].to + " (" + std::to_string(r.handovers.size()) + ")";
  const long evaluations = traj.stats.rhs_evaluations;
  const double in_method = traj.evaluation_seconds;
  std::printf("| %s | %s | %d | %d | %g | %ld | %.3g | %.3g | %.3g | %.3g | %.2f | %.3g | %.3g |\n", name.c_str(),
              method.c_str(), model.nv, model.loops().constraints.rows(), t_end, evaluations,
              in_method / static_cast<double>(evaluations) * 1e6, in_method, wall, wall / t_end, wall / in_method, build, assembly);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: whole_runs T MODEL.yaml [MODEL.yaml ...]\n");
    return 2;
  }
  const double t_end = std::stod(argv[1]);
  std::printf("| model | method | nv | m | T (s) | evaluations | kernel (µs/call) | in the method (s) | "
              "run (s) | run per simulated s (s) | run / in the method | Model::build (s) | start state (s) |\n");
  std::printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (int k = 2; k < argc; ++k) {
    try {
      row(argv[k], t_end);
    } catch (const std::exception& e) {
      std::printf("| %s | error: %s |\n", argv[k], e.what());
    }
  }
  return 0;
}
