// Option tables: the one description of every setting a user can give. A table lists
// the options of one settings struct: name, kind, unit, help, and how to read and write the
// member. The front ends read the tables and nothing else: the CLI's flag is the name with
// dashes (`dca_alpha` -> `--dca-alpha`), Python's keyword argument is the name, `loopdyn methods`
// and the docs' options table print them, and the default is the struct's own member initializer.
// A method's table sits beside its settings struct (formulations/<method>_settings.hpp); the run's
// in run/run_options.hpp.
#pragma once

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

namespace loopdyn {

/// What an option holds: a real number, an integer, a flag (on/off), one of a list of words
/// (choice), or free text (a name the library checks itself, e.g. the method).
enum class OptionKind { real, integer, flag, choice, text };

/// A value as a front end hands it over: unset (std::monostate, Python's None, a CLI option not
/// given; only for optional options), a real, an integer, a flag, or a word (choice, text).
using OptionValue = std::variant<std::monostate, double, int, bool, std::string>;

/// A value a front end gave that the option does not take (not a number, not one of the choices,
/// None for an option that must be set). The message names the option (by its name: each front
/// end spells it) and what it expects.
class OptionError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// One option of the settings struct S.
template <class S>
struct Option {
  std::string_view name;  ///< snake_case: Python's keyword; the CLI flag is "--" + name with '-' for '_'
  OptionKind kind = OptionKind::real;
  std::string_view unit;  ///< SI unit of a number, "" when it has none
  std::string_view help;  ///< one sentence, without the default (printed from get(S{}))
  std::vector<std::string_view> choices;  ///< the words of a choice
  /// May be unset (std::nullopt in C++, None in Python, not given in the CLI): the library then
  /// picks the value (srm's ε, the run's integrator).
  bool optional = false;
  /// An older spelling that keeps working (CLI and Python), e.g. dca_iterations.
  std::string_view alias;
  /// A flag that is on by default is turned off by this name (CLI `--no-watch`); Python sets the
  /// flag itself (`watch=False`).
  std::string_view negation;
  std::function<OptionValue(const S&)> get;
  std::function<void(S&, const OptionValue&)> set;

