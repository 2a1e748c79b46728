// Formulation: maps (t, q, u) to u̇ (and loop multipliers λ where the method has them), applied
// forces of the model included. One class per method of the papers, each owning a workspace
// sized at construction; names are the CLI's `--method` values (docs/methods.md).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "loopdyn/core/forces.hpp"
#include "loopdyn/core/errors.hpp"
#include "loopdyn/core/model.hpp"
#include "loopdyn/formulations/step_plan.hpp"

namespace loopdyn {

class Constraints;
class RowChoice;

/// Options shared by the formulations (each uses what applies to it).
struct FormulationSettings {
  /// Baumgarte stabilization of the acceleration constraint (paper 001 eqs 6-9):
  /// Φ̈ + 2α Φ̇ + β² Φ = 0. Zero (the default) integrates G u̇ = γ unstabilized.
  double baumgarte_alpha = 0.0;
  double baumgarte_beta = 0.0;
  /// Relative threshold below which a pivot of the multiplier system counts as zero (rank loss at
  /// a singular configuration or a redundant constraint): multipliers are then minimum-norm.
  double rank_tolerance = 1e-10;
  /// Position analysis of gcp and nullspace (paper 001 eqs 12-13): Newton stops when every kept
  /// constraint row has |Φ| <= position_tolerance (metres for `along` rows, cosines for `dot`
  /// rows), and fails after max_position_iterations.
  double position_tolerance = 1e-10;
  int max_position_iterations = 25;
  /// gcp, nullspace and embedding choose the dependent coordinates again (001 §2.2), between two
  /// steps, when the condition number of the dependent block has grown by this factor since they
  /// were chosen (and another choice is twice better); a coordinate marked independent yields when
  /// keeping it would cost this factor (formulations/coordinate_partition.hpp). Small: the
  /// independent coordinates must not come near a limit of their motion within a step (issue 36:
  /// 100 lost 20 % of the energy of a triple rocker at rk4 h = 1e-3, 10 lost 1e-4, 4 loses 2e-6).
  double partition_condition_growth = 4.0;
  /// rcr chooses its independent speeds again, between two steps, when the condition indicator of
  /// a loop's dependent speeds (formulations/rcr.hpp) has grown by this factor since they were
  /// chosen, and keeps a speed marked independent within this factor of the choice without the
  /// mark. rcr integrates its dependent coordinates, so an integration error of the independent
  /// speeds reaches them multiplied by the indicator, and no position analysis takes it back
  /// (paper 004's five-bar, docs/methods.md).
  double rcr_indicator_growth = 10.0;
  /// What a method does at a singular configuration of the loops (a change point, where the
  /// constraint rows lose rank and branches of the motion meet):
  ///  * `stop` (the default): stop with an error naming the method, the time, the loops and the
  ///    rank, and what to use instead. The Lagrange-multiplier methods (lagrange-dense,
  ///    lagrange-on) refuse runs that can reach a change point (change_points.hpp) and stop when
  ///    their multiplier system loses rank: integrating G u̇ = γ they hold no position information
  ///    that tells the continuing branch from the others, and on the IFToMM N-four-bar they leave
  ///    the motion at the second crossing without notice. `rcr` stops when the condition indicator
  ///    of a loop's dependent speeds exceeds singular_condition with every choice of them.
  ///  * `proceed`: report and go on (the Lagrange methods with minimum-norm multipliers; rcr with
  ///    its best choice), for studies of what happens there.
  /// gcp, nullspace, embedding and rcr choose their partition again on their own
  /// (formulations/coordinate_partition.hpp, formulations/rcr.hpp).
  enum class OnSingular { stop, proceed };
  OnSingular on_singular = OnSingular::stop;
  double singular_condition = 1e6;
  /// srm (paper 003, formulations/srm.hpp): the update λ_s = λ_{s−1} + ε⁻¹(G u_s + α Φ_s) of its
  /// iterates s = 1..srm_iterations. ε in s/kg (λ is a force, G u a speed); unset: ε = h·S·a_max,
  /// with h the fixed step, S the number of iterates and a_max the largest eigenvalue of
  /// G M⁻¹ Gᵀ at the initial configuration: half the explicit stability limit (003's
  /// ε ~ h for its unit bars; formulations/srm.hpp has the limit). α in 1/s: the rate at which
  /// position drift decays (Φ̇ = −αΦ once the iterates converge). It is not tied to h: λ carries
  /// αΦ/ε, and with α ~ 1/h that term, O(Φ/h²), would bias the multipliers by O(1) for an O(h²)
  /// drift (measured: reactions 1.5e-3 off lagrange-dense's at every h on the four-bar of 000).
  std::optional<double> srm_epsilon;
  double srm_alpha = 20.0;
  int srm_iterations = 2;
  /// srm stops (on_singular = stop) or reports when the constraint direction its iterates still
  /// correct has a stiffness (Rayleigh quotient of G M⁻¹ Gᵀ) below this fraction of the smallest
  /// eigenvalue of G M⁻¹ Gᵀ at the start: the loops have come that much nearer a singular
  /// configuration, where the iterates no longer converge (formulations/srm.hpp). 0 disables it.
  double srm_min_stiffness = 0.1;
  /// srm stops (on_singular = stop) or reports when the work its constraint forces have done since
  /// the start, |∫ −λᵀ G u dt|, exceeds this fraction of the mechanism's energy scale E_s, the
  /// largest T + |V − V(0)| so far (V gravity and springs), at least its weight × 1 m: ideal constraints
  /// do no work, so this is the energy srm's regularization has added or removed, its own error,
  /// which moves the motion along the loops. 1e-5 is ten times a fixed step's accuracy τ = 1e-6
  /// (WatchSettings::fixed_step_accuracy), the zoo's energy bound (docs/methods.md, "srm").
  /// 0 disables it.
  double srm_max_work = 1e-5;
  /// dca (paper 004, formulations/dca.hpp), the paper's values as defaults (004 §4.1): penalty α
  /// of the augmented Lagrangian λ = λ* + α(G a + ν) (eqs 6, 17), in 1/kg for a force per unit
  /// acceleration of the rows (004 works in SI units; formulations/dca.hpp has why 1e6 needs no
  /// scaling for its examples); μ (damping ratio) and Ω (natural frequency, rad/s) of the
  /// Baumgarte-type terms ν = −γ + 2μΩ Φ̇ + Ω² Φ (eq 6); at most dca_max_iterations iterations of
  /// the multipliers per acceleration evaluation and per projection, which stop when the largest
  /// change of a body acceleration (m/s², rad/s²) falls below dca_acceleration_tolerance (ε_a), of a
  /// position increment (m, rad) below dca_position_tolerance (ε_p), of a velocity (m/s, rad/s)
  /// below dca_velocity_tolerance (ε_v).
  double dca_alpha = 1e6;
  double dca_mu = 1.0;
  double dca_omega = 1.0;
  int dca_max_iterations = 10;
  double dca_position_tolerance = 1e-14;
  double dca_velocity_tolerance = 1e-12;
  double dca_acceleration_tolerance = 1e-10;
  /// dca projects positions, then velocities, mass-orthogonally onto the constraints after every
  /// accepted step (004 §3, the paper's second variant); false: its first variant, the augmented
  /// Lagrangian with the Baumgarte-type terms alone.
  bool dca_projections = true;
  /// Threads of the methods that run in parallel (dca's assembly and disassembly); 0: the
  /// machine's cores. Results do not depend on it (formulations/dca.hpp).
  int threads = 0;
};

/// The remedy a SingularConfigurationError names when a joint-coordinate method's steps came
/// closer to a change point than the round-off of its derivative there allows (change_points.hpp).
inline constexpr std::string_view kChangePointToleranceAdvice =
    "Loosen --rtol/--atol, or use --method dca, whose matrices stay regular there";

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
  /// on every output row, so that only the independent coordinates are integrated.
  virtual void complete_state(double /*t*/, Eigen::Ref<VecX> /*q*/, Eigen::Ref<VecX> /*u*/) {}
  /// complete_state() on the state of an accepted step. Methods that choose
  /// their partition again (rcr) do it here, between steps, so that every step integrates one
  /// smooth right-hand side.
  virtual void complete_accepted_state(double t, Eigen::Ref<VecX> q, Eigen::Ref<VecX> u) { complete_state(t, q, u); }
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

  // The state x the method integrates. The Simulator and the integrators see only the seven
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
  /// methods that solve with a copy of the kept rows do first in complete_accepted_state.
  void choose_rows_again(RowChoice& rows, double t, const Eigen::Ref<const VecX>& q) const;

  const Model& model_;

 private:
  VecX q_, u_, udot_;  ///< derivative()'s workspace (joint layout)
  VecX no_multipliers_;
  std::function<void(const FormulationEvent&)> sink_;
};

}  // namespace loopdyn
