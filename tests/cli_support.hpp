// Runs the loopdyn executable (LOOPDYN_CLI) for the CLI tests.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace loopdyn::test {

struct CliResult {
  int status;
  std::string output;  // stdout and stderr
};

inline CliResult run_cli(const std::string& args) {
  const std::string cmd = std::string(LOOPDYN_CLI) + " " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), pipe)) out += buf.data();
  const int status = pclose(pipe);
  return {WEXITSTATUS(status), out};
}

}  // namespace loopdyn::test
