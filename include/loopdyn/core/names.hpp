// Names, counts and numbers in messages: what a misspelt name probably meant (an option, a
// subcommand, a plot column, a URDF element), "1 body" / "3 bodies" and "1.23e-05".
#pragma once

#include <algorithm>
#include <cstddef>
#include <charconv>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace loopdyn {

/// Insertions, deletions and substitutions that turn `a` into `b` (Levenshtein).
inline std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = above;
    }
  }
  return row[b.size()];
}

/// The candidates within a third of the name's length in edits (at least 2), or containing it,
/// nearest first.
inline std::vector<std::string> near_names(std::string_view name, const std::vector<std::string>& candidates) {
  const std::size_t limit = std::max<std::size_t>(2, name.size() / 3);
  std::vector<std::pair<std::size_t, std::string>> near;
  for (const std::string& c : candidates) {
    const std::size_t d = edit_distance(name, c);
    if (d <= limit || (!name.empty() && c.find(name) != std::string::npos)) near.emplace_back(d, c);
  }
  std::stable_sort(near.begin(), near.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (auto& [d, c] : near) out.push_back(std::move(c));
  return out;
}

/// The shortest text that reads back as x ("0.1", "1e-05", "2.0000000000000013"); −0 is written
/// as 0. For values a user wrote (echoed in messages, written back to model files) and for times
/// that must be told apart from their neighbours.
inline std::string exact_number(double x) {
  char buf[32];
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, x + 0.0).ptr);
}

/// A value in a message, to three significant digits: "0.0144", "1.23e-05".
inline std::string short_number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", x);
  return buf;
}

/// "1 body", "3 bodies", "0 bodies".
inline std::string counted(std::size_t n, std::string_view one, std::string_view many) {
  return std::to_string(n) + " " + std::string(n == 1 ? one : many);
}

}  // namespace loopdyn
