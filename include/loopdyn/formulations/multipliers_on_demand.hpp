// Loop multipliers recovered on demand by the methods that get them after their accelerations
// (embedding: 001 eq 24 per aggregated body; rcr: per loop), instead of at every call: a run asks
// for them only at its output rows with reactions and at evaluations with drives (Simulator), and
// their recovery was 6 % of an `embedding` call on the planar ladder (callgrind, bench_loops
// ladder-serial/64: recover_multipliers 29.5 of 476.6 M instructions).
//
// λ is recovered from the sweeps of the last accelerations() call while they stand. A method whose
// complete_state() overwrites them (its kinematics, factors and reductions at another state) calls
// overwritten() first; λ then comes from that call made again at its saved (t, q, u): what
// multipliers() returns is always the last call's.
#pragma once

#include "loopdyn/core/spatial.hpp"

namespace loopdyn {

class MultipliersOnDemand {
 public:
  MultipliersOnDemand(int nq, int nv) : q_(nq), u_(nv), udot_(nv) {}

  /// accelerations() at (t, q, u) has just made its sweeps.
  void evaluated(double t, const VecX& q, const VecX& u) {
    t_ = t;
    q_ = q;
    u_ = u;
    state_ = State::from_sweeps;
  }
  /// The sweeps are about to be overwritten.
  void overwritten() {
    if (state_ == State::from_sweeps) state_ = State::from_call;
  }
  bool current() const { return state_ == State::current; }
  /// Makes λ current: evaluate(t, q, u, udot) again where the sweeps were overwritten (it calls
  /// evaluated() itself), then recover() from them.
  template <class Evaluate, class Recover>
  void settle(Evaluate evaluate, Recover recover) {
    if (state_ == State::current) return;
    if (state_ == State::from_call) evaluate(t_, q_, u_, udot_);
    recover();
    state_ = State::current;
  }

 private:
  enum class State { current, from_sweeps, from_call };
  State state_ = State::current;  // λ starts at zero, before any call
  double t_ = 0.0;
  VecX q_, u_, udot_;  // the last call's state; udot_: the repeated call's accelerations
};

}  // namespace loopdyn
