// The run watch: checks after every accepted step of any method that the trajectory is still the
// motion of the mechanism, so that no run ends with a wrong motion and exit code 0.
//
// Three checks, each against a bound that follows from the accuracy τ the run asks for (dopri5: its
// rtol; a fixed step: WatchSettings::fixed_step_accuracy, since a fixed step estimates no error):
//  * closure: |Φ| of every closure row, the structurally redundant (dropped) rows too, so that a
//    row dropped wrongly shows, and |Φ̇| of the same rows:
//        |Φ_along| <= F τ L,  |Φ_dot| <= F τ,  |Φ̇_along| <= F τ L V,  |Φ̇_dot| <= F τ V,
//    L the mechanism's size (largest distance of a body origin or loop frame from the world origin
//    at the start, at least 1 mm), V the largest joint speed so far (at least 1 rad/s);
//  * energy balance: B(t) = T + V_g − W − (T + V_g)(0), with W the work of every applied force but
//    gravity (springs, dampers, joint and body forces, callbacks) integrated along the run by the
//    run's own integrator (Simulator), is a balance that holds for every method whatever its
//    forces:  |B| <= F_E τ S_E,  S_E = max over the run so far of T + |V_g − V_g(0)| + |W|, at
//    least 1e-9 J. A fixed step's τ is an accuracy for the whole run: F_E = F. dopri5's rtol bounds
//    each step's error, and an energy error may build up by a share of it at every step (dca lost
//    14 τ S_E per step on IFToMM A04 at rtol 1e-8, 4 at 1e-10, before it projected its stages on
//    loops of geometric redundancy; 0.003 and 0.002 since): F_E = max(F, F_step N), N the
//    accepted steps. A steady leak below F_step τ S_E per step is therefore not seen: at rtol 1e-8
//    and 200 steps per second, 6e-5 of the energy scale per second. B is a difference of sums
//    whose terms may be far larger than S_E (a long chain hanging at rest, or high above the
//    origin: −Σ m g·c), so the bound is at least their round-off, kWatchRoundoff ε (Σ |m g·c| at
//    the start + T + |W|): a sum of n terms is within n ε of its terms' magnitude, and the
//    bound counts up to 1e3 terms. An error-controlled integrator also holds each coordinate to
//    its atol, which a run released from rest uses in full while S_E is still tiny (bdf's first,
//    first-order steps): the bound adds F_E atol A, A = (Σ |m g·c| + T + V_springs) / min(1, L),
//    the energy that moves when every coordinate is off by one unit (a radian, or a metre of a
//    mechanism of size L).
//  * continuity: a method that closes its loops by position analysis (gcp, nullspace, embedding) or
//    overwrites its dependent speeds (rcr) completes every accepted step's joint state, and may
//    choose its independent coordinates again there. That must move the state only by the step's
//    own drift off the loops, never to another point of the motion:
//        |Δq_k| <= F τ (max(1, L) + |q_k|),  |Δu_k| <= F τ (max(1, L) V + |u_k|),
//    the integrator's error tolerance on that component (rtol · |x_k|, plus the closure's scale);
//    checked on one-joint-state methods (dca projects its absolute coordinates, which the closure
//    check covers; srm restarts its iterates from the last at every step and checks itself, srm.hpp).
// F = kWatchFactor = 1e3, F_step = kWatchStepFactor = 30: on the bundled models over 10 s at
// rtol 1e-8 the methods that close their loops by position analysis stay within 11 τ S_E and 3 τ
// in closure, lagrange-dense within 169 τ S_E and 156 τ (its drift grows with time), dca within
// 1.25e3 τ S_E (docs/performance.md, bench/run_watch.sh); F still stops any loss of 0.1 % at a
// fixed step's τ = 1e-6.
// A violation throws RunWatchError naming the check, the time, the size against its bound and what
// to do; the run layer (run.hpp) hands the run over or stops it with its rows kept.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>

#include "loopdyn/loops/constraints.hpp"
#include "loopdyn/core/forces.hpp"
#include "loopdyn/run/integrators.hpp"

