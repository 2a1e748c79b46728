// The zoo's differential runs (loopdyn/zoo.hpp): a loop method on a zoo case against the
// absolute-coordinate reference (absolute_coordinates.hpp), judged pass, refused or wrong. Shared
// by tests/test_zoo.cpp and bench/zoo_results.cpp so that both judge a run the same way.
#pragma once

#include <string>
#include <vector>

#include "loopdyn/run/integrators.hpp"
#include "loopdyn/core/mechanism.hpp"
#include "loopdyn/core/spatial.hpp"
#include "loopdyn/formulations/registry.hpp"

namespace loopdyn::reference {

/// The reference motion of a case at the output times: every marker's world position (rows in
/// output order, markers in mechanism order) and the energy at t = 0 (springs' potential in it).
struct ZooTruth {
  std::vector<double> t;
  std::vector<std::vector<Vec3>> markers;
  double energy = 0.0;
  /// S_E: the largest T + |V − V(0)| + |W| along the reference (V gravity and springs, W the
  /// dampers' work), as the run watch's scale (run_watch.hpp), and at least total weight × 1 m.
  double energy_scale = 0.0;
  double balance = 0.0;  ///< the reference's own largest |E(t) − W(t) − E(0)| / energy_scale
  double step = 0.0;   ///< RK4 step it was computed with
  double error = 0.0;  ///< largest marker distance from the same at twice the step (zoo_truth_resolved)
};

/// The absolute-coordinate reference from the mechanism's initial state (initial_bodies) with
/// RK4 step h, at output_times(t_end, output_dt) (simulator.hpp).
ZooTruth zoo_truth(const Mechanism& m, double t_end, double output_dt, double h);
/// zoo_truth at h / 2, halved again while it moves the markers by more than `tolerance` from the
/// step before, down to `smallest`: a fixed step that resolves most cases does not resolve a
/// five-bar whose couplers pass close to stretched out (RK4 at 5e-4 s was 1.6e-2 m off on case 278
/// of seed 36). `error` is the last difference, a bound on the returned motion's error (RK4's
/// error falls 16-fold per halving); above `tolerance` the case is not resolved.
ZooTruth zoo_truth_resolved(const Mechanism& m, double t_end, double output_dt, double h, double tolerance,
                            double smallest);

/// A run passes when at every output time every marker is within `marker` (m) of the reference and
/// the balance |E(t) − W(t) − E_ref(0)| is within `energy` × the energy scale ZooTruth::energy_scale:
/// E with the springs' potential, W the work of the dampers (the run's `work` column; zero for a
/// conservative mechanism). The scale is the energy that moves (as the run watch's), at least the
/// total weight × 1 m: an integrator at a relative tolerance holds the energy to a share of that.
/// With weight × 1 m alone, the RSCR of case 23 (S_E 712 J, weight × 1 m 67.5 J) failed every
/// method that completed it at rtol 1e-8 (1.3e-5 of 67.5 J: 1.3e-6 of the energy that moves,
/// 8.97e-4 J, falling to 6.7e-7 J at rtol 1e-10), while its markers stayed within 1.7e-5 m. The defaults are the zoo's bounds, ten times what the integrator's
/// tolerance leaves: dopri5 at rtol 1e-8, atol 1e-10 (the IFToMM tables' 1e-10 gives ~1e-7 m,
/// docs/results.md; a hundred times looser, ~1e-5 m) was measured over 2 s on the first 14 cases of
/// seed 36 against a reference at h = 1.25e-4 at up to 9.2e-6 m (gcp, nullspace and embedding on
/// the triple-rocker of case 3) and 1.9e-6 in energy (dca on a Bennett linkage). A run that leaves
/// the motion (another branch, a drift the checks miss) ends 1e-4 to 2 m off in the zoo.
struct ZooBounds {
  double marker = 1e-4;
  double energy = 1e-5;
};

enum class ZooOutcome { pass, refused, wrong };
std::string_view to_string(ZooOutcome outcome);

struct ZooRun {
  ZooOutcome outcome = ZooOutcome::wrong;
  double marker_error = 0.0;  ///< largest marker distance from the reference (m); 0 when refused
  double energy_error = 0.0;  ///< largest |E(t) − W(t) − E_ref(0)| / scale; 0 when refused
  std::string message;        ///< the refusal's message, or why the run is wrong
  std::string method;         ///< the method that ran last (auto's choice, or dca after a hand-over)
  double seconds = 0.0;       ///< wall time of the run (formulation built, simulation run)
};

/// Runs `method` on m as a user's default run does (run.hpp: its default integrator, dopri5 at
/// rtol 1e-8, atol 1e-10, or rk4 at `fixed_step` for a fixed-step method (srm); the run watch;
/// `auto`'s choice and hand-over), from the case's initial state (closed), over truth's times, and
/// judges it: refused when the run stops (RunResult::stop) or throws std::runtime_error or
/// std::invalid_argument (SingularConfigurationError, ModelError, ...), else pass or wrong by
/// `bounds`; any other exception is not a clear refusal and counts as wrong.
ZooRun run_zoo_method(const Mechanism& m, const std::string& method, const ZooTruth& truth,
                      const ZooBounds& bounds = {}, double fixed_step = 1e-3);

/// The methods the zoo runs: "auto" (the default path) and every loop method (loop_methods()).
std::vector<std::string> zoo_methods();

}  // namespace loopdyn::reference
