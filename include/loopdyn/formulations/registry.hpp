// The method registry: one row per method, and the factory. Adding a method is one file pair under
// formulations/ and one row in src/formulations/registry.cpp (docs/methods.md, "How to add a method").
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "loopdyn/formulations/formulation.hpp"

namespace loopdyn {

/// The method registry: one row per method of the papers (docs/methods.md), read by the factory,
/// `--method auto`, the CLI's help and `loopdyn info`, the Simulator, the tests that loop over
/// methods and the methods table of the docs (`loopdyn methods --markdown`). Adding a method is
/// one file under formulations/ and one row in src/formulations/registry.cpp.
struct MethodInfo {
  std::string_view name;   ///< `--method` value
  std::string_view what;   ///< one line: what it does
  std::string_view paper;  ///< paper and sections (shared/papers)
  std::string_view cost;   ///< per call, n speeds, m constraint rows
  Coordinates coordinates = Coordinates::joint;
  /// Reports loop multipliers (what `--reactions` needs on a mechanism with loops).
  bool multipliers = false;
  /// Why the method cannot take the model started at configuration q (empty when it can), with
  /// what to use instead. nullptr: every model.
  std::string (*out_of_scope)(const Model& model, const VecX& q) = nullptr;
  /// nullptr while the method is planned.
  std::unique_ptr<Formulation> (*make)(const Model& model, const FormulationSettings& settings) = nullptr;
  /// Runs with fixed-step integrators only (rk2, rk4) and refuses dopri5 (Formulation::start).
  bool fixed_step = false;

  bool implemented() const { return make != nullptr; }
  std::string scope_problem(const Model& model, const VecX& q) const {
    return out_of_scope ? out_of_scope(model, q) : std::string();
  }
};

/// Every method, in the order of the docs' table.
const std::vector<MethodInfo>& methods();
/// The registry's row for `name`, or nullptr (a Formulation written outside loopdyn).
const MethodInfo* find_method(std::string_view name);
/// The registry's row for `name`; throws ModelError naming the known methods when there is none.
const MethodInfo& method_info(std::string_view name);
/// Names of the implemented methods with loop closure (every one but `tree`), for loops over them.
std::vector<std::string> loop_methods();
/// The methods table of README and docs/methods.md, in Markdown.
std::string methods_markdown();

/// Creates the formulation `name` for `model`. Throws ModelError when the name is unknown, the
/// method is not implemented yet, or it is out of scope for the model (e.g. `tree` with loops).
std::unique_ptr<Formulation> make_formulation(std::string_view name, const Model& model,
                                              const FormulationSettings& settings = {});

}  // namespace loopdyn
