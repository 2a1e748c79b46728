#include "loopdyn/formulations/registry.hpp"

#include <cmath>
#include <deque>
#include <sstream>
#include <stdexcept>
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

// The rows: the built-in methods, then those registered at run time (register_method). A deque:
// rows keep their addresses (find_method's pointers) when one is added.
std::deque<MethodInfo>& registry() {
  using C = Coordinates;
  static std::deque<MethodInfo> table{
      {"tree", "articulated-body algorithm, trees only", "Featherstone; 002 §6", "O(n)", C::joint, false,
       &TreeFormulation::out_of_scope, &make<TreeFormulation>},
      {"lagrange-dense", "CRBA mass matrix, (n+m) KKT solve, Baumgarte", "001 §2.1", "O(n³ + m³)", C::joint, true,
       nullptr, &make<LagrangeDense>, false, nullptr, true},
      {"lagrange-on", "\"traditional O(n)\": u̇ = η + ζλ, m×m solve", "000 §2.3-2.6", "O(n + nm² + m³)", C::joint, true,
       nullptr, &make<LagrangeOn>, false, nullptr, true},
      {"gcp", "generalized coordinate partitioning, Newton position and velocity analysis", "001 §2.2",
       "O(n³ + m³)", C::joint, true, nullptr, &make<Gcp>, false, nullptr, true},
      {"nullspace", "partial velocity matrix B, Bᵀ M B in the independent speeds", "001 §3", "O(n³)", C::joint, true, nullptr,
       &make<Nullspace>, false, nullptr, true},
      {"rcr", "recursive coordinate reduction, loop by loop, velocity constraints exact; loops sharing a base",
       "000 §3-4", "O(n + m)", C::joint, true, &Rcr::out_of_scope, &make<Rcr>, false,
       &options_of<&FormulationSettings::rcr, &rcr_options>},
      {"embedding", "constraint embedding: loops folded into aggregated bodies, ABA over them", "002 §4-9",
       "O(n) for small loops", C::joint, true, nullptr, &make<Embedding>, false, nullptr, true},
      {"srm", "sequential regularization: S penalty iterates, loops as body wrenches, fixed-step rk2/rk4",
       "003 §3", "O(n + m) × S", C::joint, true, nullptr, &make<Srm>, true,
       &options_of<&FormulationSettings::srm, &srm_options>},
      {"dca", "divide and conquer over an assembly tree, augmented Lagrangian, mass-orthogonal projections, parallel",
       "004 §2-3", "O(k n), O(k log n) parallel; nets O(k n^1.5)", C::absolute, true, nullptr, &make<Dca>,
       false, &options_of<&FormulationSettings::dca, &dca_options>},
  };
  return table;
}

}  // namespace

const std::deque<MethodInfo>& methods() { return registry(); }

