// The option table of a run (RunSettings, run.hpp) and the tables of every option a front end
// takes: the run's, then the formulations' (formulation_options(): the options shared by the
// loop methods and each registered method's table). `loopdyn simulate`'s flags, Python's
// keyword arguments of simulate() and method(), `loopdyn methods` and the docs' options table
// (`loopdyn methods --options-markdown`) are all read from here (core/options.hpp has the rules).
#pragma once

#include <string>
#include <string_view>

#include "loopdyn/core/options.hpp"
#include "loopdyn/run/run.hpp"

namespace loopdyn {

/// The run's own options: method, integrator, steps and tolerances, output, projection, watch.
const OptionTable<RunSettings>& run_options();
/// Every option of a run: run_options(), then formulation_options() through RunSettings::formulation.
/// Built again at every call: a method registered since (register_method) is in it.
OptionTable<RunSettings> all_run_options();

/// The options of `loopdyn methods`, in Markdown: the run's, those shared by the loop methods, and
/// each method's own table (docs/methods.md, "Options").
std::string options_markdown();

/// How a front end spells a setting: neutral (the library's messages: `dca_alpha = 1e5`), the
/// CLI's (--dca-alpha 1e5, --method dca, --no-watch), Python's (dca_alpha=1e5, method="dca",
/// watch=False).
enum class Spelling { neutral, cli, python };
/// The message with every setting it names (remedies(): backticked `name` or `name = value` whose
/// name is an option of all_run_options()) in the front end's spelling; the rest as it is.
std::string render_settings(std::string_view message, Spelling spelling);

}  // namespace loopdyn
