// The `auto` choice of method: which formulation a run uses when the user names none, and why.
#pragma once

#include <optional>
#include <string>

#include "loopdyn/core/model.hpp"
#include "loopdyn/loops/change_points.hpp"
#include "loopdyn/run/integrators.hpp"

namespace loopdyn {

/// The method `--method auto` picks, and why (docs/methods.md, "Which method"):
///  * `tree` without loops and couplings;
///  * `embedding` when every aggregated body (002 §4.2) has at most kSmallAggregatedBody joint
///    speeds: its cost is linear in the number of aggregated bodies and cubic in the size of each;
///  * `rcr` when an aggregated body is larger but its scope (Rcr::out_of_scope: loops coupled
///    only through a common base, each closable on its own at configuration q) covers the
///    mechanism: it stays linear in the size of the aggregated body (the spatial ladder of 000 §4.3);
///  * `srm` when the largest aggregated body has at least kSrmAggregatedBody speeds and the
///    integrator has a fixed step (rk2, rk4): the only linear method left, whose regularization
///    error falls like h² at least (docs/methods.md); from that size on a step costs less than
///    lagrange-dense's (docs/performance.md). Not with dopri5: its tolerances set the accuracy,
///    which a regularization tied to the step cannot honour;
///  * `dca` when the largest aggregated body has at least kDcaAggregatedBody speeds (with dopri5,
///    or a fixed step below srm's size): divide and conquer is linear in it where lagrange-dense is
///    cubic, and crosses the singular configurations such bodies pass (paper 003's chain and net
///    flatten squares). `loopdyn simulate MODEL --method M --t-end 0.05` on `generate square-chain
///    --squares K` and `square-net --rows R --cols R`: dca's run takes 1.7 times lagrange-dense's
///    at 97 speeds (K = 32), 0.9 times at 144 (R = 8), 0.5 times at 193 (K = 64) and 220 (R = 10),
///    0.12 times at 385 (K = 128);
///  * `lagrange-dense` otherwise: one aggregated body then holds a large part of the mechanism,
///    and embedding's local analyses cost as much as the dense solve without its simplicity;
///  * but `embedding` whenever the motion from (q, u) can reach a change point of the
///    loops (change_points.hpp): the Lagrange methods refuse those, and on the IFToMM N-four-bar
///    with 40 loops rcr, gcp and nullspace end 1.1e-6 to 1.4e-6 m off while embedding stays within
///    3e-7 m (docs/results.md). The margin is not robust: the excess is energy lost at the
///    crossings by round-off amplified near the point, and small changes of the position
///    tolerance reorder the methods.
/// `loopdyn simulate` hands the run to `dca` when the choice stops at a singular configuration
/// (a SingularConfigurationError: the SingularityGuard of change_points.hpp on loops with more
/// than one degree of freedom, from where it stopped; or a method's own check, from the start;
/// run.hpp).
struct MethodChoice {
  std::string method;
  std::string reason;
  /// The survey of change points from (q, u) the rule made (an aggregated body larger than
  /// kSmallAggregatedBody), for the run to take instead of walking the same curve again
  /// (Simulator::use_survey: on the 40-loop N-four-bar the walk cost as much as a 1 s run's
  /// evaluations, and was made twice).
  std::optional<SurveyedStart> survey{};
};
inline constexpr int kSmallAggregatedBody = 12;
inline constexpr int kSrmAggregatedBody = 64;
inline constexpr int kDcaAggregatedBody = 150;
/// The rule above in one line, with its thresholds, for the front ends' help.
std::string auto_rule();
/// integrator: the run's (dopri5, the default, stands for accuracy set by tolerances).
/// (q, u): the start state, whose energy bounds the part of the configuration curve surveyed.
MethodChoice default_method(const Model& model, const VecX& q, const VecX& u,
                            IntegratorKind integrator = IntegratorKind::dopri5);
/// default_method at q with the model's initial speeds.
MethodChoice default_method(const Model& model, const VecX& q, IntegratorKind integrator = IntegratorKind::dopri5);
/// default_method at the model's initial state.
MethodChoice default_method(const Model& model, IntegratorKind integrator = IntegratorKind::dopri5);

}  // namespace loopdyn
