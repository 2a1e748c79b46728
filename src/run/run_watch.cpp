#include "loopdyn/run/run_watch.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "loopdyn/core/names.hpp"

namespace loopdyn {

double applied_power(const Model& model, const KinematicsData& kin, double t, const VecX& q, const VecX& u,
                     ForceData& forces) {
  evaluate_forces(model, kin, t, q, u, forces);
  return forces.power;
}

bool has_applied_forces(const Model& model) {
  const bool drives = std::any_of(model.couplings.begin(), model.couplings.end(), [](const ModelCoupling& c) { return c.drive; });
  return drives || !model.forces.empty() || !model.callbacks.empty();
}

RunWatch::RunWatch(const Model& model, const WatchSettings& settings, const IntegratorSettings& integrator)
    : model_(model), kin_(model), data_(model) {
  std::vector<ConstraintRow> all = Constraints::all_rows(model);
  phi_.resize(static_cast<Eigen::Index>(all.size()));
  phidot_.resize(phi_.size());
  rows_ = Constraints(std::move(all));
  const bool fixed = !error_controlled(integrator.kind);
  per_step_ = !fixed;
  summary_.watched = true;
  summary_.accuracy = fixed ? settings.fixed_step_accuracy : integrator.rtol;
  atol_ = fixed ? 0.0 : integrator.atol;
  integrator_ = std::string(to_string(integrator.kind));
  WatchSettings on = settings;
  on.enabled = true;
  if (const auto problem = watch_problem(on, integrator))
    throw std::invalid_argument("`" + problem->name + " = " + exact_number(problem->value) + "`: " + problem->rule);
}

std::optional<SettingProblem> watch_problem(const WatchSettings& settings, const IntegratorSettings& integrator) {
  if (!settings.enabled) return std::nullopt;
  if (!error_controlled(integrator.kind)) {
    if (settings.fixed_step_accuracy > 0.0 && std::isfinite(settings.fixed_step_accuracy)) return std::nullopt;
    return SettingProblem{"fixed_step_accuracy", settings.fixed_step_accuracy,
                          "the run watch needs a finite accuracy > 0"};
  }
  if (integrator.rtol > 0.0 && std::isfinite(integrator.rtol)) return std::nullopt;
  return SettingProblem{"rtol", integrator.rtol,
                        "the run watch judges the motion at the accuracy `rtol` asks, which must be > 0 (`atol` "
                        "alone sets none it can hold a run to): give `rtol`, or turn the watch off (`watch = false`)"};
}

double RunWatch::size_at_start() {
  double L = 1e-3;
  for (int i = 0; i < model_.nbodies; ++i) L = std::max(L, kin_.X_world[i].p.norm());
  for (const ConstraintData::Frame& f : data_.fp) L = std::max(L, f.x.norm());
  for (const ConstraintData::Frame& f : data_.fc) L = std::max(L, f.x.norm());
  return L;
}

void RunWatch::start(const VecX& q0, const VecX& u0) {
  update_positions(model_, kin_, q0);
  update_velocities(model_, kin_, q0, u0);
  if (rows_.rows() > 0) constraint_position(model_, rows_, kin_, 0.0, data_, phi_);  // loop frames for L
  summary_.length = size_at_start();
  const Energy e = energy(model_, kin_, q0);
  start_energy_ = e.kinetic + e.gravity;
  start_gravity_ = e.gravity;
  gravity_terms_ = 0.0;
  for (int i = 0; i < model_.nbodies; ++i)
    gravity_terms_ += std::abs(model_.mass[i] * model_.gravity.dot(kin_.X_world[i].apply(model_.com[i])));
  summary_.balance_scale = e.kinetic;
  summary_.worst_balance = summary_.worst_position = summary_.worst_velocity = summary_.worst_completion = 0.0;
  summary_.steps = 0;
  speed_ = std::max(1.0, u0.size() ? u0.cwiseAbs().maxCoeff() : 0.0);
}

void RunWatch::resume(const Carry& c) {
  start_energy_ = c.start_energy;
  start_gravity_ = c.start_gravity;
  gravity_terms_ = c.gravity_terms;
  speed_ = c.speed;
  summary_ = c.summary;
}

double RunWatch::balance_factor() const {
  return per_step_ ? std::max(kWatchFactor, kWatchStepFactor * static_cast<double>(summary_.steps)) : kWatchFactor;
}

void RunWatch::observe(double t, const KinematicsData& kin, const VecX& q, const VecX& u, double work) {
  ++summary_.steps;
  if (u.size()) speed_ = std::max(speed_, u.cwiseAbs().maxCoeff());
  if (rows_.rows() > 0) check_closure(t, kin, u);
  check_balance(t, kin, q, work);
}

void RunWatch::check_closure(double t, const KinematicsData& kin, const VecX& u) {
  constraint_time_rate(model_, rows_, t, phi_);
  constraint_velocity(model_, rows_, kin, data_, u, phidot_);
  phidot_ += phi_;  // Φ̇ = G u + Φ_t
  constraint_position(model_, rows_, kin, t, data_, phi_);
  const double bound = kWatchFactor * summary_.accuracy;
  for (int r = 0; r < rows_.rows(); ++r) {
    const double length = rows_.kept()[r].kind == ConstraintRow::Kind::dot ? 1.0 : summary_.length;
    const double p = std::abs(phi_(r)), v = std::abs(phidot_(r));
    summary_.worst_position = std::max(summary_.worst_position, p);
    summary_.worst_velocity = std::max(summary_.worst_velocity, v);
    // !(x <= b) also stops a NaN.
    if (!(p <= bound * length))
      fail(t, "closure: " + row_owner(model_, rows_.kept()[r]) + " is off by " + short_number(p) + " (bound " +
                  short_number(bound * length) + ")");
    if (!(v <= bound * length * speed_))
      fail(t, "closure: the velocity of " + row_owner(model_, rows_.kept()[r]) + " is off by " + short_number(v) +
                  " (bound " + short_number(bound * length * speed_) + ")");
  }
}

void RunWatch::check_balance(double t, const KinematicsData& kin, const VecX& q, double work) {
  const Energy e = energy(model_, kin, q);
  const double balance = e.kinetic + e.gravity - work - start_energy_;
  summary_.balance_scale =
      std::max({summary_.balance_scale, e.kinetic + std::abs(e.gravity - start_gravity_) + std::abs(work), 1e-9});
  summary_.worst_balance = std::max(summary_.worst_balance, std::abs(balance));
  // A spring of negative stiffness (a snap-through element) stores negative energy: its size, not
  // its sign, scales the round-off and the motion (with e.springs, atol's share of the bound was
  // negative, and a pendulum on a -1000 N m/rad spring was stopped at its third step).
  const double springs = std::abs(e.springs);
  const double roundoff = kWatchRoundoff * std::numeric_limits<double>::epsilon() *
                          (gravity_terms_ + e.kinetic + springs + std::abs(work));
  const double moved = (gravity_terms_ + e.kinetic + springs) / std::min(1.0, summary_.length);
  const double bound =
      std::max(balance_factor() * (summary_.accuracy * summary_.balance_scale + atol_ * moved), roundoff);
  if (!(std::abs(balance) <= bound))
    fail(t, "energy balance: kinetic + potential - work of the applied forces has changed by " +
                short_number(balance) + " J since the start (bound " + short_number(bound) + " J, " +
                short_number(balance_factor() * summary_.accuracy) + " of the run's energy scale " +
                short_number(summary_.balance_scale) + " J" +
                (atol_ > 0.0 ? ", plus " + short_number(balance_factor() * atol_ * moved) + " J for atol"
                             : std::string()) +
                ")");
}

void RunWatch::check_completion(double t, const VecX& before, const Eigen::Ref<const VecX>& after) {
  const double tau = kWatchFactor * summary_.accuracy, size = std::max(1.0, summary_.length);
  for (int k = 0; k < static_cast<int>(before.size()); ++k) {
    const bool speed = k >= model_.nq;
    const double moved = std::abs(after(k) - before(k));
    const double bound = tau * ((speed ? size * speed_ : size) + std::abs(before(k)));
    if (!speed) summary_.worst_completion = std::max(summary_.worst_completion, moved);
    if (!(moved <= bound))
      fail(t, "continuity: completing the accepted state (closing the loops by position analysis, or choosing the "
              "independent coordinates again) moved " + coordinate(k) + " by " + short_number(moved) + " (bound " +
              short_number(bound) + "), off the point of the motion the step reached");
  }
}

std::string RunWatch::coordinate(int k) const {
  const std::vector<std::string> names = model_.coordinate_names();
  return k < static_cast<int>(names.size()) ? names[k] : "coordinate " + std::to_string(k);
}

void RunWatch::fail(double t, const std::string& what) const {
  char at[48];
  std::snprintf(at, sizeof at, "t = %.9g: ", t);
  const std::string remedy =
      integrator_ == "dopri5"
          ? "a tighter tolerance (rtol " + short_number(summary_.accuracy) + " now)"
          : "the error-controlled integrator dopri5 (the default) or a shorter step (" + integrator_ + " now)";
  throw RunWatchError(std::string(at) + "the run watch stops the run, whose motion is no longer accurate to its " +
                      "accuracy " + short_number(summary_.accuracy) + ": " + what + ". Use " + remedy +
                      ", or another method; turning the watch off keeps the run going at your own risk");
}

}  // namespace loopdyn
