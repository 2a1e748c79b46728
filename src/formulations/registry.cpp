#include "loopdyn/formulations/registry.hpp"

#include <type_traits>

#include "loopdyn/formulations/dca.hpp"
#include "loopdyn/formulations/embedding.hpp"
#include "loopdyn/formulations/gcp.hpp"
#include "loopdyn/formulations/lagrange_dense.hpp"
#include "loopdyn/formulations/lagrange_on.hpp"
#include "loopdyn/formulations/nullspace.hpp"
#include "loopdyn/formulations/rcr.hpp"
#include "loopdyn/formulations/srm.hpp"
#include "loopdyn/formulations/tree.hpp"

namespace loopdyn {

namespace {

template <class F>
std::unique_ptr<Formulation> make(const Model& model, const FormulationSettings& settings) {
  if constexpr (std::is_constructible_v<F, const Model&, const FormulationSettings&>)
    return std::make_unique<F>(model, settings);
  else
    return std::make_unique<F>(model);
}

}  // namespace

const std::vector<MethodInfo>& methods() {
  using C = Coordinates;
  static const std::vector<MethodInfo> table{
      {"tree", "articulated-body algorithm, trees only", "Featherstone; 002 §6", "O(n)", C::joint, false,
       &TreeFormulation::out_of_scope, &make<TreeFormulation>},
      {"lagrange-dense", "CRBA mass matrix, (n+m) KKT solve, Baumgarte", "001 §2.1", "O(n³ + m³)", C::joint, true,
       nullptr, &make<LagrangeDense>},
      {"lagrange-on", "\"traditional O(n)\": u̇ = η + ζλ, m×m solve", "000 §2.3-2.6", "O(n + nm² + m³)", C::joint, true,
       nullptr, &make<LagrangeOn>},
      {"gcp", "generalized coordinate partitioning, Newton position and velocity analysis", "001 §2.2",
       "O(n³ + m³)", C::joint, true, nullptr, &make<Gcp>},
      {"nullspace", "partial velocity matrix B, Bᵀ M B in the independent speeds", "001 §3", "O(n³)", C::joint, true, nullptr,
       &make<Nullspace>},
      {"rcr", "recursive coordinate reduction, loop by loop, velocity constraints exact; loops sharing a base",
       "000 §3-4", "O(n + m)", C::joint, true, &Rcr::out_of_scope, &make<Rcr>},
      {"embedding", "constraint embedding: loops folded into aggregated bodies, ABA over them", "002 §4-9",
       "O(n) for small loops", C::joint, true, nullptr, &make<Embedding>},
      {"srm", "sequential regularization: S penalty iterates, loops as body wrenches, fixed-step rk2/rk4",
       "003 §3", "O(n + m) × S", C::joint, true, nullptr, &make<Srm>, true},
      {"dca", "divide and conquer over an assembly tree, augmented Lagrangian, mass-orthogonal projections, parallel",
       "004 §2-3", "O(k n), O(k log n) parallel; nets O(k n^1.5)", C::absolute, true, nullptr, &make<Dca>},
  };
  return table;
}

const MethodInfo* find_method(std::string_view name) {
  for (const MethodInfo& m : methods())
    if (m.name == name) return &m;
  return nullptr;
}

const MethodInfo& method_info(std::string_view name) {
  if (const MethodInfo* m = find_method(name)) return *m;
  std::string list;
  for (const MethodInfo& m : methods()) list.append(list.empty() ? "" : ", ").append(m.name);
  throw ModelError("unknown method '" + std::string(name) + "' (known: " + list + ")");
}

std::vector<std::string> loop_methods() {
  std::vector<std::string> out;
  for (const MethodInfo& m : methods())
    if (m.implemented() && m.name != "tree") out.emplace_back(m.name);
  return out;
}

std::string methods_markdown() {
  std::string s = "| `--method` | what | paper | cost per call | coordinates | multipliers | status |\n";
  s += "|---|---|---|---|---|---|---|\n";
  for (const MethodInfo& m : methods()) {
    s.append("| `").append(m.name).append("` | ").append(m.what).append(" | ").append(m.paper).append(" | ");
    s.append(m.cost).append(" | ").append(m.coordinates == Coordinates::joint ? "joint" : "absolute").append(" | ");
    s.append(m.multipliers ? "yes" : "no").append(" | ").append(m.implemented() ? "available" : "planned").append(" |\n");
  }
  return s;
}

std::unique_ptr<Formulation> make_formulation(std::string_view name, const Model& model,
                                              const FormulationSettings& settings) {
  const MethodInfo& m = method_info(name);
  if (!m.implemented())
    throw ModelError("method '" + std::string(name) + "' (paper " + std::string(m.paper) + ") is not implemented yet");
  return m.make(model, settings);
}

}  // namespace loopdyn
