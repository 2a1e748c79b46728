#include "loopdyn/formulation.hpp"

#include <algorithm>

#include "loopdyn/formulations/tree.hpp"

namespace loopdyn {

const std::vector<std::string_view>& formulation_names() {
  static const std::vector<std::string_view> names{"tree", "lagrange-dense", "lagrange-on", "gcp", "nullspace",
                                                   "rcr",  "embedding",      "srm",         "dca"};
  return names;
}

std::unique_ptr<Formulation> make_formulation(std::string_view name, const Model& model) {
  if (name == "tree") return std::make_unique<TreeFormulation>(model);
  const auto& names = formulation_names();
  if (std::find(names.begin(), names.end(), name) != names.end())
    throw ModelError("method '" + std::string(name) + "' is not implemented yet");
  std::string list;
  for (auto n : names) list += (list.empty() ? "" : ", ") + std::string(n);
  throw ModelError("unknown method '" + std::string(name) + "' (known: " + list + ")");
}

}  // namespace loopdyn