namespace loopdyn {

inline constexpr double kWatchFactor = 1e3;
inline constexpr double kWatchStepFactor = 30.0;
inline constexpr double kWatchRoundoff = 1e3;

struct WatchSettings {
  bool enabled = true;
  /// τ of a fixed-step run (rk2, rk4), whose step is not error-controlled.
  double fixed_step_accuracy = 1e-6;
};

/// The watch's record of a run: the worst of each check and its bound.
struct WatchSummary {
  bool watched = false;
  double accuracy = 0.0;          ///< τ
  double worst_balance = 0.0;     ///< max |B| (J)
  double balance_scale = 0.0;     ///< S_E at the end (J)
  double worst_position = 0.0;    ///< max |Φ| over every row, kept and dropped
  double worst_velocity = 0.0;    ///< max |Φ̇| over the same rows
  double worst_completion = 0.0;  ///< max |Δq_k| of the continuity check (rad or m)
  double length = 0.0;            ///< L (m)
  long steps = 0;                 ///< accepted steps observed
};

/// The power of every applied force but gravity at current kinematics (positions, velocities) and
/// (q, u): τᵀu + Σ f_bodyᵀ v_body.
double applied_power(const Model& model, const KinematicsData& kin, double t, const VecX& q, const VecX& u,
                     ForceData& forces);

/// Whether anything but gravity does work on the model (force elements, callbacks, drives).
bool has_applied_forces(const Model& model);

/// The watch's accuracy rule: with a fixed step its own accuracy, with dopri5 or bdf the
/// integrator's rtol (its bounds are relative to it) must be finite and > 0; nullopt when the
/// watch is off or the accuracy is. RunWatch refuses by it, and so does check_run_settings.
std::optional<SettingProblem> watch_problem(const WatchSettings& settings, const IntegratorSettings& integrator);

class RunWatch {
 public:
  RunWatch(const Model& model, const WatchSettings& settings, const IntegratorSettings& integrator);
  /// The state at the start of the run (work 0).
  void start(const VecX& q0, const VecX& u0);
  /// The joint state after an accepted step at t, its positions and velocities in `kin` (the
  /// Simulator's, which the guard reads too), and the work done since the start; throws
  /// RunWatchError when a check fails. Allocates nothing.
  void observe(double t, const KinematicsData& kin, const VecX& q, const VecX& u, double work);
  /// The continuity check: `before` is the joint state [q; u] of an accepted step as the
  /// integrator left it, `after` the same once the method completed it (Formulation::accept).
  /// Throws RunWatchError when the completion moved it more than the step's drift. Allocates nothing.
  void check_completion(double t, const VecX& before, const Eigen::Ref<const VecX>& after);
  const WatchSummary& summary() const { return summary_; }
  /// What a run continued by another method carries over (Simulator::resume): the start's energy
  /// and its scales, the largest speed so far and the summary, so that the bounds and the worst
  /// values run on as in one run.
  struct Carry {
    double start_energy = 0.0, start_gravity = 0.0, gravity_terms = 0.0, speed = 1.0;
    WatchSummary summary;
  };
  Carry carry() const { return {start_energy_, start_gravity_, gravity_terms_, speed_, summary_}; }
  /// Instead of start(): goes on from where another watch of the same run was (its carry()).
  void resume(const Carry& c);

 private:
  double size_at_start();  ///< L: kinematics at q0 current
  double balance_factor() const;  ///< F_E
  void check_closure(double t, const KinematicsData& kin, const VecX& u);
  void check_balance(double t, const KinematicsData& kin, const VecX& q, double work);
  /// The CSV name of coordinate k of [q; u], for messages.
  std::string coordinate(int k) const;
  [[noreturn]] void fail(double t, const std::string& what) const;

  const Model& model_;
  Constraints rows_;  ///< every closure row, kept and dropped
  KinematicsData kin_;  ///< the start's (observe() reads the Simulator's)
  ConstraintData data_;
  VecX phi_, phidot_;
  double start_energy_ = 0.0, start_gravity_ = 0.0, speed_ = 1.0;
  double gravity_terms_ = 0.0;  ///< Σ |m g·c| at the start (the balance's round-off)
  double atol_ = 0.0;           ///< the integrator's atol (error-controlled), 0 for a fixed step
  bool per_step_ = false;  ///< dopri5: the balance's budget grows with the steps
  std::string integrator_;
  WatchSummary summary_;
};

}  // namespace loopdyn
