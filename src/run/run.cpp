#include "loopdyn/run/run.hpp"
#include "loopdyn/formulations/registry.hpp"
#include "loopdyn/run/method_choice.hpp"
#include "loopdyn/core/names.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <utility>

namespace loopdyn {

namespace {

// Thrown through the integrator when RunCallbacks::cancelled says so; not a std::exception, so that
// nothing between here and the Simulator takes it for a failure.
struct Cancelled {
  double t;
};

RunStop stop_of(RunStopKind kind, const std::exception& e) { return {kind, e.what()}; }

// A hand-over to make: to which method, and from where the first method's guard stopped it, if it
// did (Simulator::continuation).
struct HandoverTo {
  Handover handover;
  std::optional<RunContinuation> from;
};

// One method's run from (q0, u0) into r, with the survey `auto`'s choice made there if any; a stop
// is recorded in r.stop (with its continuation in `left` if any), settings errors throw. A
// hand-over goes on from its continuation where the new method can (Simulator::can_resume), into
// the rows so far, else starts again from (q0, u0); it is announced once that is decided.
// With hand_back, a run that went on from a continuation is stopped where the loops are clear of
// singular configurations again (Simulator::hand_back_when_clear): returned, r.stop then none.
std::optional<LoopsClear> attempt(const Model& model, const VecX& q0, const VecX& u0, const RunSettings& settings,
                                  const RunCallbacks& callbacks, const std::string& method,
                                  const std::optional<SurveyedStart>& survey, HandoverTo* handover, bool hand_back,
                                  std::optional<RunContinuation>& left, RunResult& r) {
  const FormulationSettings& fs = settings.formulation;
  r.method = method;
  r.integrator = run_integrator(settings, method);
  r.formulation = make_formulation(method, model, fs);
  if (callbacks.event) r.formulation->set_event_sink(callbacks.event);
  Simulator simulator(model, *r.formulation, run_simulation_settings(settings, method));
  if (survey) simulator.use_survey(*survey);
  const auto progress = [&](double t) {
    if (callbacks.rows) callbacks.rows(r.trajectory);
    if (callbacks.progress) callbacks.progress(t);
    if (callbacks.cancelled && callbacks.cancelled()) throw Cancelled{t};
  };
  // Between output times too: every Simulator::kPollEvery evaluations, at most every 20 ms of
  // wall time (Python's check takes the GIL), the first time at once.
  if (callbacks.cancelled)
    simulator.set_poll([&callbacks, last = std::chrono::steady_clock::time_point{}](double t) mutable {
      const auto now = std::chrono::steady_clock::now();
      if (now - last < std::chrono::milliseconds(20)) return;
      last = now;
      if (callbacks.cancelled()) throw Cancelled{t};
    });
  const RunContinuation* from =
      handover && handover->from && simulator.can_resume(*handover->from, r.trajectory) ? &*handover->from : nullptr;
  if (handover) {
    handover->handover.t = from ? from->t : 0.0;
    r.handovers.push_back(handover->handover);
    if (callbacks.handover) callbacks.handover(r.handovers.back());
  }
  const auto start = std::chrono::steady_clock::now();
  const double before = from ? r.wall_seconds : 0.0;
  r.stop = {};
  std::optional<LoopsClear> clear;
  try {
    if (from) {
      if (hand_back) simulator.hand_back_when_clear();
      simulator.resume(*from, r.trajectory);
      simulator.advance(settings.simulation.t_end, r.trajectory, progress);
    } else {
      simulator.run(q0, u0, r.trajectory, progress);
    }
  } catch (const LoopsClear& c) {
    clear = c;
  } catch (const Cancelled& c) {
    char what[64];
    std::snprintf(what, sizeof what, "cancelled at t = %.9g", c.t);
    r.stop = {RunStopKind::cancelled, what};
  } catch (const SingularConfigurationError& e) {
    r.stop = stop_of(RunStopKind::singular_configuration, e);
  } catch (const RunWatchError& e) {
    r.stop = stop_of(RunStopKind::watch, e);
  } catch (const IntegrationError& e) {
    r.stop = stop_of(RunStopKind::integration, e);
  } catch (const InputError& e) {
    r.stop = stop_of(RunStopKind::input, e);
  } catch (const std::invalid_argument&) {
    throw;  // the settings or the model, not the run (ModelError too)
  } catch (const std::runtime_error& e) {
    r.stop = stop_of(RunStopKind::failure, e);  // e.g. a position analysis that does not converge
  }
  r.wall_seconds = before + std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  left = simulator.continuation();
  return clear;
}

// Why dca hands the run back.
std::string clear_reason(const LoopsClear& c) {
  char what[192];
  std::snprintf(what, sizeof what,
                "t = %.9g: the loops are clear of singular configurations again (sigma_min/sigma_max at least %.3g "
                "of the start's, %g required)",
                c.t, c.ratio, kGuardClear);
  return what;
}

}  // namespace

void check_run_settings(const RunSettings& settings) {
  if (settings.method != "auto") (void)method_info(settings.method);
  const SimulationSettings& sim = settings.simulation;
  const IntegratorSettings& is = sim.integrator;
  const auto refuse = [](const char* name, double value, const std::string& rule) {
    throw std::invalid_argument("`" + std::string(name) + " = " + exact_number(value) + "`: " + rule);
  };
  if (!(sim.t_end >= 0.0) || !std::isfinite(sim.t_end)) refuse("t_end", sim.t_end, "the end time must be a finite number of seconds >= 0");
  if (const auto problem = output_problem(sim.output_dt, sim.t_end)) refuse(problem->name.c_str(), problem->value, problem->rule);
  IntegratorSettings integrator = is;
  integrator.kind = run_integrator(settings, settings.method);
  if (const auto problem = integrator_problem(integrator, sim.t_end)) refuse(problem->name.c_str(), problem->value, problem->rule);
  if (const auto problem = watch_problem(sim.watch, integrator)) refuse(problem->name.c_str(), problem->value, problem->rule);
  if (sim.project && (!(sim.projection.position_tolerance > 0.0) || !std::isfinite(sim.projection.position_tolerance)))
    refuse("project_tolerance", sim.projection.position_tolerance, "must be a finite number > 0");
  check_settings(settings.formulation);
}

SimulationSettings run_simulation_settings(const RunSettings& settings, std::string_view method) {
  SimulationSettings sim = settings.simulation;
  sim.integrator.kind = run_integrator(settings, method);
  sim.guard_singular_configurations = settings.formulation.on_singular == FormulationSettings::OnSingular::stop;
  return sim;
}

MethodChoice run_method(const Model& model, const VecX& q0, const VecX& u0, const RunSettings& settings) {
  if (settings.method != "auto") return {settings.method, "asked for"};
  return default_method(model, q0, u0, settings.integrator.value_or(IntegratorKind::dopri5));
}

IntegratorKind run_integrator(const RunSettings& settings, std::string_view method) {
  if (settings.integrator) return *settings.integrator;
  const MethodInfo* m = find_method(method);
  return m && m->fixed_step ? IntegratorKind::rk4 : IntegratorKind::dopri5;
}

RunResult run(const Model& model, const VecX& q0, const VecX& u0, const RunSettings& settings,
              const RunCallbacks& callbacks) {
  check_run_settings(settings);
  RunResult r;
  MethodChoice choice = run_method(model, q0, u0, settings);
  const std::string method = choice.method;
  // The survey goes to the attempts, not into the result.
  const std::optional<SurveyedStart> survey = std::exchange(choice.survey, std::nullopt);
  if (settings.method == "auto") r.choice = std::move(choice);
  std::optional<RunContinuation> left;
  attempt(model, q0, u0, settings, callbacks, method, survey, nullptr, false, left, r);
  // `auto` does not stop where dca can go on: dca takes over, from the state where the guard
  // stopped the choice (Simulator::continuation) or else from the start, saying why. A cancelled
  // run stops as asked, a failed input would fail dca too, and a model dca does not take (drives)
  // keeps the stop.
  const std::string fallback = "dca";
  if (settings.method != "auto" || method == fallback || !method_info(fallback).scope_problem(model, q0).empty())
    return r;
  // dca that went on from the guard's stop hands the run back to the choice once the loops are
  // clear of the singular configuration: dca costs several times the choice's evaluation
  // (docs/methods.md, "The run"). The hysteresis (kGuardNear to kGuardClear) makes each cycle a
  // stretch of the motion; kHandBacks only bounds the record of a long run, after which dca runs on.
  constexpr int kHandBacks = 1000;
  for (int back = 0; !r.completed() && r.stop.kind != RunStopKind::cancelled && r.stop.kind != RunStopKind::input;
       ++back) {
    HandoverTo to{{method, fallback, r.stop.message}, std::move(left)};
    const std::optional<LoopsClear> clear =
        attempt(model, q0, u0, settings, callbacks, fallback, survey, &to, back < kHandBacks, left, r);
    if (!clear) break;
    HandoverTo again{{fallback, method, clear_reason(*clear), 0.0, true}, std::move(left)};
    attempt(model, q0, u0, settings, callbacks, method, survey, &again, false, left, r);
  }
  // A completed run ends with the row at t_end, whatever the hand-overs did.
  if (r.completed() && (r.trajectory.rows.empty() || r.trajectory.rows.back()(0) != settings.simulation.t_end))
    throw std::logic_error("run: completed without the row at t_end");
  return r;
}

}  // namespace loopdyn
