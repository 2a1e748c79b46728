// Formulation: maps (t, q, u) to u̇ (and loop multipliers λ where the method has them), applied
// forces of the model included. One class per method of the papers, each owning a workspace
// sized at construction; names are the CLI's `--method` values (docs/methods.md).
#pragma once

#include <any>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "loopdyn/core/forces.hpp"
#include "loopdyn/core/errors.hpp"
#include "loopdyn/core/model.hpp"
#include "loopdyn/formulations/dca_settings.hpp"
#include "loopdyn/formulations/loop_method_settings.hpp"
#include "loopdyn/formulations/rcr_settings.hpp"
#include "loopdyn/formulations/srm_settings.hpp"
#include "loopdyn/formulations/step_plan.hpp"

namespace loopdyn {

class Constraints;
class RowChoice;

/// Every method's settings (each uses what applies to it): the ones the loop methods share
/// (LoopMethodSettings, the base) and each method's own struct, beside it with its option table
/// (formulations/<method>_settings.hpp). formulation_options() (registry.hpp) is their table.
struct FormulationSettings : LoopMethodSettings {
  RcrSettings rcr;
  SrmSettings srm;
  DcaSettings dca;
  /// Settings of methods registered from outside the library (register_method, registry.hpp),
  /// by method name: their own struct, created with its defaults by the first option that sets it.
  std::map<std::string, std::any, std::less<>> extras;

  /// The settings of method `method` registered from outside (created at the first call).
  template <class T>
  T& extra(std::string_view method) {
    auto it = extras.find(method);
    if (it == extras.end()) it = extras.emplace(std::string(method), T{}).first;
    return std::any_cast<T&>(it->second);
  }
  /// Their values; the defaults when no option has set them.
  template <class T>
  T extra(std::string_view method) const {
    const auto it = extras.find(method);
    return it == extras.end() ? T{} : std::any_cast<const T&>(it->second);
  }
};

/// The remedy a SingularConfigurationError names when a joint-coordinate method's steps came
/// closer to a change point than the round-off of its derivative there allows (change_points.hpp).
inline constexpr std::string_view kChangePointToleranceAdvice =
    "Loosen `rtol` and `atol`, or use `method = dca`, whose matrices stay regular there";

/// Something a formulation reports during a run (a singular configuration entered or left).
struct FormulationEvent {
  double t = 0.0;
  std::string message;
};

/// State layout of a method: joint coordinates [q; u], or absolute body coordinates.
enum class Coordinates { joint, absolute };

class Formulation {
 public:
  explicit Formulation(const Model& model);
  virtual ~Formulation() = default;
  virtual std::string_view name() const = 0;
  const Model& model() const { return model_; }
  /// u̇ (nv) at (t, q, u). Throws std::runtime_error with the time on a physics failure.
  virtual void accelerations(double t, const VecX& q, const VecX& u, Eigen::Ref<VecX> udot) = 0;
  /// u̇ of the joint state of the method's state x (to_joint) and the multipliers there: what a
  /// trajectory's output rows report. The default is accelerations() at to_joint(x); a method
  /// whose multipliers depend on more than the joint state (srm's iterates) overrides it.
  virtual void joint_accelerations(double t, const VecX& x, Eigen::Ref<VecX> udot);
  /// The power of the applied forces (force elements, callbacks) as the last accelerations()
  /// evaluated them, at its (completed) joint state; nullopt where the method keeps none (the
  /// Simulator then evaluates it). A run integrates it as the work of the applied forces.
  virtual std::optional<double> applied_power() const { return std::nullopt; }
  /// Loop-closure multipliers of the last call (empty for methods without them).
  virtual const VecX& multipliers() const { return no_multipliers_; }
  /// The loop rows the method solves with, those multipliers() belong to: the model's kept rows
  /// (model.loops().constraints), or the method's own copy whose rows of a geometrically redundant
  /// loop it chooses again along the motion (row_choice.hpp). Read it after every accepted step.
  virtual const Constraints& constraints() const;
  /// Methods that hold the loops closed by position and velocity analysis (gcp, nullspace: paper
  /// 001 eqs 12-14) overwrite the dependent coordinates and speeds of (q, u) with the values that
  /// close the loops for the given independent ones; the others leave (q, u) as they are. The
  /// Simulator calls it on every stage state before accelerations(), after every accepted step and
  /// on every output row, so that only the independent coordinates are integrated. A completed
  /// state must come back as it is, bit for bit (evaluated_at relies on it).
  virtual void complete_state(double /*t*/, Eigen::Ref<VecX> /*q*/, Eigen::Ref<VecX> /*u*/) {}
  /// complete_state() on the state of an accepted step. Methods that choose
  /// their partition again (rcr) do it here, between steps, so that every step integrates one
  /// smooth right-hand side.
  virtual void complete_accepted_state(double t, Eigen::Ref<VecX> q, Eigen::Ref<VecX> u) { complete_state(t, q, u); }
  /// Positions and velocities of every body at the state the last complete_state() or
  /// complete_accepted_state() wrote, where the method computed them there (the partitioned
  /// methods' analysis: embedding, gcp, nullspace; rcr's completion), so that an output row and
  /// the accepted step's checks do not sweep them again; nullptr where it did not. Valid until
  /// the next call on the method.
  virtual const KinematicsData* completed_kinematics() const { return nullptr; }
  /// Why the method, with its settings, cannot cross a change point of the loops
  /// (change_points.hpp), and what to use instead; empty when it can. The Simulator refuses to
  /// start a run that can reach one with it.
  virtual std::string change_point_refusal() const { return {}; }
  /// Whether the method crosses singular configurations that no survey predicted (loops with more
  /// than one degree of freedom: change_points.hpp's guard). Only dca does: its augmented
  /// Lagrangian stays positive definite there and its projections are mass-orthogonal; every
  /// joint-coordinate method evaluates through G_D⁻¹ or (G M⁻¹Gᵀ)⁻¹ and was measured to leave
  /// the motion there without notice.
  virtual bool crosses_singular_configurations() const { return false; }
  /// Called by the Simulator before a run from (q0, u0) with its integrator. A method whose
  /// parameters depend on the step (srm: ε ~ h) sets them here, and throws std::invalid_argument
  /// naming the setting when it cannot run with that integrator. The default accepts every one.
  virtual void start(const StepPlan& /*plan*/, const VecX& /*q0*/, const VecX& /*u0*/) {}
  /// One line on the method's own parameters of the run (after start(): srm's ε, dca's assembly
  /// tree), for the run's summary; empty when it has none.
  virtual std::string summary() const { return {}; }
  /// Names of the method's own diagnostic columns (`--diagnostics`), e.g. iteration counts and
  /// residuals of its last accepted step; none by default.
  virtual std::vector<std::string> diagnostic_names() const { return {}; }
  /// Their values (diagnostic_names().size() of them) after the last accepted step or completed row.
  virtual void diagnostic_values(Eigen::Ref<VecX> /*out*/) const {}
  /// Receives events (the default sink drops them).
  void set_event_sink(std::function<void(const FormulationEvent&)> sink) { sink_ = std::move(sink); }

