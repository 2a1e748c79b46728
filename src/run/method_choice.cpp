#include "loopdyn/run/method_choice.hpp"

#include "loopdyn/formulations/registry.hpp"
#include "loopdyn/loops/change_points.hpp"
#include "loopdyn/loops/loop_structure.hpp"

namespace loopdyn {

std::string auto_rule() {
  return "tree without loops; embedding when every aggregated body has at most " + std::to_string(kSmallAggregatedBody) +
         " joint speeds; else rcr when its scope covers the loops; else srm with rk2 or rk4 when an aggregated body "
         "has at least " + std::to_string(kSrmAggregatedBody) + " speeds; else dca when one has at least " +
         std::to_string(kDcaAggregatedBody) + "; else lagrange-dense";
}

MethodChoice default_method(const Model& model, IntegratorKind integrator) {
  return default_method(model, model.q0, model.u0, integrator);
}

MethodChoice default_method(const Model& model, const VecX& q, IntegratorKind integrator) {
  return default_method(model, q, model.u0, integrator);
}

MethodChoice default_method(const Model& model, const VecX& q, const VecX& u, IntegratorKind integrator) {
  if (!model.has_loops()) return {"tree", "no loop-closing joints or couplings: the articulated-body algorithm"};
  const int largest = model.loops().aggregation.largest_nv();
  std::string size = "the largest aggregated body has ";
  size.append(std::to_string(largest)).append(" joint speeds");
  if (largest <= kSmallAggregatedBody)
    return {"embedding", size + " (<= " + std::to_string(kSmallAggregatedBody) +
                             "): constraint embedding, linear in the number of aggregated bodies"};
  size.append(" (> ").append(std::to_string(kSmallAggregatedBody)).append(")");
  // Every choice from here on carries the survey, for the run to take (MethodChoice::survey).
  SurveyedStart surveyed{q, u, survey_change_points(model, model.loops().constraints, q, u)};
  MethodChoice choice = [&]() -> MethodChoice {
    if (const ChangePoint* p = first_reachable(model, surveyed.survey, q, u))
      return {"embedding", size + ", but the motion can reach a change point of the loops (" + describe(model, *p) +
                               "): embedding is the method within IFToMM's bound on the 40-loop N-four-bar "
                               "(docs/results.md)"};
    if (method_info("rcr").scope_problem(model, q).empty())
      return {"rcr", size + ", but its loops share their base and close one at a time: recursive coordinate "
                            "reduction stays linear in its size"};
    const auto takes = [&](const char* method) { return method_info(method).scope_problem(model, q).empty(); };
    if (!error_controlled(integrator) && largest >= kSrmAggregatedBody && takes("srm"))
      return {"srm", size + " (>= " + std::to_string(kSrmAggregatedBody) +
                         "), its loops do not close one at a time, and the step is fixed: sequential "
                         "regularization is the linear method, where the dense one is cubic in that size"};
    if (largest >= kDcaAggregatedBody && takes("dca"))
      return {"dca", size + " (>= " + std::to_string(kDcaAggregatedBody) +
                         "), its loops do not close one at a time: divide and conquer is linear in that size, "
                         "where the dense solve is cubic, and crosses the singular configurations such bodies pass"};
    return {"lagrange-dense", size + ": embedding's local solves would cost as much as the dense one" +
                                  (error_controlled(integrator) && largest >= kSrmAggregatedBody
                                       ? ", and " + std::string(to_string(integrator)) +
                                             "'s tolerances rule out srm's fixed-step regularization"
                                       : std::string())};
  }();
  choice.survey = std::move(surveyed);
  return choice;
}

}  // namespace loopdyn
