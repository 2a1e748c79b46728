#include "loopdyn/formulation.hpp"

#include <algorithm>

#include "loopdyn/formulations/embedding.hpp"
#include "loopdyn/formulations/lagrange_dense.hpp"
#include "loopdyn/formulations/gcp.hpp"
#include "loopdyn/formulations/lagrange_on.hpp"
#include "loopdyn/formulations/nullspace.hpp"
#include "loopdyn/formulations/tree.hpp"

namespace loopdyn {

const std::vector<std::string_view>& formulation_names() {
  static const std::vector<std::string_view> names{"tree", "lagrange-dense", "lagrange-on", "gcp", "nullspace",
                                                   "rcr",  "embedding",      "srm",         "dca"};
  return names;
}

std::unique_ptr<Formulation> make_formulation(std::string_view name, const Model& model,
                                              const FormulationSettings& settings) {
  if (name == "tree") return std::make_unique<TreeFormulation>(model);
  if (name == "lagrange-dense") return std::make_unique<LagrangeDense>(model, settings);
  if (name == "lagrange-on") return std::make_unique<LagrangeOn>(model, settings);
  if (name == "gcp") return std::make_unique<Gcp>(model, settings);
  if (name == "nullspace") return std::make_unique<Nullspace>(model, settings);
  if (name == "embedding") return std::make_unique<Embedding>(model, settings);
  const auto& names = formulation_names();
  if (std::find(names.begin(), names.end(), name) != names.end())
    throw ModelError("method '" + std::string(name) + "' is not implemented yet");
  std::string list;
  for (auto n : names) list += (list.empty() ? "" : ", ") + std::string(n);
  throw ModelError("unknown method '" + std::string(name) + "' (known: " + list + ")");
}

}  // namespace loopdyn
