// srm's check of its own error (formulations/srm.hpp, check_work) against the mechanism zoo: every
// case of `--seed` (`--count` from `--first`) run by srm as the zoo runs it, with the check off
// (measured, not checked), judged against the absolute-coordinate reference as
// bench/zoo_results.cpp judges it (reference/zoo_runs.hpp, ZooBounds). Per run that completed: the
// marker and energy errors, srm's measure (the largest |work of its loop forces| / E_s over the
// output rows) in units of the default --srm-max-work, and the measure against the true energy
// error. A measure above 1 is a run the check stops; the summary says how many of the runs that
// pass and of those that are wrong it would stop (docs/methods.md, "srm").
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "loopdyn/formulations/formulation.hpp"
#include "loopdyn/run/run.hpp"
#include "loopdyn/mechanisms/zoo.hpp"
#include "zoo_runs.hpp"

using namespace loopdyn;

namespace {

struct Options {
  std::uint64_t seed = 36;
  int first = 0, count = 56;
  double fixed_step = 1e-3;  // the zoo's
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--seed") o.seed = std::strtoull(value.c_str(), nullptr, 10);
    else if (key == "--first") o.first = std::atoi(value.c_str());
    else if (key == "--count") o.count = std::atoi(value.c_str());
    else if (key == "--fixed-step") o.fixed_step = std::atof(value.c_str());
    else {
      std::fprintf(stderr, "usage: srm_zoo [--seed S] [--first I] [--count K] [--fixed-step H]\n");
      std::exit(2);
    }
  }
  return o;
}

// srm as the zoo runs it (reference/zoo_runs.cpp: run() with its defaults, rk4 at the fixed step,
// the run watch on), its check off and its measure in the rows (srm.work, srm.energy_scale).
RunResult run_srm(const Model& model, const reference::ZooTruth& truth, double fixed_step) {
  RunSettings settings;
  settings.method = "srm";
  settings.formulation.srm.max_work = 0.0;  // measured, not checked
  settings.simulation.integrator.dt = fixed_step;
  settings.simulation.t_end = truth.t.back();
  settings.simulation.output_dt = truth.t[1];
  settings.simulation.diagnostics = true;
  return run(model, model.q0, model.u0, settings);
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const reference::ZooBounds bounds;
  const double limit = FormulationSettings{}.srm.max_work;
  std::printf("| index | case | zoo | marker error (m) | energy error | srm's measure / --srm-max-work | measure / true "
              "energy error |\n|---|---|---|---|---|---|---|\n");
  int stopped[2] = {0, 0}, total[2] = {0, 0}, refused = 0;  // [wrong, pass]
  double ratio_low = INFINITY, ratio_high = 0.0;
  for (int index = o.first; index < o.first + o.count; ++index) {
    const ZooCase c = zoo_case(o.seed, index);
    const reference::ZooTruth truth = reference::zoo_truth_resolved(c.mechanism, 2.0, 0.01, 1e-3, 1e-6, 1e-3 / 16);
    if (truth.error > 1e-6) continue;  // not judged (zoo_results)
    const Model model = Model::build(c.mechanism);
    const RunResult m = run_srm(model, truth, o.fixed_step);
    if (!m.completed()) {
      ++refused;
      continue;
    }
    double marker = 0.0, energy = 0.0, measure = 0.0, work = 0.0;
    for (std::size_t j = 0; j < c.mechanism.markers.size(); ++j) {
      const int x = m.trajectory.column(c.mechanism.markers[j].name + ".x");
      for (std::size_t k = 0; k < m.trajectory.rows.size(); ++k)
        marker = std::max(marker, (m.trajectory.rows[k].segment<3>(x) - truth.markers[k][j]).norm());
    }
    // The energy balance as the zoo judges it: E − W with the work W of the applied forces.
    const auto& columns = m.trajectory.columns;
    const bool forces = std::find(columns.begin(), columns.end(), "work") != columns.end();
    const int e = m.trajectory.column("energy"), applied = forces ? m.trajectory.column("work") : -1,
              w = m.trajectory.column("srm.work");
    for (const VecX& row : m.trajectory.rows) {
      energy = std::max(energy, std::abs(row(e) - (forces ? row(applied) : 0.0) - truth.energy));
      measure = std::max(measure, std::abs(row(w)) / row(w + 1));
      work = std::max(work, std::abs(row(w)));
    }
    const bool pass = marker <= bounds.marker && energy / truth.energy_scale <= bounds.energy;
    ++total[pass];
    if (measure > limit) ++stopped[pass];
    const double ratio = work / energy;  // both in J
    ratio_low = std::min(ratio_low, ratio);
    ratio_high = std::max(ratio_high, ratio);
    std::printf("| %d | %s | %s | %.2e | %.2e | %.2f | %.3f |\n", index, c.kind.c_str(), pass ? "pass" : "wrong", marker,
                energy / truth.energy_scale, measure / limit, ratio);
  }
  std::printf("\nsrm with the check off, rk4 at h = %g s, seed %llu, cases %d to %d: %d refused by its other checks "
              "or the run watch; of the runs that completed, the check (--srm-max-work %g) stops %d of %d wrong and "
              "%d of %d passing; its measure is %.3f to %.3f times the true energy error.\n",
              o.fixed_step, static_cast<unsigned long long>(o.seed), o.first, o.first + o.count - 1, refused,
              limit, stopped[0], total[0], stopped[1], total[1], ratio_low, ratio_high);
  return 0;
}
