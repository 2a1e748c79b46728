// The mechanism zoo (loopdyn/zoo.hpp) at scale: every loop method on `--count` cases of the zoo of
// `--seed` against the absolute-coordinate reference, judged as tests/test_zoo.cpp judges them
// (reference/zoo_runs.hpp), printed as Markdown (bench/run_zoo.sh): per method and class the counts
// pass / refused / wrong and the worst marker error of the runs that completed, then every wrong
// run with what reproduces it, then the refusals by kind. `--methods` and `--classes` (comma-
// separated names) restrict the runs, e.g. `--methods dca --classes bennett`.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "loopdyn/formulations/formulation.hpp"
#include "loopdyn/mechanisms/zoo.hpp"
#include "zoo_runs.hpp"

using namespace loopdyn;

namespace {

struct Options {
  std::uint64_t seed = 36;
  int count = 520;  // 40 per class
  double t_end = 2.0, output_dt = 0.01, fixed_step = 1e-3;  // test_zoo's
  // The reference starts at reference_step and halves it until the markers move by less than
  // 1 % of the pass bound (zoo_truth_resolved), down to 1/16 of it.
  double reference_step = 1e-3, reference_tolerance = 1e-6;
  std::vector<std::string> methods = reference::zoo_methods(), classes = zoo_classes();  // those run
};

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> names;
  std::istringstream in(list);
  for (std::string name; std::getline(in, name, ',');) names.push_back(name);
  return names;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--seed") o.seed = std::strtoull(value.c_str(), nullptr, 10);
    else if (key == "--count") o.count = std::atoi(value.c_str());
    else if (key == "--t-end") o.t_end = std::atof(value.c_str());
    else if (key == "--reference-step") o.reference_step = std::atof(value.c_str());
    else if (key == "--fixed-step") o.fixed_step = std::atof(value.c_str());
    else if (key == "--methods") o.methods = split(value);
    else if (key == "--classes") o.classes = split(value);
    else {
      std::fprintf(stderr, "usage: zoo_results [--seed S] [--count K] [--t-end T] [--reference-step H] "
                           "[--fixed-step H] [--methods M1,M2] [--classes C1,C2]\n");
      std::exit(2);
    }
  }
  // A name outside the lists would run nothing (a class) or be refused by every case (a method).
  auto check = [](const std::vector<std::string>& names, const std::vector<std::string>& known, const char* what) {
    for (const std::string& name : names)
      if (std::find(known.begin(), known.end(), name) == known.end()) {
        std::fprintf(stderr, "zoo_results: unknown %s '%s'\n", what, name.c_str());
        std::exit(2);
      }
  };
  check(o.methods, reference::zoo_methods(), "method");
  check(o.classes, zoo_classes(), "class");
  return o;
}

// Counts and worst errors of one method on one class.
struct Cell {
  int pass = 0, refused = 0, wrong = 0;
  double worst_marker = 0.0;  // over the runs that completed (pass or wrong)
  double seconds = 0.0;
};

struct Wrong {
  int index;
  std::string description, method;
  reference::ZooRun run;
};

// A refusal's kind: its message with every number replaced by # and cut before the first
// parenthesis (the loops and coordinates), so that refusals for one reason count together.
std::string refusal_kind(const std::string& message) {
  std::string kind = std::regex_replace(message, std::regex("-?[0-9][0-9.e+-]*"), "#");
  kind = kind.substr(0, kind.find(" ("));
  return kind.substr(0, std::min<std::size_t>(kind.find(". "), 160));
}

