// Simulator: ties a Model, a Formulation and an integrator over the formulation's state x
// (Formulation::state_size etc.; [q; u] for the methods in joint coordinates), and records a
// Trajectory of joint coordinates at the output times. Optionally projects every accepted step onto the
// constraint manifold (projection.hpp) and records joint reaction forces (reactions.hpp).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "loopdyn/loops/change_points.hpp"
#include "loopdyn/loops/constraints.hpp"
#include "loopdyn/formulations/formulation.hpp"
#include "loopdyn/run/integrators.hpp"
#include "loopdyn/loops/projection.hpp"
#include "loopdyn/loops/reactions.hpp"
#include "loopdyn/run/run_watch.hpp"

namespace loopdyn {

struct SimulationSettings {
  IntegratorSettings integrator;
  double t_end = 10.0;
  double output_dt = 0.01;  ///< rows at 0, output_dt, 2 output_dt, ... and t_end
  /// Mass-orthogonal projection of q, then u, after every accepted step, for any formulation
  /// (after Formulation::accept): the joint state of x (to_joint) is projected and mapped back
  /// (to_state), whatever the method's layout. dopri5 rows between steps are interpolated from
  /// projected states.
  bool project = false;
  ProjectionSettings projection;
  /// Record reaction.<joint>.fx fy fz tx ty tz for every tree and loop joint (Reactions), from
  /// the formulation's u̇ and multipliers at every output row.
  bool reactions = false;
  /// Append the formulation's own columns (Formulation::diagnostic_names) to every row.
  bool diagnostics = false;
  /// On a mechanism whose change points the survey does not walk (loops with more than one degree
  /// of freedom), stop with a SingularConfigurationError when the loops come near a singular
  /// configuration and the method cannot cross it (SingularityGuard, change_points.hpp). The CLI's
  /// `--on-singular continue` clears it.
  bool guard_singular_configurations = true;
  /// The run watch (run_watch.hpp) after every accepted step: closure of every row and the
  /// energy balance against bounds from the integrator's accuracy.
  WatchSettings watch;
  /// Measure the wall time spent in the method's derivative (Trajectory::evaluation_seconds): two
  /// clock reads per evaluation. bench/run_whole.sh sets it to weigh a run against its evaluations.
  bool time_evaluations = false;
};

/// Recorded rows: t, q.<joint>[.i], u.<joint>[.i], <marker>.x/.y/.z, energy, for models with
/// loops residual.position = max |Φ| and residual.velocity = max |G u| over the kept constraint
/// rows, with SimulationSettings::reactions the Reactions::column_names(), and with
/// SimulationSettings::diagnostics the formulation's diagnostic_names(). A model with applied forces
/// other than gravity has a `work` column after `energy`: the work of its non-conservative forces
/// since the start (springs are in `energy`), integrated with the run, so that energy − work stays
/// constant on an accurate run.
struct Trajectory {
  std::vector<std::string> columns;
  std::vector<VecX> rows;
  IntegrationStats stats;
  ProjectionStats projection;  ///< zero unless SimulationSettings::project
  /// Change points of the loops found before the run (change_points.hpp) and those crossed, in
  /// order (dopri5 places its steps around them).
  ChangePointSurvey change_points;
  std::vector<ChangePointCrossing> crossings;
  /// The run was watched by the SingularityGuard (a survey that did not walk, a method that cannot
  /// cross, the guard not turned off); a lower bound of ρ/ρ(q0) over the accepted states (ρ itself
  /// where the guard solved for it; SingularityGuard::relative_bound).
  bool guarded = false;
  double guard_smallest = 1.0;
  WatchSummary watch;  ///< the run watch's worst checks (watched = false when it was off)
  /// With SimulationSettings::time_evaluations: wall time inside the method's derivative (s).
  double evaluation_seconds = 0.0;
  /// Index of a column; throws std::out_of_range if absent.
  int column(std::string_view name) const;
  /// Value of a column in a row.
  double at(std::size_t row, std::string_view name) const { return rows.at(row)(column(name)); }
};

/// Thrown by a Simulator told to hand_back_when_clear(), at the first accepted state where the
/// loops are clear of singular configurations (ρ >= kGuardClear ρ(q0)); continuation() is then set.
/// Not a std::exception: not a failure.
struct LoopsClear {
  double t = 0.0;
  double ratio = 0.0;  ///< the lower bound of ρ/ρ(q0) there
};

/// Most output rows a run writes: a trajectory is kept in memory (`--output-dt 1e-12` over 10 s
/// asked for 1e13 rows and took gigabytes a second until it ran out).
inline constexpr double kMostOutputRows = 1e7;

/// The rows' rule: `output_dt` finite and > 0, and at most kMostOutputRows rows over `span`
/// seconds; nullopt when they keep it. output_times and the runs' check of their settings
/// (check_run_settings) refuse by it.
std::optional<SettingProblem> output_problem(double output_dt, double span);

/// Output times 0, dt, 2 dt, ... up to and including t_end (t_end appended when not a multiple).
/// Throws std::invalid_argument past kMostOutputRows.
std::vector<double> output_times(double t_end, double output_dt);

/// Where a run can go on with another method (Simulator::resume; run.hpp's hand-over): the
/// accepted state at which the SingularityGuard stopped it, or at which the loops were found clear
/// of singular configurations again (Simulator::hand_back_when_clear), and what the run carries on
/// (its work, its rows' grid, its watch). Such a state is the motion's: the integrator's error
/// control accepted it, the method completed it, the run watch checked it, and the guard stops
/// while the loops are still a step away from the singular configuration, before a method that
/// cannot cross it could leave the motion's branch. Any other stop leaves no continuation: its
/// state is not trusted.
struct RunContinuation {
  double t = 0.0;
  VecX q, u;
  VecX q_start;  ///< the run's start, to which the guard of a method taking over compares ρ
  /// The rows the guard watched, where it stopped the run: those a method taking over watches to
  /// hand the run back (Simulator::hand_back_when_clear).
  std::optional<Constraints> guarded_rows;
  double work = 0.0;           ///< of the applied forces since the start (the state's last component)
  double start_springs = 0.0;  ///< the springs' energy at the start (Trajectory's `work` column)
  double grid_origin = 0.0;    ///< the rows' times are grid_origin + k output_dt
  std::optional<RunWatch::Carry> watch;
};

class Simulator final : public OdeSystem {
 public:
  Simulator(const Model& model, Formulation& formulation, const SimulationSettings& settings);

