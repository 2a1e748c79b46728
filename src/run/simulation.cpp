// Simulation (simulation.hpp): a Simulator advanced one step at a time with held forces.
#include "loopdyn/run/simulation.hpp"
#include "loopdyn/core/names.hpp"

#include <cmath>
#include <sstream>
#include <stdexcept>

namespace loopdyn {

Simulation::Simulation(const Model& model, const RunSettings& settings, const VecX& q0, const VecX& u0)
    : model_(model), tau_(VecX::Zero(model.nv)), q_(q0), u_(u0) {
  const VecX* tau = &tau_;  // the Simulation does not move (copy and move are deleted)
  model_.callbacks.push_back([tau](double, const Model&, const KinematicsData&, const VecX&, const VecX&,
                                   AppliedForces& out) { out.tau += *tau; });
  MethodChoice choice = run_method(model_, q0, u0, settings);
  method_ = choice.method;
  formulation_ = make_formulation(method_, model_, settings.formulation);
  simulator_ = std::make_unique<Simulator>(model_, *formulation_, run_simulation_settings(settings, method_));
  if (choice.survey) simulator_->use_survey(*choice.survey);
  simulator_->begin(0.0, q0, u0, trajectory_);
}

void Simulation::step(double dt, const VecX& tau) {
  if (!stopped_.empty()) throw std::logic_error("the simulation stopped: " + stopped_);
  if (!(dt > 0.0) || !std::isfinite(dt))
    throw std::invalid_argument("step: dt must be finite and > 0, got " + short_number(dt));
  // A dt below the spacing of doubles at t left t, the rows and the state as they were, silently.
  if (simulator_->time() + dt == simulator_->time()) {
    std::ostringstream s;
    s.precision(9);
    s << "step: dt = " << dt << " s does not advance t = " << simulator_->time()
      << " s (it is below the spacing of times there)";
    throw std::invalid_argument(s.str());
  }
  if (tau.size() != model_.nv)
    throw std::invalid_argument("step: tau has " + std::to_string(tau.size()) + " entries, expected nv = " +
                                std::to_string(model_.nv));
  for (Eigen::Index k = 0; k < tau.size(); ++k)
    if (!std::isfinite(tau(k)))
      throw std::invalid_argument("step: tau[" + std::to_string(k) + "] (" + model_.speed_names({static_cast<int>(k)}) +
                                  ") is not finite");
  tau_ = tau;
  const double t = simulator_->time(), added = dt - t_lost_, t_end = t + added;
  try {
    simulator_->advance(t_end, trajectory_);
  } catch (const std::exception& e) {
    stopped_ = e.what();
    throw;
  }
  t_lost_ = (t_end - t) - added;
  simulator_->joint_state(q_, u_);
}

}  // namespace loopdyn
