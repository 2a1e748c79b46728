// The method registry: one row per method (with its option table), and the factory. Adding a method is a
// file pair under formulations/ and one row in src/formulations/registry.cpp (docs/methods.md, "How to add a method").
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "loopdyn/core/options.hpp"
#include "loopdyn/formulations/formulation.hpp"

namespace loopdyn {

/// The method registry: one row per method of the papers (docs/methods.md), read by the factory,
/// `--method auto`, the CLI's help and `loopdyn info`, the Simulator, the tests that loop over
/// methods, the front ends' options and the docs' tables (`loopdyn methods --markdown`). Adding a method
/// is one file under formulations/ and one row in src/formulations/registry.cpp (or register_method).
struct MethodInfo {
  std::string_view name;   ///< `--method` value
  std::string_view what;   ///< one line: what it does
  std::string_view paper;  ///< paper and sections (docs/references.md)
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
  /// The method's own options (its settings struct's table within FormulationSettings:
  /// options_of below), nullptr when it has none; those every loop method shares are
  /// loop_method_options(). The CLI's flags, Python's keywords, `loopdyn methods` and the docs'
  /// options table read them from here (run/run_options.hpp).
  const OptionTable<FormulationSettings>& (*options)() = nullptr;
  /// Takes drives (`drives:`, rheonomic rows: Φ_t in its velocity analysis, f̈ in γ).
  bool drives = false;

  bool implemented() const { return make != nullptr; }
  /// Why the method cannot take the model (out_of_scope's reason, or the drives it does not take).
  std::string scope_problem(const Model& model, const VecX& q) const;
};

/// Every method, in the order of the docs' table, then those registered since.
const std::deque<MethodInfo>& methods();
/// Adds a method's row at run time (a method written outside the library: tests/toy_method.hpp),
/// before any run that names it; the registry is not locked, so not while other threads read it.
/// Returns the registry's row; std::invalid_argument when the name is taken or the row has no make.
const MethodInfo& register_method(MethodInfo row);
/// The registry's row for `name`, or nullptr (a Formulation written outside loopdyn).
const MethodInfo* find_method(std::string_view name);
/// The registry's row for `name`; throws ModelError naming the known methods when there is none.
const MethodInfo& method_info(std::string_view name);
/// Names of the implemented methods with loop closure (every one but `tree`), for loops over them.
std::vector<std::string> loop_methods();
/// The methods table of README and docs/methods.md, in Markdown.
std::string methods_markdown();
/// `loopdyn methods`: a line per method and its options (flag, keyword, default, unit, help), then
/// the options every loop method shares; settings in help texts in the neutral spelling.
std::string methods_text();

/// The table of a method's own settings struct (member of FormulationSettings) within
/// FormulationSettings: what its registry row points at, e.g.
/// `&options_of<&FormulationSettings::dca, &dca_options>`.
template <auto member, auto table>
const OptionTable<FormulationSettings>& options_of() {
  static const OptionTable<FormulationSettings> t = nested_options<FormulationSettings>(table(), member);
  return t;
}
/// Every option of the formulations: loop_method_options(), then each registered method's table,
/// in the registry's order (built again at every call: a method registered since is in it).
OptionTable<FormulationSettings> formulation_options();

/// Creates the formulation `name` for `model`. Throws ModelError when the name is unknown, the
/// method is not implemented yet, or it is out of scope for the model (e.g. `tree` with loops).
std::unique_ptr<Formulation> make_formulation(std::string_view name, const Model& model,
                                              const FormulationSettings& settings = {});

}  // namespace loopdyn
