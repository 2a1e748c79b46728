// Work-precision of the integrators (docs/results.md, "Stiff and non-stiff: work against
// precision"; bench/run_work_precision.sh): on IFToMM A05 (stiff: the flyball governor's
// spring-damper couplers), A03 (Andrews' squeezer: a stiff spring and a crank reaching 1100 rad/s)
// and A02 N = 40 (not stiff, 40 loops and 20 change points), every run as a user's default run
// (`run()`: method auto, the run watch on) with dopri5 (explicit) and bdf (implicit, CVODE) at
// rtol = atol = tol over a sweep of tolerances. For each: the CPU time (fastest of `--repeat`
// identical runs, 3 by default; one for a run of more than 2 s), the error of the case's reported point against its independent reference
// (reference/iftomm_cases.hpp) at the end and the largest over the run, steps and evaluations.
//
//   work_precision [--csv FILE] [--repeat N] [case ...]   cases a05 (10 s), a05-350 (350 s), a03,
//                                                         a02-40 (all by default)
//
// Prints one markdown table per case and, per case and integrator, the loosest tolerance that meets
// the precision criterion (the reported point within 1e-3 of the mechanism's size over the whole
// run: A02's statement, 1e-3 m with links of 1 m; 1e-3 m on A05, whose shaft and rods are 1 m;
// 7e-6 m on A03, whose crank is 7 mm) and its cost. --csv writes every run as a row for
// bench/plot_work_precision.py.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "iftomm_cases.hpp"
#include "loopdyn/run/run.hpp"
#include "mujoco_runs.hpp"

using namespace loopdyn;

