// Simulation: a run its caller advances step by step, changing the inputs between steps: a digital
// controller at a fixed rate, hardware or a learning agent in the loop. step(dt, tau) integrates
// [t, t + dt] with the generalized forces tau held over the step (zero-order hold, as a digital
// controller applies them) on top of the model's forces, with the method, integrator, watch,
// projection and options of a run (RunSettings, as run()). The trajectory holds the rows of the
// steps: the start, every output_dt within a step, and each step's end.
//
// `auto` picks the method at the start and does not hand over: a stop throws what run() would
// record (SingularConfigurationError, RunWatchError, IntegrationError, InputError,
// std::runtime_error) and leaves the simulation stopped, its rows kept; a later step throws
// std::logic_error naming that stop. A step allocates its integrator's stage vectors and its rows
// (a few vectors of nx), like a run of one output interval.
#pragma once

#include <memory>
#include <string>

#include "loopdyn/run/run.hpp"

namespace loopdyn {

class Simulation {
 public:
  /// From (q0, u0) at t = 0, which must close the loops (start_state makes such a state).
  Simulation(const Model& model, const RunSettings& settings, const VecX& q0, const VecX& u0);
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  /// Integrates [time(), time() + dt] with tau (nv generalized forces) held. dt > 0, tau finite.
  /// The times are summed with compensation (Kahan): 200 steps of 0.01 end at t = 2, not
  /// 2.0000000000000013, which a table ending at 2 refused.
  void step(double dt, const VecX& tau);
  double time() const { return simulator_->time(); }
  const VecX& q() const { return q_; }
  const VecX& u() const { return u_; }
  const Trajectory& trajectory() const { return trajectory_; }
  const std::string& method() const { return method_; }

 private:
  Model model_;  ///< the model with the held forces' callback
  VecX tau_;     ///< the forces of the current step, read by that callback
  std::unique_ptr<Formulation> formulation_;
  std::unique_ptr<Simulator> simulator_;
  Trajectory trajectory_;
  VecX q_, u_;
  std::string method_;
  std::string stopped_;  ///< the stop's message, once stopped
  double t_lost_ = 0.0;  ///< the rounding the sum of the steps' dt has lost so far (Kahan's c)
};

}  // namespace loopdyn
