#include "loopdyn/run/run.hpp"
#include "loopdyn/formulations/registry.hpp"
#include "loopdyn/run/method_choice.hpp"

#include <chrono>
#include <cstdio>
#include <utility>

namespace loopdyn {

namespace {

// Thrown through the integrator when RunCallbacks::cancelled says so; not a std::exception, so that
// nothing between here and the Simulator takes it for a failure.
struct Cancelled {
  double t;
};

RunStop stop_of(RunStopKind kind, const std::exception& e) { return {kind, e.what()}; }

// One method's run from (q0, u0) into r, with the survey `auto`'s choice made there if any; a stop
// is recorded in r.stop, settings errors throw.
void attempt(const Model& model, const VecX& q0, const VecX& u0, const RunSettings& settings,
             const RunCallbacks& callbacks, const std::string& method, const std::optional<SurveyedStart>& survey,
             RunResult& r) {
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
  const auto start = std::chrono::steady_clock::now();
  r.stop = {};
  try {
    simulator.run(q0, u0, r.trajectory, progress);
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
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

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
  RunResult r;
  MethodChoice choice = run_method(model, q0, u0, settings);
  const std::string method = choice.method;
  // The survey goes to the attempts, not into the result.
  const std::optional<SurveyedStart> survey = std::exchange(choice.survey, std::nullopt);
  if (settings.method == "auto") r.choice = std::move(choice);
  attempt(model, q0, u0, settings, callbacks, method, survey, r);
  // `auto` does not stop where dca can go on: it starts again with dca, saying why. A cancelled run
  // stops as asked, a failed input would fail dca too, and a model dca does not take (drives) keeps
  // the stop.
  constexpr std::string_view kFallback = "dca";
  if (settings.method == "auto" && method != kFallback && !r.completed() && r.stop.kind != RunStopKind::cancelled &&
      r.stop.kind != RunStopKind::input &&
      method_info(kFallback).scope_problem(model, q0).empty()) {
    r.handovers.push_back({method, std::string(kFallback), r.stop.message});
    if (callbacks.handover) callbacks.handover(r.handovers.back());
    attempt(model, q0, u0, settings, callbacks, std::string(kFallback), survey, r);
  }
  return r;
}

}  // namespace loopdyn
