// Runs the loopdyn executable (LOOPDYN_CLI) for the CLI tests.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <string>

#include "loopdyn/io/csv.hpp"

namespace loopdyn::test {

struct CliResult {
  int status;
  std::string output;  // stdout and stderr
};

/// A shell command line (sh -c), its stdout and stderr together.
inline CliResult run_shell(const std::string& command) {
  const std::string cmd = "{ " + command + "; } 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), pipe)) out += buf.data();
  const int status = pclose(pipe);
  return {WEXITSTATUS(status), out};
}

inline CliResult run_cli(const std::string& args) { return run_shell(std::string(LOOPDYN_CLI) + " " + args); }

/// A failed command that printed one line containing `words` (the CLI's form for bad input).
inline void expect_one_line_error(const CliResult& r, const std::string& words) {
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  EXPECT_NE(r.output.find(words), std::string::npos) << r.output;
}

/// A run that stopped during the integration: exit code 1, the summary of the rows computed before
/// the stop (written to the CSV) and one error line with `words`.
inline void expect_stopped_run(const CliResult& r, const std::string& words) {
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("up to the stop"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("loopdyn: error: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(words), std::string::npos) << r.output;
}

/// The CSV a `simulate` wrote: its rows (read_csv skips the comment line) and its last line, which
/// says how the run ended ("# loopdyn: completed at t = ...", "# loopdyn: stopped after ...").
struct CliCsv {
  Trajectory run;
  std::string ending;
};
inline CliCsv read_cli_csv(const std::string& path) {
  CliCsv csv{read_csv(path), {}};
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) csv.ending = line;
  return csv;
}

}  // namespace loopdyn::test
