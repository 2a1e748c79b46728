#include "loopdyn/formulation.hpp"

#include <algorithm>

#include "loopdyn/aggregation.hpp"
#include "loopdyn/change_points.hpp"
#include "loopdyn/formulations/embedding.hpp"
#include "loopdyn/formulations/lagrange_dense.hpp"
#include "loopdyn/formulations/gcp.hpp"
#include "loopdyn/formulations/lagrange_on.hpp"
#include "loopdyn/formulations/nullspace.hpp"
#include "loopdyn/formulations/rcr.hpp"
#include "loopdyn/formulations/tree.hpp"

namespace loopdyn {

const std::vector<std::string_view>& formulation_names() {
  static const std::vector<std::string_view> names{"tree", "lagrange-dense", "lagrange-on", "gcp", "nullspace",
                                                   "rcr",  "embedding",      "srm",         "dca"};
  return names;
}

// rcr's scope check, then its choice of independent speeds, which fails when loops have to be
// solved together.
std::string rcr_out_of_scope(const Model& model, const VecX& q) {
  try {
    Rcr rcr(model, {});
    VecX qq = q, u = VecX::Zero(model.nv);
    rcr.complete_state(0.0, qq, u);
    return {};
  } catch (const std::exception& e) {
    return e.what();
  }
}

MethodChoice default_method(const Model& model) { return default_method(model, model.q0); }

MethodChoice default_method(const Model& model, const VecX& q) {
  if (!model.has_loops()) return {"tree", "no loop-closing joints or couplings: the articulated-body algorithm"};
  const int largest = aggregate(model).largest_nv();
  std::string size = "the largest aggregated body has ";
  size.append(std::to_string(largest)).append(" joint speeds");
  if (largest <= kSmallAggregatedBody)
    return {"embedding", size + " (<= " + std::to_string(kSmallAggregatedBody) +
                             "): constraint embedding, linear in the number of aggregated bodies"};
  size.append(" (> ").append(std::to_string(kSmallAggregatedBody)).append(")");
  const Constraints constraints(model);
  for (const ChangePoint& p : survey_change_points(model, constraints, q).points)
    if (may_reach(model, p, q, model.u0))
      return {"embedding", size + ", but the motion can reach a change point of the loops (" + describe(model, p) +
                               "): embedding crosses change points most accurately (docs/results.md)"};
  if (rcr_out_of_scope(model, q).empty())
    return {"rcr", size + ", but its loops share their base and close one at a time: recursive coordinate "
                          "reduction stays linear in its size"};
  return {"lagrange-dense", size + ": embedding's local solves would cost as much as the dense one"};
}

std::unique_ptr<Formulation> make_formulation(std::string_view name, const Model& model,
                                              const FormulationSettings& settings) {
  if (name == "tree") return std::make_unique<TreeFormulation>(model);
  if (name == "lagrange-dense") return std::make_unique<LagrangeDense>(model, settings);
  if (name == "lagrange-on") return std::make_unique<LagrangeOn>(model, settings);
  if (name == "gcp") return std::make_unique<Gcp>(model, settings);
  if (name == "nullspace") return std::make_unique<Nullspace>(model, settings);
  if (name == "embedding") return std::make_unique<Embedding>(model, settings);
  if (name == "rcr") return std::make_unique<Rcr>(model, settings);
  const auto& names = formulation_names();
  if (std::find(names.begin(), names.end(), name) != names.end())
    throw ModelError("method '" + std::string(name) + "' is not implemented yet");
  std::string list;
  for (auto n : names) list += (list.empty() ? "" : ", ") + std::string(n);
  throw ModelError("unknown method '" + std::string(name) + "' (known: " + list + ")");
}

}  // namespace loopdyn