  // The state x the method integrates. The Simulator and the integrators see only the eight
  // functions below; output (the CSV's joint columns, markers, energy, residuals, reactions) reads
  // the joint coordinates of x through to_joint(). The defaults are the joint layout x = [q; u]
  // (nq + nv); a method in absolute coordinates (dca, its to_joint() inverting each joint's
  // kinematics: body_coordinates.hpp) or with several copies of the state (srm's iterates)
  // overrides them.
  /// How x is laid out: [q; u] (joint) or per-body poses and velocities (absolute).
  virtual Coordinates coordinates() const { return Coordinates::joint; }
  /// Size of x.
  virtual int state_size() const { return model_.nq + model_.nv; }
  /// x of the joint state (q, u); quaternions re-normalized.
  virtual void to_state(const VecX& q, const VecX& u, Eigen::Ref<VecX> x) const;
  /// ẋ at (t, x). Joint layout: (q, u) completed (complete_state), then [q̇(q, u); u̇].
  virtual void derivative(double t, const VecX& x, Eigen::Ref<VecX> dx);
  /// Whether derivative(t, x) would return what the last derivative() call returned: that call was
  /// at time t and x is the completed state it evaluated. Joint layout: ẋ depends on x only through
  /// its completion, and complete_state leaves a completed state as it is (Newton stops at once,
  /// the dependent speeds are solved again from the same G and independent speeds). dopri5 then
  /// keeps its last stage as the next step's first when accept() only completed the accepted state
  /// (one evaluation a step less). False for a method that overrides derivative().
  bool evaluated_at(double t, const VecX& x) const;
  /// x after an accepted step. Joint layout: quaternions re-normalized, complete_accepted_state.
  virtual void accept(double t, Eigen::Ref<VecX> x);
  /// x interpolated between steps (dense output), made a state of the method. Joint layout:
  /// complete_state.
  virtual void complete(double t, Eigen::Ref<VecX> x);
  /// The joint coordinates of an accepted or completed x.
  virtual void to_joint(const VecX& x, Eigen::Ref<VecX> q, Eigen::Ref<VecX> u) const;

 protected:
  void report(double t, std::string message) const {
    if (sink_) sink_({t, std::move(message)});
  }
  /// RowChoice::choose_again at the accepted configuration q, reported as an event: what the
  /// methods that solve with a copy of the kept rows do first in complete_accepted_state. True
  /// when it exchanged rows.
  bool choose_rows_again(RowChoice& rows, double t, const Eigen::Ref<const VecX>& q) const;

  const Model& model_;

 private:
  VecX q_, u_, udot_;  ///< derivative()'s workspace (joint layout)
  /// The completed state [q; u] and the time of the last derivative() call (evaluated_at); t NaN
  /// before the first.
  VecX evaluated_;
  double evaluated_t_ = std::numeric_limits<double>::quiet_NaN();
  VecX no_multipliers_;
  std::function<void(const FormulationEvent&)> sink_;
};

}  // namespace loopdyn
