// Time integrators for first-order systems ẋ = f(t, x): fixed-step Heun (RK2) and classical RK4,
// adaptive Dormand–Prince 5(4) with PI step-size control and dense output (Hairer, Nørsett,
// Wanner, Solving ODEs I, II.4-II.6), and for stiff systems the implicit variable-order BDF of
// SUNDIALS' CVODE (Newton iterations on a difference-quotient Jacobian, dense output). A
// post-step hook runs after every accepted step (quaternion normalization, constraint projection).
#pragma once

#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "loopdyn/core/errors.hpp"
#include "loopdyn/core/spatial.hpp"
#include "loopdyn/formulations/step_plan.hpp"

namespace loopdyn {

/// A first-order system of fixed size.
class OdeSystem {
 public:
  virtual ~OdeSystem() = default;
  virtual int size() const = 0;
  /// dx = f(t, x); dx is sized size() on entry.
  virtual void rhs(double t, const VecX& x, VecX& dx) = 0;
  /// Called on the state after every accepted step; may modify it (normalize, project).
  virtual void post_step(double /*t*/, VecX& /*x*/) {}
  /// Whether f(t, x) is the result of the last rhs() call, for an x that post_step modified: it
  /// only completed the state that call evaluated (Formulation::evaluated_at). dopri5 then keeps
  /// that call's result as its next first stage instead of evaluating f again.
  virtual bool rhs_known(double /*t*/, const VecX& /*x*/) { return false; }
  /// dopri5 asks before every step attempt from the last accepted time t with the controller's
  /// step h; the system may return a shorter one (a change point ahead: change_points.hpp).
  virtual double adjust_step(double /*t*/, double h) { return h; }
};

enum class IntegratorKind { rk2, rk4, dopri5, bdf };
std::optional<IntegratorKind> parse_integrator(std::string_view name);
std::string_view to_string(IntegratorKind kind);
/// dopri5 and bdf choose their steps by rtol and atol; rk2 and rk4 take fixed steps of dt.
constexpr bool error_controlled(IntegratorKind kind) {
  return kind == IntegratorKind::dopri5 || kind == IntegratorKind::bdf;
}

/// Smallest rtol > 0 dopri5 and bdf take: 100 ε (integrate refuses a smaller one).
inline constexpr double kSmallestRtol = 100.0 * std::numeric_limits<double>::epsilon();

struct IntegratorSettings {
  IntegratorKind kind = IntegratorKind::rk4;
  double dt = 1e-3;       ///< fixed step (rk2, rk4); initial step guess for dopri5, bdf (<= 0: automatic)
  double rtol = 1e-8;     ///< relative tolerance (dopri5, bdf): 0 or at least kSmallestRtol
  double atol = 1e-10;    ///< absolute tolerance (dopri5, bdf)
  double dt_max = std::numeric_limits<double>::infinity();  ///< largest step (dopri5, bdf)
  long max_steps = 100'000'000;
};

/// A setting no run can take: its name as the library's options spell it (`rtol`, `dt`), its
/// value, and the rule it breaks, with settings named in backticks (front ends respell them).
struct SettingProblem {
  std::string name;
  double value = 0.0;
  std::string rule;
};
/// The first of the settings that `integrate` with `settings.kind` cannot take over `span`
/// seconds (tolerances' signs and the smallest rtol; a fixed step's sign and its step budget),
/// nullopt when it can take them all. The one statement of these rules: integrate() refuses by
/// it, and the runs' check of their settings (run.hpp, check_run_settings) before any model work.
std::optional<SettingProblem> integrator_problem(const IntegratorSettings& settings, double span);

/// What a formulation is told of the integrator (Formulation::start).
StepPlan step_plan(const IntegratorSettings& settings);

struct IntegrationStats {
  long rhs_evaluations = 0;
  long steps_accepted = 0;
  long steps_rejected = 0;
};

/// Integrates from (t0, x0) and calls output(t, x) at every time of t_out (sorted, >= t0).
/// Fixed-step methods shorten the step that would pass an output time so that it lands on it;
/// dopri5 and bdf report output times by dense output (Hairer's 4th-order continuous extension;
/// CVODE's interpolating polynomial) without shortening their steps. Returns the work done (bdf:
/// its evaluations include those of its difference-quotient Jacobians; rejected steps count error
/// test and Newton convergence failures).
IntegrationStats integrate(OdeSystem& system, const IntegratorSettings& settings, double t0, const VecX& x0,
                           const std::vector<double>& t_out,
                           const std::function<void(double t, const VecX& x)>& output);

}  // namespace loopdyn
