// Paper 003's examples (Ascher and Lin: the falling square chain, Ex 4.1, and the square net,
// Ex 4.2) under `srm`, and the accuracy measurements of issue 16, as the markdown tables of
// docs/results.md ("Paper 003"). Run it with bench/run_results.sh (Release build).
//
// The regularization error of a run is max |q_srm − q_lagrange-dense| over its output rows, both
// integrated by rk2 with the same fixed step: the integrator's own error cancels and what is left
// is srm's. 003's printed tables are lost with its equations (docs/notes/srm-sources.md); what
// survives of Table 4.2 is printed beside loopdyn's numbers.
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "problem.hpp"
#include "loopdyn/formulations/srm.hpp"
#include "loopdyn/io/model_file.hpp"
#include "loopdyn/loops/loop_structure.hpp"
#include "loopdyn/run/simulator.hpp"
#include "loopdyn/mechanisms/square_nets.hpp"
#include "loopdyn/formulations/registry.hpp"

namespace loopdyn {
namespace {

using bench::Problem;
using bench::from_file;
using bench::generated;

// Fixed-step runs whose own error is what the tables measure: the run watch, which stops a run
// that leaves its accuracy, is off (srm's own checks are not).
SimulationSettings rk2(double h, double t_end, double output_dt) {
  SimulationSettings s;
  s.watch.enabled = false;
  s.integrator.kind = IntegratorKind::rk2;
  s.integrator.dt = h;
  s.t_end = t_end;
  s.output_dt = output_dt;
  return s;
}

struct SrmRun {
  Trajectory traj;
  std::optional<double> stopped;  ///< time at which one of srm's checks stopped the run, if any
  std::optional<double> first_report;
  double epsilon = 0, a_max = 0;
};

SrmRun run_srm(const Problem& p, const SimulationSettings& s, int iterations, bool proceed = false) {
  FormulationSettings fs;
  fs.srm.iterations = iterations;
  if (proceed) fs.on_singular = FormulationSettings::OnSingular::proceed;
  Srm srm(p.model, fs);
  SrmRun r;
  srm.set_event_sink([&](const FormulationEvent& e) {
    if (!r.first_report) r.first_report = e.t;
  });
  SimulationSettings settings = s;
  settings.guard_singular_configurations = !proceed;  // as `--on-singular continue`
  try {
    r.traj = Simulator(p.model, srm, settings).run(p.q, p.u);
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    const std::size_t at = what.find("t = ");  // "... at t = 0.483: ..." or "srm: by t = 2.004 ..."
    r.stopped = at == std::string::npos ? -1.0 : std::stod(what.substr(at + 4));
  }
  r.epsilon = srm.epsilon();
  r.a_max = srm.a_max();
  return r;
}

Trajectory run_exact(const Problem& p, const SimulationSettings& s) {
  auto f = make_formulation("lagrange-dense", p.model);
  return Simulator(p.model, *f, s).run(p.q, p.u);
}

// max over the common rows of |q_a − q_b|.
double position_difference(const Problem& p, const Trajectory& a, const Trajectory& b) {
  double d = 0;
  for (std::size_t r = 0; r < std::min(a.rows.size(), b.rows.size()); ++r)
    d = std::max(d, (a.rows[r].segment(1, p.model.nq) - b.rows[r].segment(1, p.model.nq)).cwiseAbs().maxCoeff());
  return d;
}

// Table 4.1 / 4.3: per size, a_max, ε and the regularization error for S = 1, 2, 3 to t_end.
void iterations_table(const std::vector<Problem>& problems, double t_end) {
  const SimulationSettings s = rk2(1e-3, t_end, 0.05);
  std::printf("| bars | m | a_max [1/kg] | ε (S = 2) [s/kg] | error S = 1 | S = 2 | S = 3 |\n"
              "|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Problem& p : problems) {
    const Trajectory exact = run_exact(p, s);
    std::printf("| %d | %d |", p.model.nbodies, p.model.loops().constraints.rows());
    std::string cells;
    for (int iterations = 1; iterations <= 3; ++iterations) {
      const SrmRun r = run_srm(p, s, iterations);
      if (iterations == 2) std::printf(" %.4g | %.3g |", r.a_max, r.epsilon);
      char cell[96];
      if (r.stopped) std::snprintf(cell, sizeof cell, " stopped at t = %.3f |", *r.stopped);
      else std::snprintf(cell, sizeof cell, " %.2e |", position_difference(p, r.traj, exact));
      cells += cell;
    }
    std::printf("%s\n", cells.c_str());
  }
  std::printf("\n");
}

void square_chain_iterations() {
  std::printf("### 003 Ex 4.1 and Table 4.1: the falling square chain, iterates and size\n\n");
  std::printf("`loopdyn generate square-chain --squares K`: K squares of unit bars (1 kg, 1 m), joint 0 fixed, "
              "released at rest. Regularization error (max |q_srm − q_lagrange-dense| over rows every 0.05 s, "
              "both rk2 at h = 1e-3) to t = 0.3 s, before the squares flatten; ε at its default h·S·a_max.\n\n");
  std::vector<Problem> chains;
  for (int k : {1, 2, 4, 8, 16, 32}) chains.push_back(generated("chain", square_chain_mechanism(k)));
  iterations_table(chains, 0.3);
}

void square_net_iterations() {
  std::printf("### 003 Ex 4.2 and Table 4.3: the square net\n\n");
  std::printf("`loopdyn generate square-net --rows R --cols R`: R x R squares of unit bars hanging from joint 0, "
              "released 0.5 rad from the vertical (the breeze of 003 is an initial angle: docs/notes/"
              "srm-sources.md). Same measure as above, to t = 0.3 s.\n\n");
  std::vector<Problem> nets;
  for (int r : {2, 3, 4, 6, 8}) nets.push_back(generated("net", square_net_mechanism(r, r, 0.5)));
  iterations_table(nets, 0.3);
}

// Table 4.2: maximum drift at t = 4, 5, 6, 10 through the flat squares (on_singular = proceed).
void chain_drift() {
  std::printf("### 003 Table 4.2: drift of the square chain through its flat squares\n\n");
  std::printf("Three squares (003's n is lost), rk2 at h = 1e-3, `--on-singular continue` (srm otherwise stops "
              "at the first flat squares). Drift = max |Φ| over the rows up to t (rows every 0.01 s). 003's values "
              "are those recovered from its word list (Algorithm I at the ε tokens `005` and `05`; its h is lost); "
              "Algorithm II, 003's form (3.10), is not implemented.\n\n");
  std::printf("| | S | t = 4 | t = 5 | t = 6 | t = 10 | energy at 10 s [J] | first check failure [s] |\n"
              "|---|---:|---:|---:|---:|---:|---:|---:|\n");
  const Problem p = generated("chain", square_chain_mechanism(3));
  for (int iterations : {1, 2}) {
    const SrmRun r = run_srm(p, rk2(1e-3, 10.0, 0.01), iterations, true);
    std::printf("| loopdyn | %d |", iterations);
    if (r.stopped) {
      std::printf(" diverged at t = %.3f | | | | | |\n", *r.stopped);
      continue;
    }
    double drift = 0;
    std::size_t row = 0;
    for (double t : {4.0, 5.0, 6.0, 10.0}) {
      for (; row < r.traj.rows.size() && r.traj.at(row, "t") <= t + 1e-9; ++row)
        drift = std::max(drift, r.traj.at(row, "residual.position"));
      std::printf(" %.2e |", drift);
    }
    std::printf(" %.3f (from %.3f) | %.3f |\n", r.traj.at(r.traj.rows.size() - 1, "energy"), r.traj.at(0, "energy"),
                r.first_report.value_or(-1.0));
  }
  std::printf("| 003, Alg. I, ε `005` | 1 | 7.763e-3 | 1.289e-2 | 1.744e-2 | 2.959e-2 | | |\n");
  std::printf("| 003, Alg. I, ε `05` | 2 | 7.763e-3 | 1.289e-2 | 1.744e-2 | 3.107e-2 | | |\n\n");
}

// The regularization error as h falls, and the total error of rk2 against a dopri5 reference.
void convergence_in_h(const std::string& dir) {
  std::printf("### Convergence in h\n\n");
  std::printf("Regularization error (as above, S = 2, default ε ∝ h) at the end of the run, and in brackets the "
              "error of srm's rk2 trajectory against lagrange-dense by dopri5 at rtol = atol = 1e-12. Observed "
              "order: log2 of the ratio of the last two regularization errors. `--on-singular continue`: a `*` "
              "marks a run whose loop forces did more work than `--srm-max-work` allows, where srm would have "
              "stopped.\n\n");
  std::vector<std::pair<Problem, double>> cases;
  cases.push_back({generated("square chain, 3 squares", square_chain_mechanism(3)), 0.3});
  cases.push_back({generated("square net 3 x 3", square_net_mechanism(3, 3, 0.5)), 0.3});
  cases.push_back({from_file(dir, "fourbar_anderson"), 1.0});
  cases.push_back({from_file(dir, "doubleloop_malczyk"), 1.0});
  const std::vector<double> steps{4e-3, 2e-3, 1e-3, 5e-4, 2.5e-4};
  std::printf("| case | t_end [s] |");
  for (double h : steps) std::printf(" h = %.2g |", h);
  std::printf(" order |\n|---|---:|");
  for (std::size_t k = 0; k <= steps.size(); ++k) std::printf("---:|");
  std::printf("\n");
  for (const auto& [p, t_end] : cases) {
    SimulationSettings ref = rk2(0, t_end, t_end);
    ref.integrator.kind = IntegratorKind::dopri5;
    ref.integrator.rtol = ref.integrator.atol = 1e-12;
    const Trajectory reference = run_exact(p, ref);
    std::printf("| %s | %g |", p.name.c_str(), t_end);
    std::vector<double> errors;
    for (double h : steps) {
      const SimulationSettings s = rk2(h, t_end, t_end);
      const SrmRun r = run_srm(p, s, 2, true);
      errors.push_back(position_difference(p, r.traj, run_exact(p, s)));
      std::printf(" %.2e (%.1e)%s |", errors.back(), position_difference(p, r.traj, reference),
                  r.first_report ? " *" : "");
    }
    const std::size_t n = errors.size();
    if (n >= 2) std::printf(" %.1f |\n", std::log2(errors[n - 2] / errors[n - 1]));
    else std::printf(" |\n");
  }
  std::printf("\n");
}

// 100 s without projection: drift bounded, energy of a conservative mechanism.
void long_runs(const std::string& dir) {
  std::printf("### Long runs\n\n");
  std::printf("rk2 at h = 1e-3 for 100 s, no projection, rows every second, `--on-singular continue`; the last "
              "column is when a check of srm would have stopped the run (docs/methods.md).\n\n| model | max \\|Φ\\| "
              "in 0-50 s | in 50-100 s | energy change [J] | of | check fails at t [s] |\n"
              "|---|---:|---:|---:|---:|---:|\n");
  for (const char* file : {"fivebar_malczyk", "doubleloop_malczyk", "fivebar_anderson"}) {
    const Problem p = from_file(dir, file);
    const SrmRun r = run_srm(p, rk2(1e-3, 100.0, 1.0), 2, true);
    double first = 0, last = 0;
    for (std::size_t k = 0; k < r.traj.rows.size(); ++k)
      (k <= 50 ? first : last) = std::max(k <= 50 ? first : last, r.traj.at(k, "residual.position"));
    const double e0 = r.traj.at(0, "energy");
    char report[48] = "";
    if (r.first_report) std::snprintf(report, sizeof report, "%.3f", *r.first_report);
    std::printf("| `%s` | %.2e | %.2e | %.2e | %.3f | %s |\n", file, first, last,
                r.traj.at(r.traj.rows.size() - 1, "energy") - e0, e0, report);
  }
  std::printf("\n");
}

}  // namespace
}  // namespace loopdyn

int main(int argc, char** argv) {
  std::string dir = LOOPDYN_MODELS_DIR;
  for (int k = 1; k + 1 < argc; k += 2)
    if (std::string(argv[k]) == "--models") dir = argv[k + 1];
  try {
    loopdyn::square_chain_iterations();
    loopdyn::square_net_iterations();
    loopdyn::chain_drift();
    loopdyn::convergence_in_h(dir);
    loopdyn::long_runs(dir);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "srm_results: %s\n", e.what());
    return 1;
  }
  return 0;
}