namespace {

// A run that takes longer than this is cancelled and ends the sweep of its integrator: the tighter
// tolerances would take longer still (bdf on A02 N = 40 after the hand-over to dca: a difference-quotient Jacobian
// of dca's 1053 states).
constexpr double kBudget = 60.0;

struct Case {
  std::string key;
  reference::BenchmarkCase c;
  double criterion = 0.0;             ///< the precision criterion on the reported point [m]
  std::vector<double> mujoco_steps;   ///< MuJoCo's timesteps, each dividing the output interval
  double bdf_tightest = 1e-11;        ///< bdf's tightest tolerance
};

Case make_case(const std::string& key) {
  const std::vector<double> steps{1e-3, 5e-4, 2e-4, 1e-4, 5e-5, 2e-5, 1e-5};
  if (key == "a05") return {key, reference::a05_case(LOOPDYN_MODELS_DIR, 10.0), 1e-3, steps};
  // 350 s: MuJoCo's smallest steps would take minutes each.
  if (key == "a05-350") return {key, reference::a05_case(LOOPDYN_MODELS_DIR, 350.0), 1e-3, {2e-4, 1e-4, 5e-5}};
  if (key == "a03") return {key, reference::a03_case(LOOPDYN_MODELS_DIR, 0.03), 7e-6, {3e-5, 1e-5, 5e-6, 2e-6, 1e-6, 5e-7}};
  // 40 loops: 120 soft rows for MuJoCo's solver at every step; its smallest steps would take minutes.
  // bdf below 1e-6: embedding stops at a change point, auto hands the run over to dca, and bdf's
  // dense difference-quotient Jacobian of dca's 1053 states takes minutes per output interval.
  if (key == "a02-40") return {key, reference::a02_case(40, 20.0), 1e-3, {1e-3, 5e-4, 2e-4, 1e-4}, 1e-6};
  throw std::invalid_argument("unknown case '" + key + "' (known: a05, a05-350, a03, a02-40)");
}

struct Point {
  bool ran = false;
  std::string stop;  ///< why the run did not complete
  double end_error = 0.0, max_error = 0.0, cpu = 0.0;
  long steps = 0, evaluations = 0;
};

void set_errors(Point& p, const std::vector<Vec3>& path, const std::vector<Vec3>& ref) {
  for (std::size_t i = 0; i < path.size(); ++i) p.max_error = std::max(p.max_error, (path[i] - ref[i]).norm());
  p.end_error = (path.back() - ref.back()).norm();
}

Point run_once(const Case& k, const Model& model, IntegratorKind integrator, double tol, const std::vector<Vec3>& ref) {
  RunSettings s;
  s.integrator = integrator;
  s.simulation.integrator.rtol = s.simulation.integrator.atol = tol;
  s.simulation.t_end = k.c.t_end;
  s.simulation.output_dt = k.c.output_dt;
  Point p;
  const auto start = std::chrono::steady_clock::now();
  auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  RunCallbacks budget;
  budget.cancelled = [&] { return seconds() > kBudget; };
  const RunResult r = run(model, model.q0, model.u0, s, budget);
  p.cpu = seconds();
  if (r.stop.kind == RunStopKind::cancelled) {
    p.stop = "cancelled after " + std::to_string(static_cast<int>(kBudget)) + " s";
    return p;
  }
  if (!r.completed()) {
    const std::string& what = r.stop.message;
    p.stop = what.substr(0, std::min(what.find(". "), what.size()));
    return p;
  }
  const Trajectory& traj = r.trajectory;
  const int x = traj.column(k.c.marker + ".x");
  std::vector<Vec3> path;
  for (const VecX& row : traj.rows) path.push_back(row.segment<3>(x));
  set_errors(p, path, ref);
  p.steps = traj.stats.steps_accepted;
  p.evaluations = traj.stats.rhs_evaluations;
  p.ran = true;
  return p;
}

Point measure(const Case& k, const Model& model, IntegratorKind integrator, double tol, const std::vector<Vec3>& ref,
              int repeat) {
  Point best = run_once(k, model, integrator, tol, ref);
  for (int i = 1; i < repeat && best.ran && best.cpu < 2.0; ++i) {
    const Point p = run_once(k, model, integrator, tol, ref);
    if (p.cpu < best.cpu) best = p;
  }
  return best;
}

// The same mechanism in MuJoCo at fixed timesteps with each of its integrators; where it has loops,
// also with the stiffest soft constraints MuJoCo allows (time constant 2 timesteps).
void mujoco_table(const Case& k, const std::vector<Vec3>& ref, FILE* csv) {
  const bool loops = std::any_of(k.c.mechanism.joints.begin(), k.c.mechanism.joints.end(),
                                 [](const JointSpec& j) { return j.cut; });
  std::printf("\nThe same mechanism in MuJoCo 2.2.2 (`bench/mujoco_runs.hpp`), fixed timestep h%s:\n\n",
              loops ? "; its loops closed by soft `connect` constraints, MuJoCo's default time constant 0.02 s "
                      "or (stiff) 2 h, the least it allows"
                    : "");
  std::printf("| integrator | h [s] | error at the end [m] | largest error [m] | steps | CPU [s] |\n");
  std::printf("|---|---|---|---|---|---|\n");
  std::vector<std::pair<std::string, double>> variants{{"", 0.0}};
  if (loops) variants.push_back({" stiff", -1.0});
  for (bench::MujocoIntegrator integrator :
       {bench::MujocoIntegrator::euler, bench::MujocoIntegrator::rk4, bench::MujocoIntegrator::implicit}) {
    for (const auto& [suffix, timeconst] : variants) {
      const std::string name = std::string(bench::to_string(integrator)) + suffix;
      for (double h : k.mujoco_steps) {
        const bench::MujocoRun r = bench::run_mujoco(k.c.mechanism, k.c.marker, k.c.t_end, k.c.output_dt, h, integrator,
                                                     timeconst < 0 ? 2 * h : timeconst);
        if (!r.finite) {
          std::printf("| %s | %.0e | unstable | | %ld | %.4f |\n", name.c_str(), h, r.steps, r.cpu);
          continue;
        }
        Point p;
        set_errors(p, r.marker, ref);
        std::printf("| %s | %.0e | %.1e | %.1e | %ld | %.4f |\n", name.c_str(), h, p.end_error, p.max_error, r.steps,
                    r.cpu);
        std::fflush(stdout);
        if (csv)
          std::fprintf(csv, "%s,mujoco-%s,%g,%.6g,%.6g,%.6g,%ld,0\n", k.key.c_str(), name.c_str(), h, r.cpu, p.end_error,
                       p.max_error, r.steps);
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> keys;
  std::string csv_path;
  int repeat = 3;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--csv" && i + 1 < argc) csv_path = argv[++i];
    else if (a == "--repeat" && i + 1 < argc) repeat = std::max(1, std::atoi(argv[++i]));
    else keys.push_back(a);
  }
  if (keys.empty()) keys = {"a05", "a05-350", "a03", "a02-40"};
  FILE* csv = csv_path.empty() ? nullptr : std::fopen(csv_path.c_str(), "w");
  if (!csv_path.empty() && !csv) {
    std::fprintf(stderr, "cannot write %s\n", csv_path.c_str());
    return 1;
  }
  if (csv) std::fprintf(csv, "case,integrator,tolerance,cpu,end_error,max_error,steps,evaluations\n");
  const std::vector<double> tolerances{1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11};
  for (const std::string& key : keys) {
    Case k;
    try {
      k = make_case(key);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s\n", e.what());
      return 2;
    }
    const Model model = Model::build(k.c.mechanism);
    const auto start = std::chrono::steady_clock::now();
    const std::vector<Vec3> ref = k.c.reference(output_times(k.c.t_end, k.c.output_dt));
    const double ref_cpu = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("\n%s over %g s, point %s; criterion: within %.0e m over the run (reference: %.1f s of CPU)\n\n",
                k.c.name.c_str(), k.c.t_end, k.c.marker.c_str(), k.criterion, ref_cpu);
    std::printf("| integrator | tol | error at the end [m] | largest error [m] | steps | evaluations | CPU [s] |\n");
    std::printf("|---|---|---|---|---|---|---|\n");
    for (IntegratorKind integrator : {IntegratorKind::dopri5, IntegratorKind::bdf}) {
      const std::string name_text(to_string(integrator));
      const char* name = name_text.c_str();
      Point cheapest;
      double cheapest_tol = 0.0;
      for (double tol : tolerances) {
        if (integrator == IntegratorKind::bdf && tol < k.bdf_tightest) {
          std::printf("| %s | %.0e and tighter | not run (see bench/work_precision.cpp) | | | | |\n", name, tol);
          break;
        }
        const Point p = measure(k, model, integrator, tol, ref, repeat);
        if (!p.ran) {
          std::printf("| %s | %.0e | stopped: %s | | | | %.3f |\n", name, tol, p.stop.c_str(), p.cpu);
          if (p.cpu > kBudget) {
            std::printf("| %s | tighter | not run: this run took over %.0f s | | | | |\n", name, kBudget);
            break;
          }
          continue;
        }
        std::printf("| %s | %.0e | %.1e | %.1e | %ld | %ld | %.4f |\n", name, tol, p.end_error, p.max_error, p.steps,
                    p.evaluations, p.cpu);
        std::fflush(stdout);
        if (csv)
          std::fprintf(csv, "%s,%s,%g,%.6g,%.6g,%.6g,%ld,%ld\n", key.c_str(), name, tol, p.cpu, p.end_error, p.max_error,
                       p.steps, p.evaluations);
        if (p.max_error <= k.criterion && (!cheapest.ran || p.cpu < cheapest.cpu)) cheapest = p, cheapest_tol = tol;
        if (p.cpu > kBudget) {
          std::printf("| %s | tighter | not run: this run took over %.0f s | | | | |\n", name, kBudget);
          break;
        }
      }
      if (cheapest.ran)
        std::printf("| **%s meets the criterion** | %.0e | %.1e | %.1e | %ld | %ld | **%.4f** |\n", name, cheapest_tol,
                    cheapest.end_error, cheapest.max_error, cheapest.steps, cheapest.evaluations, cheapest.cpu);
      else
        std::printf("| **%s never meets the criterion** | | | | | | |\n", name);
    }
    mujoco_table(k, ref, csv);
  }
  if (csv) std::fclose(csv);
  return 0;
}
