#include "loopdyn/run/simulator.hpp"

#include <chrono>
#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "loopdyn/core/names.hpp"
#include "loopdyn/loops/loop_structure.hpp"
#include "loopdyn/formulations/registry.hpp"

namespace loopdyn {

int Trajectory::column(std::string_view name) const {
  for (std::size_t k = 0; k < columns.size(); ++k)
    if (columns[k] == name) return static_cast<int>(k);
  throw std::out_of_range("trajectory has no column '" + std::string(name) + "'");
}

namespace {

std::string format_time(double t) {
  std::ostringstream s;
  s.precision(9);
  s << t;
  return s.str();
}

// The same kept rows (a formulation's copy, RowChoice, before it chose other rows).
bool same_rows(const Constraints& a, const Constraints& b) {
  if (a.rows() != b.rows()) return false;
  for (int r = 0; r < a.rows(); ++r) {
    const ConstraintRow &x = a.kept()[r], &y = b.kept()[r];
    if (x.kind != y.kind || x.loop != y.loop || x.u != y.u || x.w != y.w) return false;
  }
  return true;
}

}  // namespace

std::optional<SettingProblem> output_problem(double output_dt, double span) {
  if (!(output_dt > 0.0) || !std::isfinite(output_dt))
    return SettingProblem{"output_dt", output_dt, "the interval between rows must be a finite number of seconds > 0"};
  if (span / output_dt > kMostOutputRows)
    return SettingProblem{"output_dt", output_dt,
                          "a row every `output_dt` over " + exact_number(span) + " s makes more than the " +
                              short_number(kMostOutputRows) + " rows a run keeps in memory: a larger `output_dt`, or a shorter run"};
  return std::nullopt;
}

namespace {

// The output times of a piece that ends at t_end: the points origin + k dt after the last row
// written (at `after`), then t_end, which within 1e-9 dt of a point counts as that point. k dt
// rather than accumulated sums, so that times are exact multiples.
std::vector<double> piece_times(double origin, double after, double t_end, double dt) {
  if (const auto problem = output_problem(dt, t_end - std::max(after, origin)))
    throw std::invalid_argument("`" + problem->name + " = " + exact_number(problem->value) + "`: " + problem->rule);
  const double last = std::floor((t_end - origin) / dt + 1e-9), first = std::floor((after - origin) / dt);
  const long n = static_cast<long>(last);
  long k = std::max(0L, static_cast<long>(first));
  while (origin + static_cast<double>(k) * dt <= after) ++k;
  std::vector<double> times;
  for (; k <= n; ++k) times.push_back(std::min(origin + static_cast<double>(k) * dt, t_end));
  if (times.empty() || t_end - times.back() > 1e-9 * dt) times.push_back(t_end);
  else times.back() = t_end;
  return times;
}

}  // namespace

std::vector<double> output_times(double t_end, double output_dt) {
  if (!(t_end >= 0.0) || !std::isfinite(t_end)) throw std::invalid_argument("t_end must be finite and >= 0");
  // The rows of a run: the one at 0 that begin() writes, then advance()'s.
  std::vector<double> t = piece_times(0.0, 0.0, t_end, output_dt);
  if (t_end > 0.0) t.insert(t.begin(), 0.0);
  return t;
}

Simulator::Simulator(const Model& model, Formulation& formulation, const SimulationSettings& settings)
    : model_(model), formulation_(formulation), settings_(settings), output_kin_(model), constraints_(formulation.constraints()),
      constraint_data_(model), phi_(constraints_.rows()), phidot_(constraints_.rows()),
      q_(model.nq), u_(model.nv), udot_(model.nv), row_x_(formulation.state_size()), row_q_(model.nq),
      row_u_(model.nv), track_work_(has_applied_forces(model)),
      x_(formulation.state_size()), dx_(formulation.state_size()), before_(formulation.state_size()), power_kin_(model), step_kin_(model), power_forces_(model) {
  // A fixed-step integrator lands on every output time: a step longer than the output interval
  // would be cut to it, and the run would not be the one asked for.
  const IntegratorSettings& is = settings_.integrator;
  if (!error_controlled(is.kind) && is.dt > settings_.output_dt * (1.0 + 1e-12))
    throw std::invalid_argument("the fixed step `dt = " + format_time(is.dt) + "` of " +
                                std::string(to_string(is.kind)) + " is longer than the interval between output rows `" +
                                "output_dt = " + format_time(settings_.output_dt) + "`, and every output time is a step's end: " +
                                "ask rows every step (`output_dt = " + format_time(is.dt) + "`, or a multiple of it) or a smaller step");
  // bdf keeps its own state (integrators.cpp): a projection after its steps would change only the
  // hook's copy, and the rows would not be projected.
  if (settings_.project && is.kind == IntegratorKind::bdf)
    throw std::invalid_argument("`project` does not apply to bdf, which integrates from its own state and history: "
                                "run bdf without it (its closure is held by its tolerances and checked by the run "
                                "watch), or project with dopri5");
  if (settings_.reactions) {
    // A formulation outside the registry is checked by Reactions::compute (the size of λ).
    const MethodInfo* method = find_method(formulation_.name());
    if (constraints_.rows() > 0 && method && !method->multipliers) {
      std::string with;
      for (const MethodInfo& m : methods())
        if (m.multipliers && m.implemented()) with.append(with.empty() ? "" : ", ").append(m.name);
      throw std::invalid_argument("reactions need the loop multipliers, which method '" +
                                  std::string(formulation_.name()) + "' does not compute; use " + with);
    }
    reactions_.emplace(model_, constraints_);
  }
  // Each drive's row among the formulation's kept rows: its column is −λ there (constraint_forces:
  // a coupling row acts as −c λ on its joint, c = 1).
  for (int r = 0; r < constraints_.rows(); ++r) {
    const ConstraintRow& row = constraints_.kept()[r];
    if (row.kind == ConstraintRow::Kind::coupling && model_.couplings[row.loop].drive) drive_rows_.push_back(r);
  }
  for (const ModelCoupling& c : model_.couplings)
    if (std::isfinite(c.value.last_time())) function_ends_.push_back(c.value.last_time());
  for (const ModelForce& f : model_.forces)
    if (f.profile && std::isfinite(f.profile->last_time())) function_ends_.push_back(f.profile->last_time());
  // The drives' columns and power need their multipliers, from a method that takes drives.
  const MethodInfo* method = find_method(formulation_.name());
  if (!drive_rows_.empty() && (!method || !method->drives))
    throw std::invalid_argument("method '" + std::string(formulation_.name()) + "' does not take drives ('" +
                                model_.couplings[constraints_.kept()[drive_rows_[0]].loop].name + "')");
}

const VecX& Simulator::formulation_state(const VecX& x) {
  if (!track_work_) return x;
  x_ = x.head(x_.size());
  return x_;
}

void Simulator::derivative(double t, const VecX& x, Eigen::Ref<VecX> dx) {
  if (!settings_.time_evaluations) return formulation_.derivative(t, x, dx);
  const auto start = std::chrono::steady_clock::now();
  formulation_.derivative(t, x, dx);
  evaluation_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void Simulator::rhs(double t, const VecX& x, VecX& dx) {
  ++evaluations_;
  if (poll_ && evaluations_ % kPollEvery == 0) poll_(t);
  if (!track_work_) return derivative(t, x, dx);
  // The work rides along as the last component: its rate is the power of the applied forces at
  // the stage's joint state, so the integrator takes it to its own order and error control.
  const VecX& xf = formulation_state(x);
  derivative(t, xf, dx_);
  dx.head(dx_.size()) = dx_;
  // A drive's power is its force times its prescribed speed ḟ(t), λ from this evaluation.
  double power = 0.0;
  for (int row : drive_rows_) {
    const ModelCoupling& c = model_.couplings[constraints_.kept()[row].loop];
    power -= formulation_.multipliers()(row) * c.value(t).rate;
  }
  if (const std::optional<double> applied = formulation_.applied_power()) {
    dx(dx_.size()) = power + *applied;  // as the method evaluated the forces, at its completed stage state
    return;
  }
  formulation_.to_joint(xf, q_, u_);
  update_positions(model_, power_kin_, q_);
  update_velocities(model_, power_kin_, q_, u_);
  dx(dx_.size()) = power + applied_power(model_, power_kin_, t, q_, u_, power_forces_);
}

void Simulator::post_step(double t, VecX& x) {
  ++accepted_;
  const Eigen::Index n = formulation_.state_size();
  // The continuity check (run_watch.hpp) on states that are one joint state [q; u]: srm's holds one
  // per iterate and restarts them all from the last at every step (Srm::accept), by design.
  const bool joint =
      watch_ && formulation_.coordinates() == Coordinates::joint && n == Eigen::Index{model_.nq} + model_.nv;
  if (joint) before_ = x.head(n);
  formulation_.accept(t, x.head(n));
  if (joint) watch_->check_completion(t, before_, x.head(n));
  if (!projector_ && !monitor_ && !guard_ && !watch_ && !clear_) return;
  formulation_.to_joint(formulation_state(x), q_, u_);
  if (projector_) {
    // The joint state is projected, whatever the method's layout, and mapped back into it.
    projector_->project(t, q_, u_);
    formulation_.to_state(q_, u_, x.head(n));
  }
  if (monitor_ && monitor_->observe(t, q_, u_)) crossings_.push_back(monitor_->last());
  double turn = 0.0;
  if (const ChangePoint* point = monitor_ ? monitor_->turned(turn) : nullptr)
    throw SingularConfigurationError(
        "t = " + format_time(t) + ": " + std::string(formulation_.name()) + " turns off the branch it came along, " +
        "next to a change point of the loops (" + describe(model_, *point) + "): its velocity is " +
        format_time(turn) + " rad off the branch's tangent there, where the motion keeps its tangent; its steps " +
        "are shorter than the round-off of its derivative allows there (change_points.hpp). " +
        std::string(kChangePointToleranceAdvice));
  if (!watch_ && !(guard_ && guard_->enabled()) && !(clear_ && clear_->enabled())) return;
  // One sweep for the watch and the guards (the projector moves the state the method completed).
  const KinematicsData& kin = completed_kinematics(q_, u_, projector_.has_value(), step_kin_);
  // The watch first: a state the guard stops at is one the watch passed (RunContinuation).
  if (watch_) watch_->observe(t, kin, q_, u_, track_work_ ? x(n) : 0.0);
  if (guard_) {
    const bool near = guard_->observe(kin);
    guard_smallest_ = std::min(guard_smallest_, guard_->relative_bound());
    if (near) {
      continuation_ = continuation_at(t, x);
      continuation_->guarded_rows = constraints_;
      throw SingularConfigurationError(
          "t = " + format_time(t) + ": " + std::string(formulation_.name()) + " stops: " + guard_->describe() +
          ". The loops leave more than one degree of freedom, so no survey before the run could predict it, "
          "and near it " + std::string(formulation_.name()) +
          " can continue on another branch of the motion without notice (change_points.hpp). Use `method = dca`, "
          "which crosses singular configurations, or `on_singular = continue` to go on at your own risk");
    }
  }
  if (clear_ && !clear_->observe(kin)) {
    continuation_ = continuation_at(t, x);
    throw LoopsClear{t, clear_->relative_bound()};
  }
}

RunContinuation Simulator::continuation_at(double t, const VecX& x) const {
  RunContinuation c;
  c.t = t;
  c.q = q_;
  c.u = u_;
  c.q_start = q_start_;
  c.work = track_work_ ? x(formulation_.state_size()) : 0.0;
  c.start_springs = start_springs_;
  c.grid_origin = grid_origin_;
  if (watch_) c.watch = watch_->carry();
  return c;
}

bool Simulator::rhs_known(double t, const VecX& x) {
  // The work's rate too, where the method evaluates the power at the completed state (rhs()).
  if (track_work_ && !formulation_.applied_power()) return false;
  return formulation_.evaluated_at(t, formulation_state(x));
}

double Simulator::adjust_step(double t, double h) { return monitor_ ? monitor_->adjust_step(t, h) : h; }

void Simulator::prepare_change_points(Trajectory& traj, const VecX& q0, const VecX& u0) {
  guard_smallest_ = 1.0;
  crossings_.clear();
  if (model_.has_loops()) {
    const bool known = known_survey_ && same_rows(constraints_, model_.loops().constraints) &&
                       known_survey_->q0.size() == q0.size() && known_survey_->u0.size() == u0.size() &&
                       known_survey_->q0 == q0 && known_survey_->u0 == u0;
    traj.change_points = known ? known_survey_->survey : survey_change_points(model_, constraints_, q0, u0);
  }
  watch_change_points(traj, q0, q0, u0);
}

void Simulator::watch_change_points(const Trajectory& traj, const VecX& q_start, const VecX& q, const VecX& u) {
  monitor_.reset();
  guard_.reset();
  if (!model_.has_loops()) return;
  if (!traj.change_points.walked && constraints_.rows() > 0 && settings_.guard_singular_configurations &&
      !formulation_.crosses_singular_configurations()) {
    guard_.emplace(model_, constraints_, q_start);
    if (!guard_->enabled()) guard_.reset();
  }
  if (std::string problem = change_point_problem(model_, traj.change_points, q, u, formulation_.name(),
                                                 formulation_.change_point_refusal());
      !problem.empty())
    throw SingularConfigurationError(std::move(problem));
  if (!traj.change_points.points.empty()) monitor_.emplace(model_, traj.change_points.points);
}

VecX Simulator::row(double t, const VecX& x_in) {
  // Dense output of dopri5 interpolates the dependent coordinates too: complete them.
  VecX& x = row_x_;
  VecX& q = row_q_;
  VecX& u = row_u_;
  x = x_in.head(formulation_.state_size());
  formulation_.complete(t, x);
  formulation_.to_joint(x, q, u);
  const KinematicsData& kin = completed_kinematics(q, u, false, output_kin_);
  const bool loops = model_.has_loops();
  const Eigen::Index nreactions = reactions_ ? 6 * (model_.nbodies + model_.loop_joints.size()) : 0;
  const Eigen::Index nx = model_.nq + model_.nv;
  const Eigen::Index ndiagnostics = settings_.diagnostics ? formulation_.diagnostic_names().size() : 0;
  const Eigen::Index ndrives = static_cast<Eigen::Index>(drive_rows_.size());
  VecX r(1 + nx + 3 * model_.markers.size() + 1 + (track_work_ ? 1 : 0) + (loops ? 2 : 0) + ndrives + nreactions +
         ndiagnostics);
  r(0) = t;
  r.segment(1, model_.nq) = q;
  r.segment(1 + model_.nq, model_.nv) = u;
  Eigen::Index k = 1 + nx;
  for (const ModelMarker& m : model_.markers) {
    r.segment<3>(k) = point_position(kin, m.body, m.point);
    k += 3;
  }
  const Energy e = energy(model_, kin, q);
  r(k++) = e.total();
  // Springs are in the energy: the work of the others is the applied work plus their change.
  if (track_work_) r(k++) = x_in(x.size()) + e.springs - start_springs_;
  if (loops) {
    constraint_position(model_, constraints_, kin, t, constraint_data_, phi_);
    r(k++) = phi_.size() ? phi_.cwiseAbs().maxCoeff() : 0.0;
    // Φ̇ = G u + Φ_t from the loop frames' velocities, O(1) per row: G (m x nv) was most of a
    // row's cost.
    constraint_time_rate(model_, constraints_, t, phi_);
    constraint_velocity(model_, constraints_, kin, constraint_data_, u, phidot_);
    phidot_ += phi_;
    r(k++) = phidot_.size() ? phidot_.cwiseAbs().maxCoeff() : 0.0;
  }
  // u̇ and λ of the formulation at this row's state.
  if (reactions_ || ndrives > 0) formulation_.joint_accelerations(t, x, udot_);
  for (int row : drive_rows_) r(k++) = -formulation_.multipliers()(row);
  if (reactions_) {
    reactions_->compute(t, q, u, udot_, formulation_.multipliers());
    reactions_->write_columns(r.segment(k, nreactions));
    k += nreactions;
  }
  if (ndiagnostics) formulation_.diagnostic_values(r.segment(k, ndiagnostics));
  return r;
}

const KinematicsData& Simulator::completed_kinematics(const VecX& q, const VecX& u, bool moved, KinematicsData& own) {
  const KinematicsData* kin = moved ? nullptr : formulation_.completed_kinematics();
  if (kin && kin->q == q) return *kin;
  update_positions(model_, own, q);
  update_velocities(model_, own, q, u);
  return own;
}

void Simulator::start_columns(std::vector<std::string>& columns) const {
  columns.push_back("t");
  for (const std::string& n : model_.coordinate_names()) columns.push_back(n);
  for (const ModelMarker& m : model_.markers)
    for (const char* axis : {".x", ".y", ".z"}) columns.push_back(m.name + axis);
  columns.push_back("energy");
  if (track_work_) columns.push_back("work");
  if (model_.has_loops()) {
    columns.push_back("residual.position");
    columns.push_back("residual.velocity");
  }
  for (int row : drive_rows_) columns.push_back(model_.couplings[constraints_.kept()[row].loop].name);
  if (reactions_)
    for (std::string& n : Reactions::column_names(model_)) columns.push_back(std::move(n));
  if (settings_.diagnostics)
    for (std::string& n : formulation_.diagnostic_names()) columns.push_back(std::move(n));
}

void Simulator::finish(Trajectory& traj) const {
  // The integrator's own count when it returned; the Simulator's when the run stopped inside it
  // (rejected steps are then not counted).
  if (accepted_ > traj.stats.steps_accepted) traj.stats = {evaluations_, accepted_, traj.stats.steps_rejected};
  if (projector_) traj.projection = projector_->stats();
  traj.crossings = crossings_;
  traj.guarded = guarded_before_ || guard_.has_value();
  traj.guard_smallest = guard_smallest_;
  if (watch_) traj.watch = watch_->summary();
  traj.evaluation_seconds = evaluation_seconds_;
}

Trajectory Simulator::run(const VecX& q0, const VecX& u0, const std::function<void(double)>& progress) {
  Trajectory traj;
  run(q0, u0, traj, progress);
  return traj;
}

void Simulator::run(const VecX& q0, const VecX& u0, Trajectory& traj, const std::function<void(double)>& progress) {
  begin(0.0, q0, u0, traj);
  try {
    if (progress) progress(0.0);
  } catch (...) {
    finish(traj);
    throw;
  }
  advance(settings_.t_end, traj, progress);
}

void Simulator::begin(double t0, const VecX& q0, const VecX& u0, Trajectory& traj) {
  if (q0.size() != model_.nq || u0.size() != model_.nv)
    throw std::invalid_argument("initial state has the wrong size (nq = " + std::to_string(model_.nq) +
                                ", nv = " + std::to_string(model_.nv) + ")");
  if (!std::isfinite(t0)) throw std::invalid_argument("the start time must be finite");
  traj = Trajectory{};
  start_columns(traj.columns);
  if (settings_.project) projector_.emplace(model_, constraints_, settings_.projection);  // fresh stats
  watch_.reset();
  if (settings_.watch.enabled) watch_.emplace(model_, settings_.watch, settings_.integrator);
  accepted_ = evaluations_ = 0;
  evaluation_seconds_ = 0.0;
  guarded_before_ = false;
  continuation_.reset();
  clear_.reset();

  enter(t0, q0, u0, 0.0);
  grid_origin_ = t0;
  q_start_ = q_;
  prepare_change_points(traj, q_, u_);
  if (monitor_) monitor_->observe(t0, q_, u_);
  if (watch_) watch_->start(q_, u_);
  update_positions(model_, output_kin_, q_);
  update_velocities(model_, output_kin_, q_, u_);
  const Energy start = energy(model_, output_kin_, q_);
  if (!std::isfinite(start.total())) {
    // Finite coordinates and speeds whose squares overflow (a speed of 1e300): the watch would
    // stop the first step with a balance of nan against a bound of inf.
    std::ostringstream s;
    s << "the start state's energy is not finite (kinetic " << start.kinetic << " J, gravity " << start.gravity
      << " J, springs " << start.springs << " J): its speeds or coordinates are too large for the dynamics in "
      << "double precision";
    throw std::invalid_argument(s.str());
  }
  start_springs_ = start.springs;
  traj.rows.push_back(row(t0, x_now_));
}

void Simulator::advance(double t_end, Trajectory& traj, const std::function<void(double)>& progress) {
  if (!std::isfinite(t_end))  // inf and nan were said to be 'before the current time'
    throw std::invalid_argument("the end time t_end must be a finite number of seconds, got " + format_time(t_end));
  if (!(t_end >= t_))
    throw std::invalid_argument("advance: the end time " + format_time(t_end) + " is before the current time " +
                                format_time(t_));
  // A step across a table's last time fails where its stages probe past it, and the run stopped
  // at the step's start (a joint_pd target ending at t = 1: the last row at 0.98). The run lands
  // on the end first, with a row there, on the same grid of rows.
  for (;;) {
    double first = t_end;
    for (double end : function_ends_)
      if (end > t_ && end < first) first = end;
    if (first == t_end) break;
    const double origin = grid_origin_;
    advance(first, traj, progress);
    grid_origin_ = origin;
  }
  if (t_end == t_) {
    // A piece that resumed at t_end (a hand-over at the last step, which stops before its row).
    if (traj.rows.empty() || traj.rows.back()(0) < t_end) {
      traj.rows.push_back(row(t_end, x_now_));
      if (progress) progress(t_end);
    }
    return;
  }
  // Rows on the grid after the last one written (at t_, or before it where resume took over from
  // a stop between rows), and at t_end.
  const std::vector<double> times =
      piece_times(grid_origin_, traj.rows.empty() ? t_ : traj.rows.back()(0), t_end, settings_.output_dt);
  if (times.front() < t_)
    throw std::logic_error("advance: a row at t = " + format_time(times.front()) + " before the piece's start " +
                           format_time(t_) + " was not written");
  try {
    const IntegrationStats piece = integrate(*this, settings_.integrator, t_, x_now_, times, [&](double t, const VecX& x) {
      traj.rows.push_back(row(t, x));
      if (t == t_end) x_now_ = x;  // the accepted state the last step lands on (both integrators land there)
      if (progress) progress(t);
    });
    traj.stats.rhs_evaluations += piece.rhs_evaluations;
    traj.stats.steps_accepted += piece.steps_accepted;
    traj.stats.steps_rejected += piece.steps_rejected;
    t_ = grid_origin_ = t_end;
  } catch (const IntegrationError& e) {
    finish(traj);
    // Near a change point every joint-coordinate derivative carries round-off amplified by
    // 1 / σ_min(G) (change_points.hpp); a tolerance below that noise collapses the step there.
    const ChangePoint* point = monitor_ ? monitor_->imminent() : nullptr;
    if (!point) throw;
    throw SingularConfigurationError(
        std::string(e.what()) + ", next to a change point of the loops (" + describe(model_, *point) + "): " +
        std::string(formulation_.name()) +
        "'s derivative is too noisy there for this tolerance. " + std::string(kChangePointToleranceAdvice));
  } catch (...) {
    finish(traj);
    throw;
  }
  finish(traj);
}

void Simulator::enter(double t, const VecX& q, const VecX& u, double work) {
  formulation_.start(step_plan(settings_.integrator), q, u);
  t_ = t;
  x_now_ = VecX::Zero(size());
  formulation_.to_state(q, u, x_now_.head(formulation_.state_size()));
  if (track_work_) x_now_(formulation_.state_size()) = work;
  formulation_.to_joint(formulation_state(x_now_), q_, u_);
}

bool Simulator::can_resume(const RunContinuation& from, const Trajectory& traj) const {
  std::vector<std::string> columns;
  start_columns(columns);
  return columns == traj.columns && from.watch.has_value() == settings_.watch.enabled &&
         from.q.size() == model_.nq && from.u.size() == model_.nv && from.q_start.size() == model_.nq;
}

void Simulator::resume(const RunContinuation& from, Trajectory& traj) {
  if (!can_resume(from, traj))
    throw std::invalid_argument("resume: method '" + std::string(formulation_.name()) +
                                "' cannot go on with this run (it must write the same columns and watch as the run "
                                "did)");
  if (settings_.project) {
    projector_.emplace(model_, constraints_, settings_.projection);
    projector_->carry_stats(traj.projection);
  }
  watch_.reset();
  if (from.watch) watch_.emplace(model_, settings_.watch, settings_.integrator).resume(*from.watch);
  accepted_ = traj.stats.steps_accepted;
  evaluations_ = traj.stats.rhs_evaluations;
  evaluation_seconds_ = traj.evaluation_seconds;
  guarded_before_ = traj.guarded;
  guard_smallest_ = traj.guard_smallest;
  crossings_ = traj.crossings;
  continuation_.reset();

  enter(from.t, from.q, from.u, from.work);
  grid_origin_ = from.grid_origin;
  start_springs_ = from.start_springs;
  q_start_ = from.q_start;
  // The run's survey stands; the monitor follows its points from here, the guards compare with
  // the run's start.
  watch_change_points(traj, q_start_, q_, u_);
  if (monitor_) monitor_->observe(t_, q_, u_);
  clear_.reset();
  clear_rows_ = from.guarded_rows;
  if (hand_back_ && clear_rows_) {
    clear_.emplace(model_, *clear_rows_, q_start_, kGuardLargestRows, kGuardClear, GuardUse::clear);
    if (!clear_->enabled()) clear_.reset();
  }
}

void Simulator::joint_state(VecX& q, VecX& u) const {
  VecX x = x_now_.head(formulation_.state_size());
  formulation_.to_joint(x, q, u);
}

}  // namespace loopdyn