void print_table(const std::vector<std::string>& methods, const std::vector<std::string>& classes,
                 std::map<std::string, std::map<std::string, Cell>>& cells, std::map<std::string, int>& unresolved) {
  std::printf("| method |");
  for (const std::string& k : classes) std::printf(" %s |", k.c_str());
  std::printf(" total time (s) |\n|---|");
  for (std::size_t k = 0; k < classes.size(); ++k) std::printf("---|");
  std::printf("---|\n");
  for (const std::string& method : methods) {
    double seconds = 0.0;
    std::printf("| %s |", method.c_str());
    for (const std::string& k : classes) {
      const Cell& c = cells[method][k];
      seconds += c.seconds;
      std::printf(" %d / %d / %d, %.1e |", c.pass, c.refused, c.wrong, c.worst_marker);
    }
    std::printf(" %.1f |\n", seconds);
  }
  std::printf("| (reference unresolved, not judged) |");
  for (const std::string& k : classes) std::printf(" %d |", unresolved[k]);
  std::printf(" |\n");
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const std::vector<std::string>& methods = o.methods;
  std::map<std::string, std::map<std::string, Cell>> cells;
  std::map<std::string, std::map<std::string, int>> refusals;  // method -> refusal_kind -> count
  std::vector<Wrong> wrong;
  // Cases whose reference did not settle (zoo_truth_resolved): not judged, listed.
  struct Unresolved {
    int index;
    std::string description;
    double error;
  };
  std::vector<Unresolved> unresolved;
  std::map<std::string, int> unresolved_by_class;
  double reference_seconds = 0.0;
  for (int index = 0; index < o.count; ++index) {
    const ZooCase c = zoo_case(o.seed, index);
    if (std::find(o.classes.begin(), o.classes.end(), c.kind) == o.classes.end()) continue;
    const auto start = std::chrono::steady_clock::now();
    const reference::ZooTruth truth = reference::zoo_truth_resolved(
        c.mechanism, o.t_end, o.output_dt, o.reference_step, o.reference_tolerance, o.reference_step / 16);
    reference_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (truth.error > o.reference_tolerance) {
      unresolved.push_back({index, c.description, truth.error});
      ++unresolved_by_class[c.kind];
      continue;
    }
    for (const std::string& method : methods) {
      const reference::ZooRun r = reference::run_zoo_method(c.mechanism, method, truth, {}, o.fixed_step);
      Cell& cell = cells[method][c.kind];
      cell.seconds += r.seconds;
      if (r.outcome != reference::ZooOutcome::refused) cell.worst_marker = std::max(cell.worst_marker, r.marker_error);
      switch (r.outcome) {
        case reference::ZooOutcome::pass: ++cell.pass; break;
        case reference::ZooOutcome::refused:
          ++cell.refused;
          ++refusals[method][refusal_kind(r.message)];
          break;
        case reference::ZooOutcome::wrong:
          ++cell.wrong;
          wrong.push_back({index, c.description, method, r});
          break;
      }
    }
  }
  const reference::ZooBounds bounds;
  std::printf("Zoo of seed %llu, %d cases (%d per class), %.1f s each; a pass keeps every marker within %.0e m "
              "and the energy balance within %.0e of the energy that moves (ZooTruth::energy_scale, at least the total weight x 1 m) of the reference (RK4 from h = %.0e s, halved "
              "until it moves the markers by less than %.0e m; %.1f s in all). Cells: pass / refused / wrong, worst marker error (m) of the runs that completed.\n\n",
              static_cast<unsigned long long>(o.seed), o.count, o.count / static_cast<int>(zoo_classes().size()),
              o.t_end, bounds.marker, bounds.energy, o.reference_step, o.reference_tolerance, reference_seconds);
  print_table(methods, o.classes, cells, unresolved_by_class);
  std::printf("\nWrong without refusing (%zu runs): `zoo_case(%llu, index)`\n\n", wrong.size(),
              static_cast<unsigned long long>(o.seed));
  if (!wrong.empty()) std::printf("| index | method | marker error (m) | energy error | case |\n|---|---|---|---|---|\n");
  for (const Wrong& w : wrong)
    std::printf("| %d | %s | %.2e | %.2e | %s |\n", w.index,
                (w.method == w.run.method ? w.method : w.method + " (" + w.run.method + ")").c_str(), w.run.marker_error, w.run.energy_error,
                w.description.c_str());
  std::printf("\nReferences not resolved to %.0e m at h = %.1e s (%zu cases, not judged):\n\n", o.reference_tolerance,
              o.reference_step / 16, unresolved.size());
  for (const Unresolved& u : unresolved) std::printf("- %d: %s (%.1e m)\n", u.index, u.description.c_str(), u.error);
  std::printf("\nRefusals by kind (numbers as #):\n\n| method | count | message |\n|---|---|---|\n");
  for (const auto& [method, by_message] : refusals)
    for (const auto& [message, n] : by_message) std::printf("| %s | %d | %s |\n", method.c_str(), n, message.c_str());
  return 0;
}
