// The run layer: what `loopdyn simulate` and Python's `loopdyn.simulate` both do, so that the rules
// of a run live once, in the library, and the front ends only parse and print.
//  * the integrator: dopri5 (error-controlled, rtol 1e-8, atol 1e-10) unless one is asked for; a
//    method that runs with fixed steps only (srm) gets rk4 at dt;
//  * the method: `auto` picks one (default_method); the singularity guard and the run watch
//    (run_watch.hpp) follow FormulationSettings::on_singular and RunSettings::simulation.watch;
//  * the hand-over: when `auto`'s choice stops for any reason of the run (a singular
//    configuration, the watch, an integration failure, a position analysis that fails), dca, which
//    crosses singular configurations, takes the run over and the reason is kept: from the state
//    where the singularity guard stopped the choice, the rows so far kept (RunContinuation), or
//    else from the start; in the first case dca hands the run back to the choice once the loops
//    are clear of the singular configuration (ρ >= kGuardClear ρ(q0));
//  * a stop never loses the rows computed before it: RunResult::trajectory holds them and
//    RunResult::stop says why the run ended early.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "loopdyn/formulations/formulation.hpp"
#include "loopdyn/run/simulator.hpp"
#include "loopdyn/formulations/registry.hpp"
#include "loopdyn/run/method_choice.hpp"

namespace loopdyn {

struct RunSettings {
  std::string method = "auto";
  /// Unset: dopri5, or rk4 for a fixed-step method (MethodInfo::fixed_step).
  std::optional<IntegratorKind> integrator;
  /// Everything else of the run: integrator tolerances and step, t_end, output_dt, projection,
  /// reactions, diagnostics, watch. Its integrator.kind and guard_singular_configurations are set
  /// by run() from `integrator` and formulation.on_singular.
  SimulationSettings simulation;
  FormulationSettings formulation;
};

/// Why a run ended before t_end: input is an InputError (a force callback, a profile, a drive's
/// motion), which `auto` does not hand over.
enum class RunStopKind { none, singular_configuration, watch, integration, input, failure, cancelled };
struct RunStop {
  RunStopKind kind = RunStopKind::none;
  std::string message;
};

/// One method handed the run over to another: which, why it stopped, and the time the other took
/// over at: the first's state where its singularity guard stopped it (RunContinuation), or 0 where
/// the other started again from the start (any other stop, whose state is not trusted). `clear`:
/// dca handing the run back to `auto`'s choice where the loops are clear of the singular
/// configuration again.
struct Handover {
  std::string from, to, reason;
  double t = 0.0;
  bool clear = false;
};

struct RunResult {
  Trajectory trajectory;  ///< the run's rows up to its end or stop: after a hand-over from the start, the last method's
  std::string method;     ///< the method that ran last
  IntegratorKind integrator = IntegratorKind::dopri5;
  std::optional<MethodChoice> choice;  ///< `auto`'s choice and its reason
  std::vector<Handover> handovers;
  std::unique_ptr<Formulation> formulation;  ///< the last method's, for its own summary
  double wall_seconds = 0.0;  ///< of the last method's run, and of the first's where it went on from its state
  RunStop stop;
  bool completed() const { return stop.kind == RunStopKind::none; }
};

struct RunCallbacks {
  std::function<void(double t)> progress;            ///< at every output time
  /// At every output time, after its row: the rows so far (to stream them). A hand-over that goes
  /// on from the first method's state appends to them; one that starts again from the start
  /// starts with a trajectory of one row.
  std::function<void(const Trajectory&)> rows;
  std::function<void(const FormulationEvent&)> event;  ///< a method's reports, as they happen
  /// When `auto` hands the run over to another method, before it runs (Handover::t says from where).
  std::function<void(const Handover&)> handover;
  /// Polled at every output time and between them (every Simulator::kPollEvery evaluations, at
  /// most every 20 ms): true stops the run, RunStopKind::cancelled.
  std::function<bool()> cancelled;
};

/// The integrator a run of `method` uses with these settings (see above).
IntegratorKind run_integrator(const RunSettings& settings, std::string_view method);
/// The Simulator's settings of a run of `method`: settings.simulation with that integrator and the
/// singularity guard as FormulationSettings::on_singular says.
SimulationSettings run_simulation_settings(const RunSettings& settings, std::string_view method);
/// The method a run from (q0, u0) starts with: settings.method, or what `auto` picks there (and why,
/// with the survey it made).
MethodChoice run_method(const Model& model, const VecX& q0, const VecX& u0, const RunSettings& settings);

/// Checks the settings a run takes before any model work, each rule once for every front end:
/// the method's name, t_end, output_dt and the rows they make, the integrator's tolerances or
/// step, the watch's accuracy, the projection's tolerance and the loop methods' shared settings.
/// Throws std::invalid_argument naming the setting as `name = value` (ModelError for an unknown
/// method). A study (loopdyn.sweeps) checks its settings with it when it is loaded.
void check_run_settings(const RunSettings& settings);

/// Runs the model from (q0, u0), a consistent state (assemble or check it first). Settings that
/// cannot run (unknown method, a method out of scope, bad numbers) throw as make_formulation and
/// Simulator do; a stop during the run returns with RunResult::stop set and the rows so far.
RunResult run(const Model& model, const VecX& q0, const VecX& u0, const RunSettings& settings,
              const RunCallbacks& callbacks = {});

}  // namespace loopdyn
