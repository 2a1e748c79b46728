#include "loopdyn/core/options.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace loopdyn {

namespace {

// "'stop' or 'continue'", "'rk2', 'rk4' or 'dopri5'".
std::string quoted_list(const std::vector<std::string_view>& words) {
  std::string s;
  for (std::size_t k = 0; k < words.size(); ++k) {
    if (k > 0) s += k + 1 == words.size() ? " or " : ", ";
    s.append("'").append(words[k]).append("'");
  }
  return s;
}

std::string expected(OptionKind kind, const std::vector<std::string_view>& choices) {
  switch (kind) {
    case OptionKind::real: return "a number";
    case OptionKind::integer: return "an integer";
    case OptionKind::flag: return "true or false";
    case OptionKind::choice: return quoted_list(choices);
    case OptionKind::text: return "a name";
  }
  return "a value";
}

std::string given(const OptionValue& value) {
  if (std::holds_alternative<std::monostate>(value)) return "nothing";
  if (const auto* w = std::get_if<std::string>(&value)) return "'" + *w + "'";
  return format_option_value(value);
}

[[noreturn]] void mismatch(std::string_view name, OptionKind kind, const std::vector<std::string_view>& choices,
                           const OptionValue& value) {
  throw OptionError(std::string(name) + ": expected " + expected(kind, choices) + ", got " + given(value));
}

}  // namespace

namespace detail {

void option_kind_mismatch(std::string_view name, OptionKind kind, const OptionValue& value) {
  mismatch(name, kind, {}, value);
}

}  // namespace detail

std::string cli_flag(std::string_view name) {
  std::string s = "--";
  for (char c : name) s += c == '_' ? '-' : c;
  return s;
}

std::string option_name(std::string_view flag) {
  if (flag.substr(0, 2) != "--") return std::string(flag);
  std::string s;
  for (char c : flag.substr(2)) s += c == '-' ? '_' : c;
  return s;
}

std::vector<Remedy> remedies(std::string_view message) {
  std::vector<Remedy> out;
  for (std::size_t open = message.find('`'); open != std::string_view::npos; open = message.find('`', open + 1)) {
    const std::size_t close = message.find('`', open + 1);
    if (close == std::string_view::npos) break;
    const std::string_view span = message.substr(open + 1, close - open - 1);
    const std::size_t eq = span.find(" = ");
    const std::string_view name = span.substr(0, eq);
    const bool identifier = !name.empty() && name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") ==
                                                 std::string_view::npos;
    if (identifier)
      out.push_back({std::string(name), eq == std::string_view::npos ? std::string() : std::string(span.substr(eq + 3))});
    open = close;
  }
  return out;
}

std::string format_option_value(const OptionValue& value) {
  if (const auto* d = std::get_if<double>(&value)) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", *d);
    return buf;
  }
  if (const auto* i = std::get_if<int>(&value)) return std::to_string(*i);
  if (const auto* b = std::get_if<bool>(&value)) return *b ? "true" : "false";
  if (const auto* w = std::get_if<std::string>(&value)) return *w;
  return {};
}

std::string describe_kind(OptionKind kind, const std::vector<std::string_view>& choices, bool optional) {
  std::string s;
  switch (kind) {
    case OptionKind::real: s = "real"; break;
    case OptionKind::integer: s = "integer"; break;
    case OptionKind::flag: s = "flag"; break;
    case OptionKind::text: s = "text"; break;
    case OptionKind::choice:
      s = "one of ";
      for (std::size_t k = 0; k < choices.size(); ++k) s.append(k ? ", " : "").append(choices[k]);
      break;
  }
  return optional ? s + ", optional" : s;
}

void check_option_value(std::string_view name, OptionKind kind, const std::vector<std::string_view>& choices,
                        bool optional, const OptionValue& value) {
  if (std::holds_alternative<std::monostate>(value)) {
    if (!optional) mismatch(name, kind, choices, value);
    return;
  }
  switch (kind) {
    case OptionKind::real:
      if (!std::holds_alternative<double>(value) && !std::holds_alternative<int>(value))
        mismatch(name, kind, choices, value);
      return;
    case OptionKind::integer:
      if (!std::holds_alternative<int>(value)) mismatch(name, kind, choices, value);
      return;
    case OptionKind::flag:
      if (!std::holds_alternative<bool>(value)) mismatch(name, kind, choices, value);
      return;
    case OptionKind::text:
      if (!std::holds_alternative<std::string>(value)) mismatch(name, kind, choices, value);
      return;
    case OptionKind::choice:
      if (const auto* w = std::get_if<std::string>(&value))
        for (std::string_view c : choices)
          if (c == *w) return;
      mismatch(name, kind, choices, value);
  }
}

OptionValue parse_option_text(std::string_view name, OptionKind kind, const std::vector<std::string_view>& choices,
                              std::string_view text) {
  const std::string t(text);
  char* end = nullptr;
  errno = 0;
  switch (kind) {
    case OptionKind::real: {
      const double d = std::strtod(t.c_str(), &end);
      if (t.empty() || end != t.c_str() + t.size()) mismatch(name, kind, choices, OptionValue(t));
      return d;
    }
    case OptionKind::integer: {
      const long i = std::strtol(t.c_str(), &end, 10);
      if (t.empty() || end != t.c_str() + t.size() || errno == ERANGE || i != static_cast<int>(i))
        mismatch(name, kind, choices, OptionValue(t));
      return static_cast<int>(i);
    }
    case OptionKind::flag:
      if (t.empty() || t == "true" || t == "1") return true;
      if (t == "false" || t == "0") return false;
      mismatch(name, kind, choices, OptionValue(t));
    case OptionKind::choice:
    case OptionKind::text: return t;
  }
  return t;
}

}  // namespace loopdyn