const MethodInfo& register_method(MethodInfo row) {
  if (row.name.empty() || !row.make) throw std::invalid_argument("register_method: a row needs a name and a make function");
  if (find_method(row.name))
    throw std::invalid_argument("register_method: method '" + std::string(row.name) + "' is registered already");
  return registry().emplace_back(row);
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

namespace {

// The model's first drive, or nullptr.
const ModelCoupling* first_drive(const Model& model) {
  for (const ModelCoupling& c : model.couplings)
    if (c.drive) return &c;
  return nullptr;
}

}  // namespace

std::string MethodInfo::scope_problem(const Model& model, const VecX& q) const {
  if (const ModelCoupling* d = first_drive(model); d && !drives) {
    std::string with;
    for (const MethodInfo& m : methods())
      if (m.drives && m.implemented()) with.append(with.empty() ? "" : ", ").append(m.name);
    return std::string(name) + " does not take drives (`" + d->name +
           "`): its velocity analysis has no time derivative. Use " + with + ", or `method = auto`";
  }
  return out_of_scope ? out_of_scope(model, q) : std::string();
}

std::string methods_markdown() {
  std::string s = "| `" + cli_flag("method") + "` | what | paper | cost per call | coordinates | multipliers | drives | status |\n";
  s += "|---|---|---|---|---|---|---|---|\n";
  for (const MethodInfo& m : methods()) {
    s.append("| `").append(m.name).append("` | ").append(m.what).append(" | ").append(m.paper).append(" | ");
    s.append(m.cost).append(" | ").append(m.coordinates == Coordinates::joint ? "joint" : "absolute").append(" | ");
    s.append(m.multipliers ? "yes" : "no").append(" | ").append(m.drives ? "yes" : "no").append(" | ").append(m.implemented() ? "available" : "planned").append(" |\n");
  }
  return s;
}

void check_settings(const LoopMethodSettings& s) {
  auto check = [](bool ok, const char* what, double value) {
    if (ok) return;
    std::ostringstream out;
    out << what << ", got " << value;
    throw std::invalid_argument(out.str());
  };
  check(std::isfinite(s.baumgarte_alpha) && s.baumgarte_alpha >= 0.0,
        "the Baumgarte damping α (`baumgarte_alpha`, 1/s) must be finite and >= 0 (a negative α makes the closure "
        "errors grow)",
        s.baumgarte_alpha);
  check(std::isfinite(s.baumgarte_beta) && s.baumgarte_beta >= 0.0,
        "the Baumgarte stiffness β (`baumgarte_beta`, 1/s) must be finite and >= 0", s.baumgarte_beta);
  check(s.rank_tolerance > 0.0 && s.rank_tolerance < 1.0, "the rank tolerance (`rank_tolerance`) must be > 0 and < 1",
        s.rank_tolerance);
  check(std::isfinite(s.position_tolerance) && s.position_tolerance > 0.0,
        "the position tolerance (`position_tolerance`) must be finite and > 0", s.position_tolerance);
  check(s.max_position_iterations >= 1, "the Newton iterations of the position analysis (`max_position_iterations`) "
        "must be at least 1", s.max_position_iterations);
  check(std::isfinite(s.partition_condition_growth) && s.partition_condition_growth > 1.0,
        "the growth of the dependent block's condition (`partition_condition_growth`) must be finite and > 1",
        s.partition_condition_growth);
  check(s.threads >= 0 && s.threads <= kMostThreads,
        "the number of threads (`threads`) must be >= 0 (0: the machine's cores) and at most 4096", s.threads);
}

std::unique_ptr<Formulation> make_formulation(std::string_view name, const Model& model,
                                              const FormulationSettings& settings) {
  check_settings(settings);
  const MethodInfo& m = method_info(name);
  if (!m.implemented())
    throw ModelError("method '" + std::string(name) + "' (paper " + std::string(m.paper) + ") is not implemented yet");
  if (!m.drives && first_drive(model)) throw ModelError(m.scope_problem(model, model.q0));
  return m.make(model, settings);
}

namespace {

// The settings every loop method shares, within FormulationSettings.
LoopMethodSettings& shared(FormulationSettings& s) { return s; }
const LoopMethodSettings& shared(const FormulationSettings& s) { return s; }

// The lines of `loopdyn methods` for a table: "  --flag (name) = default unit: help".
template <class S>
void option_lines(std::string& s, const OptionTable<S>& table) {
  const S defaults{};
  for (const Option<S>& o : table) {
    const std::string def = format_option_value(o.get(defaults));
    s.append("    ").append(cli_spelling(o)).append(" (").append(o.name).append(") = ");
    s.append(def.empty() ? "unset" : def);
    if (!o.unit.empty()) s.append(" ").append(o.unit);
    s.append(": ").append(o.help).append("\n");
  }
}

}  // namespace

OptionTable<FormulationSettings> formulation_options() {
  OptionTable<FormulationSettings> t =
      nested_options<FormulationSettings>(loop_method_options(), [](auto& s) -> auto& { return shared(s); });
  for (const MethodInfo& m : methods())
    if (m.options)
      for (const Option<FormulationSettings>& o : m.options()) t.push_back(o);
  return t;
}

std::string methods_text() {
  std::string s;
  for (const MethodInfo& m : methods()) {
    s.append(m.name).append(std::string(m.name.size() < 15 ? 15 - m.name.size() : 0, ' ')).append(" ");
    s.append(m.implemented() ? "available " : "planned   ").append(m.what).append(" (").append(m.paper).append("; ");
    s.append(m.cost).append(", ").append(m.coordinates == Coordinates::joint ? "joint" : "absolute");
    s.append(" coordinates").append(m.multipliers ? ", multipliers" : "").append(")\n");
    if (m.options) option_lines(s, m.options());
  }
  s.append("\nevery loop method (every one but tree):\n");
  option_lines(s, loop_method_options());
  return s;
}

}  // namespace loopdyn
