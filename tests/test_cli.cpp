// The `loopdyn` command line: every bundled model runs, info reports, bad input fails cleanly.
#include <gtest/gtest.h>

#include "cli_support.hpp"

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace {

using loopdyn::test::CliResult;
CliResult run(const std::string& args) { return loopdyn::test::run_cli(args); }

std::string models() { return std::string(LOOPDYN_SOURCE_DIR) + "/models"; }
std::filesystem::path scratch(const std::string& name) {
  return std::filesystem::temp_directory_path() / ("loopdyn_test_cli_" + name);
}

int count_lines(const std::filesystem::path& p) {
  std::ifstream in(p);
  int n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

TEST(Cli, DoublePendulumOfPaper001RunsTenSeconds) {
  const auto out = scratch("dp.csv");
  const CliResult r = run("simulate " + models() + "/double_pendulum.yaml --t-end 10 --dt 0.001 --output-dt 0.01 --out " +
                    out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("double_pendulum"), std::string::npos);
  EXPECT_EQ(count_lines(out), 1 + 1001);  // header + rows at 0, 0.01, ..., 10
}

TEST(Cli, EveryBundledModelLoadsAndRuns) {
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(models())) {
    if (entry.path().extension() != ".yaml") continue;
    ++n;
    const CliResult info = run("info --json " + entry.path().string());
    ASSERT_EQ(info.status, 0) << entry.path() << "\n" << info.output;
    const auto j = nlohmann::json::parse(info.output);
    const auto out = scratch(entry.path().stem().string() + ".csv");
    const CliResult sim = run("simulate " + entry.path().string() + " --t-end 1 --out " + out.string());
    EXPECT_EQ(sim.status, 0) << entry.path() << "\n" << sim.output;
    EXPECT_EQ(count_lines(out), 1 + 101) << entry.path();
  }
  EXPECT_GE(n, 3);
}

TEST(Cli, InfoReportsCountsAndBothDofs) {
  const CliResult r = run("info --json " + models() + "/chain3d_all_joints.yaml");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["nq"], 20);
  EXPECT_EQ(j["nv"], 18);
  EXPECT_EQ(j["dof_gruebler"], 18);
  EXPECT_EQ(j["dof_rank"], 18);
  EXPECT_EQ(run("info " + models() + "/chain3d_all_joints.yaml").status, 0);
}

void expect_one_line_error(const CliResult& r, const std::string& words) {
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  EXPECT_NE(r.output.find(words), std::string::npos) << r.output;
}

TEST(Cli, BadInputFailsWithOneLine) {
  expect_one_line_error(run("simulate /nonexistent/model.yaml"), "cannot open");
  expect_one_line_error(run("simulate " + models() + "/double_pendulum.yaml --method nope"), "unknown method 'nope'");
  expect_one_line_error(run("simulate " + models() + "/double_pendulum.yaml --integrator euler"),
                        "unknown integrator 'euler'");
  expect_one_line_error(run("simulate " + models() + "/double_pendulum.yaml --output-dt 0"), "output_dt");
  const auto bad = scratch("bad.yaml");
  std::ofstream(bad) << "name: x\nbodies:\n  - name: a\n    mass: 1\n    inertia: [1, 1, 1]\njoints:\n"
                        "  - {name: j, type: revolute, parent: ground, child: a, axis: [0, 0, 0]}\n";
  expect_one_line_error(run("simulate " + bad.string()), "axis");
  const auto loop = scratch("loop.yaml");
  std::ofstream(loop) << "name: loop\nbodies:\n  - {name: a, mass: 1, inertia: [1, 1, 1]}\n"
                         "joints:\n  - {name: j1, type: revolute, parent: ground, child: a}\n"
                         "  - {name: j2, type: spherical, parent: ground, child: a, cut: true}\n";
  expect_one_line_error(run("simulate " + loop.string() + " --method tree"), "'j2'");
}

}  // namespace