  OptionValue default_value() const { return get(S{}); }
};

template <class S>
using OptionTable = std::vector<Option<S>>;

namespace detail {

template <class T>
struct OptionTraits;
template <>
struct OptionTraits<double> {
  static constexpr OptionKind kind = OptionKind::real;
};
template <>
struct OptionTraits<int> {
  static constexpr OptionKind kind = OptionKind::integer;
};
template <>
struct OptionTraits<bool> {
  static constexpr OptionKind kind = OptionKind::flag;
};
template <>
struct OptionTraits<std::string> {
  static constexpr OptionKind kind = OptionKind::text;
};

[[noreturn]] void option_kind_mismatch(std::string_view name, OptionKind kind, const OptionValue& value);

/// The value as a T (an integer is taken for a real); OptionError naming the option otherwise.
template <class T>
T value_as(std::string_view name, const OptionValue& value) {
  if (const T* v = std::get_if<T>(&value)) return *v;
  if constexpr (std::is_same_v<T, double>)
    if (const int* v = std::get_if<int>(&value)) return *v;
  option_kind_mismatch(name, OptionTraits<T>::kind, value);
}

}  // namespace detail

/// The option `name` of member `field` (double, int, bool, std::string or std::optional<double>).
template <class S, class T>
Option<S> member_option(std::string_view name, T S::*field, std::string_view unit, std::string_view help) {
  Option<S> o;
  o.name = name;
  o.unit = unit;
  o.help = help;
  if constexpr (std::is_same_v<T, std::optional<double>>) {
    o.kind = OptionKind::real;
    o.optional = true;
    o.get = [field](const S& s) { return (s.*field) ? OptionValue(*(s.*field)) : OptionValue(); };
    o.set = [field, name](S& s, const OptionValue& v) {
      s.*field = std::holds_alternative<std::monostate>(v) ? std::nullopt
                                                           : std::optional<double>(detail::value_as<double>(name, v));
    };
  } else {
    o.kind = detail::OptionTraits<T>::kind;
    o.get = [field](const S& s) { return OptionValue(s.*field); };
    o.set = [field, name](S& s, const OptionValue& v) { s.*field = detail::value_as<T>(name, v); };
  }
  return o;
}

/// The option `name` of an enum member `field`, spelled by `words` in the order of the enum's
/// values (0, 1, ...).
template <class S, class E>
Option<S> choice_option(std::string_view name, E S::*field, std::vector<std::string_view> words,
                        std::string_view help) {
  static_assert(std::is_enum_v<E>);
  Option<S> o;
  o.name = name;
  o.kind = OptionKind::choice;
  o.help = help;
  o.choices = words;
  o.get = [field, words](const S& s) { return OptionValue(std::string(words[static_cast<std::size_t>(s.*field)])); };
  o.set = [field, words, name](S& s, const OptionValue& v) {
    const std::string word = detail::value_as<std::string>(name, v);
    for (std::size_t k = 0; k < words.size(); ++k)
      if (words[k] == word) {
        s.*field = static_cast<E>(k);
        return;
      }
  };
  return o;
}

/// The table of a struct that sits inside another (a method's settings in FormulationSettings,
/// those in RunSettings): the same options, reading and writing through `inner`.
template <class Outer, class Inner, class Access>
OptionTable<Outer> nested_options(const OptionTable<Inner>& table, Access inner) {
  OptionTable<Outer> out;
  out.reserve(table.size());
  for (const Option<Inner>& o : table) {
    Option<Outer> n;
    n.name = o.name;
    n.kind = o.kind;
    n.unit = o.unit;
    n.help = o.help;
    n.choices = o.choices;
    n.optional = o.optional;
    n.alias = o.alias;
    n.negation = o.negation;
    n.get = [get = o.get, inner](const Outer& s) { return get(std::invoke(inner, s)); };
    n.set = [set = o.set, inner](Outer& s, const OptionValue& v) { set(std::invoke(inner, s), v); };
    out.push_back(std::move(n));
  }
  return out;
}

/// A setting a library message names, and the value it suggests ("" when it names the setting
/// only). Messages name settings between backticks, `dca_alpha` or `method = dca`: that is their
/// neutral spelling (what() of the library's exceptions), and each front end renders it in its own
/// (render_settings in run/run_options.hpp: `--method dca` in the CLI, `method="dca"` in Python).
struct Remedy {
  std::string setting, value;
};
/// The settings a message names (backticked spans `name` or `name = value` whose name is a
/// snake_case identifier), in order; whether each is an option is for the tables to say.
std::vector<Remedy> remedies(std::string_view message);

/// The CLI's flag of an option name: "--" and the name with '-' for '_' (dca_alpha -> --dca-alpha).
std::string cli_flag(std::string_view name);
/// The option name of a CLI flag ("--dca-alpha" -> "dca_alpha"); the name itself when it has no "--".
std::string option_name(std::string_view flag);
/// The flag's spelling in the CLI: `--name` for a flag that is off by default, `--negation` for one
/// that is on by default (--no-watch), `--name` for every other option.
template <class S>
std::string cli_spelling(const Option<S>& o) {
  if (o.kind == OptionKind::flag && o.get(S{}) == OptionValue(true) && !o.negation.empty()) return cli_flag(o.negation);
  return cli_flag(o.name);
}

/// A value as the CLI takes it: "1e-06", "10", "true", "stop"; "" when unset.
std::string format_option_value(const OptionValue& value);
/// The kind as the docs' table says it: "real", "integer", "flag", "one of stop, continue", "text".
std::string describe_kind(OptionKind kind, const std::vector<std::string_view>& choices, bool optional);

/// Checks `value` against what the option takes (kind, choices, unset only when optional) and
/// throws OptionError "<name>: expected ..., got ..." otherwise; integers are taken for reals.
void check_option_value(std::string_view name, OptionKind kind, const std::vector<std::string_view>& choices,
                        bool optional, const OptionValue& value);
/// The value of an option from the CLI's text: a number for reals and integers (the whole text),
/// "true"/"false" for flags, one of the choices for a choice; OptionError naming the option otherwise.
OptionValue parse_option_text(std::string_view name, OptionKind kind, const std::vector<std::string_view>& choices,
                              std::string_view text);

/// The option of `table` called `name` (or its alias, or its negation; CLI spellings taken too:
/// "--dca-alpha"), or nullptr.
template <class S>
const Option<S>* find_option(const OptionTable<S>& table, std::string_view name) {
  const std::string n = option_name(name);
  for (const Option<S>& o : table)
    if (o.name == n || (!o.alias.empty() && o.alias == n) || (!o.negation.empty() && o.negation == n)) return &o;
  return nullptr;
}

/// Sets option `name` of `settings` to `value`, checked (check_option_value); a flag named by its
/// negation is set to !value. False when the table has no such option.
template <class S>
bool set_option(const OptionTable<S>& table, S& settings, std::string_view name, OptionValue value) {
  const Option<S>* o = find_option(table, name);
  if (!o) return false;
  check_option_value(o->name, o->kind, o->choices, o->optional, value);
  if (!o->negation.empty() && option_name(name) == o->negation) value = !std::get<bool>(value);
  o->set(settings, value);
  return true;
}

/// set_option from the CLI's text (parse_option_text); a flag given without text is "true".
template <class S>
bool set_option_text(const OptionTable<S>& table, S& settings, std::string_view name, std::string_view text) {
  const Option<S>* o = find_option(table, name);
  if (!o) return false;
  return set_option(table, settings, name, parse_option_text(o->name, o->kind, o->choices, text));
}

/// The names of a table, comma-separated (the list of an "unknown option" message).
template <class S>
std::string option_names(const OptionTable<S>& table) {
  std::string s;
  for (const Option<S>& o : table) s.append(s.empty() ? "" : ", ").append(o.name);
  return s;
}

/// One table as Markdown rows: | CLI | Python | kind | default | unit | what |.
template <class S>
std::string options_markdown_rows(const OptionTable<S>& table) {
  std::string s;
  const S defaults{};
  for (const Option<S>& o : table) {
    const std::string def = format_option_value(o.get(defaults));
    s.append("| `").append(cli_spelling(o)).append("`");
    if (!o.alias.empty()) s.append(" (`").append(cli_flag(o.alias)).append("`)");
    s.append(" | `").append(o.name).append("` | ").append(describe_kind(o.kind, o.choices, o.optional));
    s.append(" | ").append(def.empty() ? "unset" : def).append(" | ").append(o.unit).append(" | ");
    for (char c : o.help) s.append(c == '|' ? "\\|" : std::string(1, c));  // a cell's '|' escaped
    s.append(" |\n");
  }
  return s;
}

}  // namespace loopdyn