  /// Integrates from (q0, u0); progress(t) is called at every output time.
  Trajectory run(const VecX& q0, const VecX& u0, const std::function<void(double)>& progress = {});
  /// The same into traj, which keeps the rows written (and the summaries so far) when the run
  /// throws: a stop by the watch, a singular configuration, an integration failure or progress.
  void run(const VecX& q0, const VecX& u0, Trajectory& traj, const std::function<void(double)>& progress = {});
  /// A run in pieces, for a caller that changes its inputs between them (Simulation): begin at
  /// (t0, q0, u0), writing the row at t0 into traj, then advance to later times, each piece writing
  /// the rows of its output times (every output_dt from its start, and its end) and the summaries
  /// so far. run() is begin at 0 and one advance to t_end. After a stop inside a piece (it throws as
  /// run does) only begin makes the Simulator usable again.
  void begin(double t0, const VecX& q0, const VecX& u0, Trajectory& traj);
  void advance(double t_end, Trajectory& traj, const std::function<void(double)>& progress = {});
  /// poll(t) is called every kPollEvery evaluations of the right-hand side, with the stage's time,
  /// between output times too (a bdf step on a large state, its Jacobian by difference quotients,
  /// can take longer than a user waits for Ctrl-C): a cheap check that may throw to stop the run,
  /// as progress may.
  static constexpr long kPollEvery = 64;
  void set_poll(std::function<void(double t)> poll) { poll_ = std::move(poll); }
  /// A survey of the loops' change points made before (MethodChoice::survey), which begin() takes
  /// instead of walking the configuration curve again when it starts from the same state, bit for
  /// bit, with the model's constraints.
  void use_survey(SurveyedStart survey) { known_survey_ = std::move(survey); }
  /// After a stop by the SingularityGuard, where the run can go on (RunContinuation); empty after
  /// any other stop and after a run that completed.
  const std::optional<RunContinuation>& continuation() const { return continuation_; }
  /// Whether resume(from, traj) can go on with this Simulator: its rows have traj's columns (a
  /// method's diagnostics differ) and its watch is on where from's was.
  bool can_resume(const RunContinuation& from, const Trajectory& traj) const;
  /// Instead of begin: goes on from where another Simulator of the same model and settings
  /// stopped (its continuation()), into the trajectory that run wrote; advance() then appends as
  /// if one method had run: rows on the same grid, the counts, the run watch's bounds and worst
  /// values, the projection's counts, the guard's record and the crossings go on, and a method
  /// that cannot cross singular configurations is guarded against ρ(q) of the run's start. Throws
  /// std::invalid_argument where can_resume says no.
  void resume(const RunContinuation& from, Trajectory& traj);
  /// After resume from a guard's stop: throw LoopsClear at the first accepted state where a
  /// SingularityGuard with the threshold kGuardClear no longer finds the loops near a singular
  /// configuration (on the rows the stopping guard watched, against ρ of the run's start), so that
  /// the run can go back to the faster method that stopped.
  void hand_back_when_clear() { hand_back_ = true; }
  /// The time reached: the end of the last piece.
  double time() const { return t_; }
  /// The joint state at time().
  void joint_state(VecX& q, VecX& u) const;

