#include "loopdyn/run/run_options.hpp"

#include "loopdyn/formulations/registry.hpp"

namespace loopdyn {

namespace {

// An option of RunSettings read and written through get/set (members below simulation).
template <class Get, class Set>
Option<RunSettings> run_option(std::string_view name, OptionKind kind, std::string_view unit, std::string_view help,
                               Get get, Set set) {
  Option<RunSettings> o;
  o.name = name;
  o.kind = kind;
  o.unit = unit;
  o.help = help;
  o.get = get;
  o.set = set;
  return o;
}

// A real member of RunSettings reached by `field`.
template <class Field>
Option<RunSettings> run_real(std::string_view name, std::string_view unit, std::string_view help, Field field) {
  return run_option(
      name, OptionKind::real, unit, help, [field](const RunSettings& s) { return OptionValue(field(s)); },
      [field, name](RunSettings& s, const OptionValue& v) { field(s) = detail::value_as<double>(name, v); });
}

// A flag of RunSettings reached by `field`.
template <class Field>
Option<RunSettings> run_flag(std::string_view name, std::string_view help, Field field) {
  return run_option(
      name, OptionKind::flag, "", help, [field](const RunSettings& s) { return OptionValue(field(s)); },
      [field, name](RunSettings& s, const OptionValue& v) { field(s) = detail::value_as<bool>(name, v); });
}

}  // namespace

const OptionTable<RunSettings>& run_options() {
  static const OptionTable<RunSettings> table = [] {
    using R = RunSettings;
    OptionTable<R> t;
    t.push_back(member_option("method", &R::method, "",
                              "formulation (`loopdyn methods`); auto picks one for the mechanism and the integrator "
                              "(`loopdyn info` says which and why) and hands the run to dca where its choice stops"));
    Option<R> integrator = run_option(
        "integrator", OptionKind::choice, "",
        "rk2, rk4, dopri5 or bdf (implicit, for stiff mechanisms: docs/methods.md, \"Integrators\"); unset: dopri5, "
        "error-controlled by `rtol` and `atol` (rk4 for the fixed-step method srm)",
        [](const R& s) {
          return s.integrator ? OptionValue(std::string(to_string(*s.integrator))) : OptionValue();
        },
        [](R& s, const OptionValue& v) {
          if (std::holds_alternative<std::monostate>(v)) s.integrator.reset();
          else s.integrator = parse_integrator(detail::value_as<std::string>("integrator", v));
        });
    integrator.choices = {"rk2", "rk4", "dopri5", "bdf"};
    integrator.optional = true;
    t.push_back(std::move(integrator));
    t.push_back(run_real("dt", "s", "fixed step (rk2, rk4; at most `output_dt`: every output time ends a step); initial step (dopri5, bdf)",
                         [](auto& s) -> auto& { return s.simulation.integrator.dt; }));
    t.push_back(run_real("t_end", "s", "final time", [](auto& s) -> auto& { return s.simulation.t_end; }));
    t.push_back(run_real("rtol", "", "relative tolerance (dopri5, bdf): 0 or at least 100 ε = 2.2e-14",
                         [](auto& s) -> auto& { return s.simulation.integrator.rtol; }));
    t.push_back(run_real("atol", "", "absolute tolerance (dopri5, bdf)",
                         [](auto& s) -> auto& { return s.simulation.integrator.atol; }));
    t.push_back(run_real("output_dt", "s", "interval between output rows (a run keeps at most 1e7 rows)",
                         [](auto& s) -> auto& { return s.simulation.output_dt; }));
    t.push_back(run_flag("project",
                         "mass-orthogonal projection of positions and speeds onto the constraints after every step",
                         [](auto& s) -> auto& { return s.simulation.project; }));
    Option<R> tolerance = run_real("project_tolerance", "",
                                   "projection tolerance on max|Phi| and on max|G u| / max(1, max|G| max|u|)",
                                   [](auto& s) -> auto& { return s.simulation.projection.position_tolerance; });
    tolerance.set = [](R& s, const OptionValue& v) {
      s.simulation.projection.position_tolerance = s.simulation.projection.velocity_tolerance =
          detail::value_as<double>("project_tolerance", v);
    };
    t.push_back(std::move(tolerance));
    t.push_back(run_flag("reactions",
                         "write reaction.<joint>.fx,fy,fz,tx,ty,tz columns (force and moment of the parent side on "
                         "the child, child joint frame)",
                         [](auto& s) -> auto& { return s.simulation.reactions; }));
    t.push_back(run_flag("diagnostics",
                         "write the method's own per-step columns (dca: iterations and residuals of its evaluations "
                         "and projections)",
                         [](auto& s) -> auto& { return s.simulation.diagnostics; }));
    Option<R> watch = run_flag("watch",
                               "check closure and energy balance after every step (the run watch, docs/methods.md); "
                               "off: a run that leaves the motion goes on at your own risk",
                               [](auto& s) -> auto& { return s.simulation.watch.enabled; });
    watch.negation = "no_watch";
    t.push_back(std::move(watch));
    t.push_back(run_real("fixed_step_accuracy", "",
                         "relative accuracy the run watch holds a fixed-step run (rk2, rk4) to; dopri5 and bdf runs "
                         "are held to `rtol`",
                         [](auto& s) -> auto& { return s.simulation.watch.fixed_step_accuracy; }));
    return t;
  }();
  return table;
}

OptionTable<RunSettings> all_run_options() {
  OptionTable<RunSettings> t = run_options();
  for (Option<RunSettings>& o : nested_options<RunSettings>(formulation_options(), &RunSettings::formulation))
    t.push_back(std::move(o));
  return t;
}

std::string options_markdown() {
  const std::string head = "| CLI | Python | kind | default | unit | what |\n|---|---|---|---|---|---|\n";
  std::string s = "Run (`loopdyn simulate`, `loopdyn.simulate`):\n\n" + head + options_markdown_rows(run_options());
  s += "\nEvery loop method (also `loopdyn.method`):\n\n" + head + options_markdown_rows(loop_method_options());
  for (const MethodInfo& m : methods())
    if (m.options && !m.options().empty())
      s.append("\n`").append(m.name).append("`:\n\n").append(head).append(options_markdown_rows(m.options()));
  return s;
}

namespace {

// One setting in a front end's spelling; value "" names the setting alone.
std::string spell(const Option<RunSettings>& o, const std::string& value, Spelling spelling) {
  const bool words = o.kind == OptionKind::choice || o.kind == OptionKind::text;
  if (spelling == Spelling::python) {
    if (value.empty()) return std::string(o.name);
    if (o.kind == OptionKind::flag) return std::string(o.name) + (value == "true" ? "=True" : "=False");
    return std::string(o.name) + "=" + (words ? "\"" + value + "\"" : value);
  }
  if (value.empty()) return cli_spelling(o);
  if (o.kind == OptionKind::flag)
    return value == "false" && !o.negation.empty() ? cli_flag(o.negation) : cli_flag(o.name);
  return cli_flag(o.name) + " " + value;
}

}  // namespace

std::string render_settings(std::string_view message, Spelling spelling) {
  if (spelling == Spelling::neutral || message.find('`') == std::string_view::npos) return std::string(message);
  const OptionTable<RunSettings> table = all_run_options();
  std::string out;
  std::size_t pos = 0;
  for (std::size_t open = message.find('`'); open != std::string_view::npos; open = message.find('`', pos)) {
    const std::size_t close = message.find('`', open + 1);
    if (close == std::string_view::npos) break;
    const std::vector<Remedy> r = remedies(message.substr(open, close - open + 1));
    const Option<RunSettings>* o = r.size() == 1 ? find_option(table, r[0].setting) : nullptr;
    out.append(message.substr(pos, open - pos));
    if (o && o->name == r[0].setting) out += spell(*o, r[0].value, spelling);
    else out.append(message.substr(open, close - open + 1));
    pos = close + 1;
  }
  out.append(message.substr(pos));
  return out;
}

}  // namespace loopdyn