  /// The formulation's state, and the work of the applied forces (Trajectory's `work`) as one more
  /// component when the model has any.
  int size() const override { return formulation_.state_size() + (track_work_ ? 1 : 0); }
  void rhs(double t, const VecX& x, VecX& dx) override;
  void post_step(double t, VecX& x) override;
  bool rhs_known(double t, const VecX& x) override;
  /// Places a predicted change point inside a step (ChangePointMonitor).
  double adjust_step(double t, double h) override;

 private:
  /// The method's derivative, timed with SimulationSettings::time_evaluations.
  void derivative(double t, const VecX& x, Eigen::Ref<VecX> dx);
  VecX row(double t, const VecX& x_in);
  /// Positions and velocities at the joint state (q, u) the method completed last: the method's
  /// own where its completion swept them (Formulation::completed_kinematics) and, with `moved`,
  /// nothing changed the state since; else swept into `own`.
  const KinematicsData& completed_kinematics(const VecX& q, const VecX& u, bool moved, KinematicsData& own);
  void start_columns(std::vector<std::string>& columns) const;
  /// The formulation's part of an integrator state (a copy into x_ when the work rides along).
  const VecX& formulation_state(const VecX& x);
  void finish(Trajectory& traj) const;
  /// Surveys the change points (into traj) and watches them (watch_change_points).
  void prepare_change_points(Trajectory& traj, const VecX& q0, const VecX& u0);
  /// Refuses a formulation that cannot cross a change point of traj's survey reachable from (q, u)
  /// (Formulation::change_point_refusal), sets up the monitor, and the guard against ρ(q_start)
  /// where the survey did not walk.
  void watch_change_points(const Trajectory& traj, const VecX& q_start, const VecX& q, const VecX& u);
  /// Starts the method at (t, q, u) with the work done so far: x_now_, and q_, u_ its joint state.
  void enter(double t, const VecX& q, const VecX& u, double work);
  /// The continuation at the accepted state x at t, q_ and u_ its joint state.
  RunContinuation continuation_at(double t, const VecX& x) const;

  const Model& model_;
  Formulation& formulation_;
  SimulationSettings settings_;
  KinematicsData output_kin_;
  const Constraints& constraints_;
  ConstraintData constraint_data_;
  VecX phi_;
  VecX phidot_;
  VecX q_, u_, udot_;
  VecX row_x_, row_q_, row_u_;  ///< an output row's completed state, no allocation per row
  std::function<void(double)> poll_;
  const bool track_work_;
  VecX x_, dx_;                   ///< formulation state and derivative when the work rides along
  VecX before_;  ///< an accepted joint-layout state before the method completes it (the watch's continuity)
  KinematicsData power_kin_;      ///< for the power of the applied forces at a stage
  KinematicsData step_kin_;       ///< the accepted state's, for the watch and the guards alike
  ForceData power_forces_;
  double start_springs_ = 0.0;    ///< spring energy at the start, for the `work` column
  long accepted_ = 0, evaluations_ = 0;  ///< counted here too, for a run that stops inside integrate()
  double evaluation_seconds_ = 0.0;
  std::optional<RunWatch> watch_;  ///< made by run() when settings_.watch.enabled
  std::optional<SurveyedStart> known_survey_;  ///< use_survey's
  std::optional<ChangePointMonitor> monitor_;  ///< made by run() when the survey found points
  std::optional<SingularityGuard> guard_;      ///< made by run() when the survey did not walk
  bool hand_back_ = false;
  std::optional<Constraints> clear_rows_;      ///< RunContinuation::guarded_rows, which clear_ watches
  std::optional<SingularityGuard> clear_;      ///< resume's, with hand_back_: kGuardClear
  double guard_smallest_ = 1.0;
  bool guarded_before_ = false;  ///< resume: the run was guarded before this Simulator took it over
  std::optional<RunContinuation> continuation_;  ///< set where the guard stops the run
  std::vector<ChangePointCrossing> crossings_;
  double t_ = 0.0;  ///< time reached by begin / advance
  double grid_origin_ = 0.0;  ///< the next piece's rows at grid_origin_ + k output_dt
  /// The last times of the model's tables (drives, load profiles, controller targets) before which
  /// a run lands with a row: a step past one fails, and the run stops with its rows to there.
  std::vector<double> function_ends_;
  VecX q_start_;              ///< the run's start (RunContinuation::q_start)
  VecX x_now_;      ///< integrator state there
  std::optional<Projector> projector_;  ///< made by run() when settings_.project
  std::optional<Reactions> reactions_;  ///< when settings_.reactions
  std::vector<int> drive_rows_;        ///< kept row of each drive (its column `drive.<joint>`)
};

}  // namespace loopdyn
