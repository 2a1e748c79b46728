// The `loopdyn` command line: every bundled model runs, info reports, bad input fails cleanly.
#include <gtest/gtest.h>

#include "cli_support.hpp"
#include "test_support.hpp"
#include "loopdyn/mechanisms/generators.hpp"
#include "loopdyn/formulations/registry.hpp"
#include "loopdyn/io/model_file.hpp"
#include "loopdyn/mechanisms/zoo.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <vector>
#include <nlohmann/json.hpp>
#include <string>

namespace {

using loopdyn::test::CliResult;
using loopdyn::test::expect_one_line_error;
using loopdyn::test::expect_stopped_run;
using loopdyn::test::read_cli_csv;
CliResult run(const std::string& args) { return loopdyn::test::run_cli(args); }

std::string models() { return std::string(LOOPDYN_SOURCE_DIR) + "/models"; }
std::filesystem::path scratch(const std::string& name) {
  return std::filesystem::temp_directory_path() / ("loopdyn_test_cli_" + name);
}

// `loopdyn --version`: the project version, and in a git checkout the commit (git describe), from
// the header the build writes (cmake/version.cmake); python/tests/test_model.py checks that
// loopdyn.__version__ is the same text.
TEST(Cli, VersionIsTheProjectsAndTheCommits) {
  const CliResult r = run("--version");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.output.rfind("loopdyn 0.1.0", 0), 0u) << r.output;
  if (std::filesystem::exists(std::string(LOOPDYN_SOURCE_DIR) + "/.git")) {
    EXPECT_NE(r.output.find(" (git "), std::string::npos) << r.output;
  }
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
}

// The park four-bar with its masses, inertias and spring 1e-12 of the file's (its force is not
// scaled): embedding stops at once, auto starts again with dca, which refuses at t = 0. The
// summary said "watch off (--no-watch)" without the flag and "0 rows" beside a file that held
// embedding's row at t = 0; now the file is the run's trajectory and the watch is said not started.
TEST(Cli, ARunStoppedBeforeItsFirstStepSaysSo) {
  std::ifstream in(models() + "/fourbar_park_regular.yaml");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"mass: 5.0", "mass: 5e-12"}, {"[5.0, 5.0, 10.0]", "[5e-12, 5e-12, 1e-11]"}, {"mass: 7.0", "mass: 7e-12"},
           {"[10.0, 10.0, 20.0]", "[1e-11, 1e-11, 2e-11]"}, {"mass: 9.0", "mass: 9e-12"},
           {"[12.5, 12.5, 25.0]", "[1.25e-11, 1.25e-11, 2.5e-11]"}, {"stiffness: 100.0", "stiffness: 1e-10"}}) {
    ASSERT_NE(text.find(from), std::string::npos) << from;
    text.replace(text.find(from), from.size(), to);
  }
  const auto model = scratch("tiny_fourbar.yaml"), csv = scratch("tiny_fourbar.csv");
  std::ofstream(model) << text;
  const CliResult r = run("simulate " + model.string() + " --out " + csv.string());
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("watch       not started: the run stopped before its first step"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("--no-watch"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("(0 rows x"), std::string::npos) << r.output;
  std::ifstream written(csv);
  const std::string file((std::istreambuf_iterator<char>(written)), {});
  EXPECT_EQ(std::count(file.begin(), file.end(), '\n'), 2) << file;  // the header and the stop's line
}

// A bar starting at rest with no gravity has zero energy at the start: the summary's energy change
// is given against the run watch's energy scale, not divided by that zero (it printed
// "relative 8.1e+299").
TEST(Cli, EnergyChangeIsAgainstTheEnergyScale) {
  const auto path = scratch("bar_at_rest.yaml"), csv = scratch("bar_at_rest.csv");
  std::ofstream(path) << loopdyn::test::bar_text() << "forces:\n  - {type: joint_force, joint: pivot, value: [1.0]}\n";
  const CliResult r = run("simulate " + path.string() + " --t-end 0.5 --out " + csv.string());
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("energy      0 J -> "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("of the energy scale"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("e+2"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("e+3"), std::string::npos) << r.output;
}

// The summary's time line splits the process's work into its phases: the run's own time
// ("simulated ... s wall", its last method's) left out the start state, which at c46b317 took
// 0.8 s before a 0.07 s run of the 64-cell spatial ladder. Printed to the millisecond, so the parts
// add up to the total within 5 roundings of 0.5 ms.
TEST(Cli, SummaryTimesTheStartBesideTheRun) {
  const auto out = scratch("fourbar_times.csv");
  const CliResult r = run("simulate " + models() + "/fourbar_anderson.yaml --t-end 0.5 --out " + out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  const std::size_t at = r.output.find("\ntime        ");
  ASSERT_NE(at, std::string::npos) << r.output;
  double total = -1, load = -1, build = -1, start = -1, run_time = -1, wall = -1;
  ASSERT_EQ(std::sscanf(r.output.c_str() + at + 1,
                        "time        %lf s in all: model file %lf s, Model::build %lf s, start state %lf s, run %lf s",
                        &total, &load, &build, &start, &run_time),
            5)
      << r.output;
  const std::size_t simulated = r.output.find(" s in ", r.output.find("simulated   "));
  ASSERT_EQ(std::sscanf(r.output.c_str() + simulated, " s in %lf s wall", &wall), 1) << r.output;
  for (double part : {load, build, start, run_time}) EXPECT_GE(part, 0.0) << r.output;
  EXPECT_NEAR(total, load + build + start + run_time, 2.5e-3) << r.output;
  EXPECT_GE(run_time, wall - 1e-3) << r.output;  // the run holds the method's run
}

TEST(Cli, DoublePendulumOfPaper001RunsTenSeconds) {
  const auto out = scratch("dp.csv");
  const CliResult r = run("simulate " + models() + "/double_pendulum.yaml --t-end 10 --dt 0.001 --output-dt 0.01 --out " +
                    out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("double_pendulum"), std::string::npos);
  // Its dampers take energy out: the summary says how much, beside the energy's change.
  EXPECT_NE(r.output.find(" J by the non-conservative forces (dampers, joint and body forces, drives); energy - work "
                          "changed by "),
            std::string::npos)
      << r.output;
  const auto csv = read_cli_csv(out.string());
  EXPECT_EQ(csv.run.rows.size(), 1001u);  // rows at 0, 0.01, ..., 10
  EXPECT_EQ(csv.ending, "# loopdyn: completed at t = 10 (tree)");
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
    const auto csv = read_cli_csv(out.string());
    EXPECT_EQ(csv.run.rows.size(), 101u) << entry.path();
    EXPECT_EQ(csv.ending.rfind("# loopdyn: completed at t = 1 (", 0), 0u) << entry.path() << ": " << csv.ending;
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

// 002 §4.2 in `info`: the 000 four-bar's loop closes to ground, so its three links form one
// aggregated body of 3 joint speeds with 1 independent. The double loop of 004 gives two: the
// second loop's sub-graph starts below the body it shares with the first (its root is not part of
// it), so it hangs from that body, and the independent speeds add up to the mechanism's DOF.
TEST(Cli, InfoListsTheAggregatedBodies) {
  const CliResult r = run("info --json " + models() + "/fourbar_anderson.yaml");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  ASSERT_EQ(j["aggregated_bodies"].size(), 1u);
  const auto& a = j["aggregated_bodies"][0];
  EXPECT_EQ(a["bodies"], nlohmann::json({"crank", "coupler", "rocker"}));
  EXPECT_EQ(a["loop_joints"], nlohmann::json({"rocker_ground"}));
  EXPECT_EQ(a["parent"], "ground");
  EXPECT_EQ(a["joint_speeds"], 3);
  EXPECT_EQ(a["independent_speeds"], 1);
  const CliResult text = run("info " + models() + "/fourbar_anderson.yaml");
  EXPECT_NE(text.output.find("aggregated bodies"), std::string::npos) << text.output;
  const auto two = nlohmann::json::parse(run("info --json " + models() + "/doubleloop_malczyk.yaml").output);
  const auto& agg = two["aggregated_bodies"];
  ASSERT_EQ(agg.size(), 2u);
  const auto held = agg[0]["bodies"];
  EXPECT_NE(std::find(held.begin(), held.end(), agg[1]["parent"]), held.end()) << agg.dump();
  EXPECT_EQ(agg[0]["independent_speeds"].get<int>() + agg[1]["independent_speeds"].get<int>(), two["dof_rank"]);
}

TEST(Cli, BadInputFailsWithOneLine) {
  expect_one_line_error(run("simulate /nonexistent/model.yaml"), "cannot open");
  expect_one_line_error(run("simulate " + models() + "/double_pendulum.yaml --method nope"), "unknown method 'nope'");
  expect_one_line_error(run("simulate " + models() + "/double_pendulum.yaml --integrator euler"),
                        "integrator: expected 'rk2', 'rk4', 'dopri5' or 'bdf', got 'euler'");
  expect_one_line_error(run("simulate " + models() + "/double_pendulum.yaml --dca-iterations many"),
                        "dca_max_iterations: expected an integer, got 'many'");
  expect_one_line_error(run("simulate " + models() + "/double_pendulum.yaml --output-dt 0"),
                        "--output-dt 0: the interval between rows must be a finite number of seconds > 0");
  // The run's settings, checked before any model work by the library (check_run_settings), in the
  // CLI's spelling: `--t-end -1` said "advance: the end time -1 is before the current time 0",
  // others "integrate: ..." (the internal function that found them).
  for (const char* end : {"inf", "nan", "-1"})
    expect_one_line_error(run("simulate " + models() + "/double_pendulum.yaml --t-end " + end),
                          "--t-end " + std::string(end) + ": the end time must be a finite number of seconds >= 0");
  for (const auto& [option, why] : std::vector<std::pair<std::string, std::string>>{
           {" --atol -1", "--atol -1: must be a finite number >= 0"},
           {" --rtol 0 --atol 0", "--rtol 0: dopri5 needs --rtol or --atol above 0"},
           {" --integrator rk4 --dt 0", "--dt 0: rk4 needs a finite step > 0"},
           {" --integrator rk4 --dt 1e-300", "--dt 1e-300: rk4 takes more than the 1e+08 steps a run may take over 10 s"},
           // The user's value as written, every digit (three digits read "1.23e-05" for both).
           {" --integrator rk4 --dt -1.23456e-05", "--dt -1.23456e-05: rk4 needs a finite step > 0"},
           // dopri5 takes atol alone; the watch, whose bounds are relative to rtol, does not (it
           // refused after the model was built, in the library's spelling).
           {" --rtol 0 --atol 1e-10", "--rtol 0: the run watch judges the motion at the accuracy --rtol asks"}})
    expect_one_line_error(run("simulate " + models() + "/double_pendulum.yaml" + option), why);
  // The settings every method shares, checked for every method (the four-bar runs embedding):
  // each of these ran (a negative α or rank tolerance to a wrong motion or the watch's stop), or
  // crashed (100,000 threads: TBB's arena, after the run).
  for (const auto& [option, why] : std::vector<std::pair<std::string, std::string>>{
           {" --baumgarte-alpha -5", "α (--baumgarte-alpha, 1/s) must be finite and >= 0"},
           {" --baumgarte-beta -5", "β (--baumgarte-beta, 1/s) must be finite and >= 0"},
           {" --rank-tolerance -1", "(--rank-tolerance) must be > 0 and < 1, got -1"},
           {" --position-tolerance 0", "(--position-tolerance) must be finite and > 0, got 0"},
           {" --max-position-iterations 0", "(--max-position-iterations) must be at least 1, got 0"},
           {" --partition-condition-growth 1", "(--partition-condition-growth) must be finite and > 1, got 1"},
           {" --method dca --threads 100000", "(--threads) must be >= 0 (0: the machine's cores) and at most 4096"}})
    expect_one_line_error(run("simulate " + models() + "/fourbar_anderson.yaml --t-end 0.01" + option), why);
  expect_one_line_error(run("simulate " + models() + "/double_pendulum.yaml --output-dt 1e-12"),
                        "--output-dt 1e-12: a row every --output-dt over 10 s makes more than the 1e+07 rows a "
                        "run keeps in memory");
  expect_one_line_error(run("simulate " + models() + "/double_pendulum.yaml --rtol 1e-20"),
                        "--rtol 1e-20: below 2.22e-14 (100 x the double precision) no step of dopri5 can meet it");
  // An output onto its input: the model was replaced by its trajectory, the URDF by YAML (exit 0).
  const auto same = scratch("same.yaml");
  std::filesystem::copy_file(models() + "/double_pendulum.yaml", same, std::filesystem::copy_options::overwrite_existing);
  expect_one_line_error(run("simulate " + same.string() + " --t-end 0.01 --out " + same.string()),
                        "--out '" + same.string() + "' is the input file");
  expect_one_line_error(run("convert " + same.string() + " --out " + same.string()), "is the input file");
  std::ifstream kept(same);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(kept), {}).rfind("#", 0), 0u) << "the model was overwritten";
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

// The four-bar of 000 §4.1 with its crank given a speed and marked independent: the file's q
// closes the loop, its u does not (the other two joints are at rest).
std::filesystem::path moving_fourbar(const std::string& test) {  // one file per test: ctest runs them in parallel
  std::ifstream in(models() + "/fourbar_anderson.yaml");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string rest = "q: 1.0471975511965976         # theta1 = pi/3\n    u: 0.0";
  const auto at = text.find(rest);
  EXPECT_NE(at, std::string::npos);
  text.replace(at, rest.size(), "q: 1.0471975511965976\n    u: 2.0\n    independent: true");
  const auto path = scratch("fourbar_moving_" + test + ".yaml");
  std::ofstream(path) << text;
  return path;
}

std::string csv_header(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::string line;
  std::getline(in, line);
  return line;
}

TEST(Cli, SimulateAssemblesFirstAndReportsIt) {
  const auto out = scratch("moving.csv");
  const CliResult r = run("simulate " + moving_fourbar("assemble").string() + " --t-end 0.1 --out " + out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("assembled"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("independent speeds: crank_pivot\n"), std::string::npos) << r.output;
  // The marked crank keeps its speed; the assembled speeds of the others make G u = 0.
  std::ifstream in(out);
  std::string header, first;
  std::getline(in, header);
  std::getline(in, first);
  EXPECT_NE(first.find(",2,"), std::string::npos) << header << "\n" << first;  // u.crank_pivot = 2 exactly
}

TEST(Cli, NoAssembleRunsAConsistentStateAndRejectsAnInconsistentVelocity) {
  const auto out = scratch("noassemble.csv");
  const CliResult ok =
      run("simulate " + models() + "/fourbar_anderson.yaml --no-assemble --t-end 0.1 --out " + out.string());
  ASSERT_EQ(ok.status, 0) << ok.output;
  EXPECT_NE(ok.output.find("as given (--no-assemble)"), std::string::npos) << ok.output;
  const CliResult bad = run("simulate " + moving_fourbar("no_assemble").string() + " --no-assemble --out " + out.string());
  expect_one_line_error(bad, "inconsistent initial state: velocity residual");
  EXPECT_NE(bad.output.find("loop joint 'rocker_ground'"), std::string::npos) << bad.output;
  EXPECT_NE(bad.output.find("close the loops first: assemble the initial state"), std::string::npos) << bad.output;
}

TEST(Cli, SimulateOfALoopThatCannotCloseFailsWithOneLine) {
  const auto loop = scratch("far_loop.yaml");
  std::ifstream in(models() + "/fourbar_anderson.yaml");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string pivot = "child_frame: {xyz: [1.0, 0.0, 0.0]}";
  text.replace(text.find(pivot), pivot.size(), "child_frame: {xyz: [5.0, 0.0, 0.0]}");  // 0.4 + 1.2 + 0.8 < 5
  std::ofstream(loop) << text;
  const CliResult r = run("simulate " + loop.string() + " --out " + scratch("far.csv").string());
  expect_one_line_error(r, "cannot assemble the initial state");
  EXPECT_NE(r.output.find("'rocker_ground'"), std::string::npos) << r.output;
}

TEST(Cli, ProjectReportsTheProjectionsAndKeepsTheResidualsDown) {
  const auto out = scratch("project.csv");
  const CliResult r = run("simulate " + moving_fourbar("project").string() +
                          " --method lagrange-on --integrator rk4 --dt 0.01 --t-end 2 --project --out " + out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  for (const char* words : {"projection ", "steps moved q", "residuals after projection", "tolerances 1e-10"})
    EXPECT_NE(r.output.find(words), std::string::npos) << words << "\n" << r.output;
  // Residual columns: the projection tolerance 1e-10 (|Phi|, metres) bounds every row.
  const loopdyn::Trajectory traj = read_cli_csv(out.string()).run;
  for (std::size_t k = 0; k < traj.rows.size(); ++k) EXPECT_LE(traj.at(k, "residual.position"), 1e-10) << k;
  EXPECT_EQ(traj.rows.size(), 201u);
}

TEST(Cli, ReactionsAddSixColumnsPerTreeAndLoopJoint) {
  const auto out = scratch("reactions.csv");
  const CliResult r =
      run("simulate " + models() + "/fourbar_anderson.yaml --t-end 0.1 --reactions --out " + out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  const std::string header = csv_header(out);
  for (const char* joint : {"crank_pivot", "crank_pin", "coupler_pin", "rocker_ground"})
    for (const char* c : {".fx", ".fy", ".fz", ".tx", ".ty", ".tz"}) {
      std::string column = "reaction.";
      column.append(joint).append(c);
      EXPECT_NE(header.find(column), std::string::npos) << column << "\n" << header;
    }
}

// `loopdyn generate ladder` (issues 6 and 7): the file starts exactly at the benchmark state of
// benchmarks.md, so it has 3L coordinates, one loop-closing joint per cell, mobility L, and it
// simulates without assembly (--no-assemble checks that the state closes the loops).
TEST(Cli, GenerateLadderWritesTheBenchmarkStateInEveryLayout) {
  const int cells = 3;
  for (const std::string layout : {"serial", "comb", "comb-parents-first"}) {
    SCOPED_TRACE(layout);
    const auto file = scratch("generate_ladder_" + layout + ".yaml");
    const CliResult gen = run("generate ladder --cells 3 --layout " + layout + " --out " + file.string());
    ASSERT_EQ(gen.status, 0) << gen.output;
    const CliResult info = run("info --json " + file.string());
    ASSERT_EQ(info.status, 0) << info.output;
    const auto j = nlohmann::json::parse(info.output);
    EXPECT_EQ(j["nq"], 3 * cells);
    EXPECT_EQ(j["nv"], 3 * cells);
    EXPECT_EQ(j["dof_rank"], cells);
    ASSERT_EQ(j["loop_joints"].size(), static_cast<std::size_t>(cells));
    for (int k = 0; k < cells; ++k)  // the cut pin of cell k
      EXPECT_EQ(j["loop_joints"][k]["name"], "rp" + std::to_string(k) + (layout == "serial" ? "_bottom" : "_top"));
    const loopdyn::Model model = loopdyn::Model::build(loopdyn::load_mechanism(file.string()));
    const loopdyn::LadderState state = loopdyn::ladder_state(model, cells);
    EXPECT_EQ(model.q0, state.q);
    EXPECT_EQ(model.u0, state.u);
    const CliResult sim = run("simulate " + file.string() + " --no-assemble --t-end 0.1 --out " +
                              scratch("generate_ladder_" + layout + ".csv").string());
    ASSERT_EQ(sim.status, 0) << sim.output;
    EXPECT_NE(sim.output.find("as given (--no-assemble)"), std::string::npos) << sim.output;
  }
}

// `loopdyn generate spatial-ladder` (paper 000 §4.3): the file round-trips to the generator's
// mechanism and starts exactly at spatial_ladder_state; 2L + 1 bodies, 4L + 2 coordinates, L loops,
// 2 DOF, and it simulates without assembly.
TEST(Cli, GenerateSpatialLadderWritesItsState) {
  const int cells = 3;
  const auto file = scratch("generate_spatial_ladder.yaml");
  const CliResult gen = run("generate spatial-ladder --cells 3 --out " + file.string());
  ASSERT_EQ(gen.status, 0) << gen.output;
  const CliResult info = run("info --json " + file.string());
  ASSERT_EQ(info.status, 0) << info.output;
  const auto j = nlohmann::json::parse(info.output);
  EXPECT_EQ(j["nq"], 4 * cells + 2);
  EXPECT_EQ(j["nv"], 4 * cells + 2);
  EXPECT_EQ(j["dof_rank"], 2);
  ASSERT_EQ(j["loop_joints"].size(), static_cast<std::size_t>(cells));
  const loopdyn::Mechanism read = loopdyn::load_mechanism(file.string());
  EXPECT_EQ(read.name, "spatial-ladder-3");
  EXPECT_EQ(loopdyn::write_mechanism(read), [&] {
    // The generator's mechanism with the state as the tree joints' q and u writes the same text.
    loopdyn::Mechanism m = loopdyn::spatial_ladder_mechanism(cells);
    const loopdyn::Model model = loopdyn::Model::build(m);
    const loopdyn::SpatialLadderState s = loopdyn::spatial_ladder_state(model, cells);
    for (loopdyn::JointSpec& spec : m.joints) {
      if (spec.cut) continue;
      const int i = model.joint_index(spec.name);
      spec.q.assign(s.q.data() + model.q_index[i], s.q.data() + model.q_index[i] + 2);
      spec.u.assign(s.u.data() + model.v_index[i], s.u.data() + model.v_index[i] + 2);
    }
    return loopdyn::write_mechanism(m);
  }());
  const loopdyn::Model model = loopdyn::Model::build(read);
  const loopdyn::SpatialLadderState state = loopdyn::spatial_ladder_state(model, cells);
  EXPECT_EQ(model.q0, state.q);
  EXPECT_EQ(model.u0, state.u);
  const CliResult sim = run("simulate " + file.string() + " --no-assemble --t-end 0.1 --out " +
                            scratch("generate_spatial_ladder.csv").string());
  ASSERT_EQ(sim.status, 0) << sim.output;
  EXPECT_NE(sim.output.find("as given (--no-assemble)"), std::string::npos) << sim.output;
  expect_one_line_error(run("generate spatial-ladder --cells 0"), "--cells must be at least 1, got 0");
  // 000 Fig. 10's variant, simulated by rcr (what `--method auto` picks for it).
  const auto equivalent = scratch("generate_spatial_ladder_equivalent.yaml");
  ASSERT_EQ(run("generate spatial-ladder --cells 16 --masses equivalent --out " + equivalent.string()).status, 0);
  EXPECT_EQ(loopdyn::load_mechanism(equivalent.string()).name, "spatial-ladder-equivalent-16");
  const CliResult rcr = run("simulate " + equivalent.string() + " --t-end 0.1 --out " +
                            scratch("generate_spatial_ladder_equivalent.csv").string());
  ASSERT_EQ(rcr.status, 0) << rcr.output;
  EXPECT_NE(rcr.output.find("method      rcr"), std::string::npos) << rcr.output;
  expect_one_line_error(run("generate spatial-ladder --cells 2 --masses heavy"), "unknown --masses 'heavy'");
}

// `info` says whether rcr covers a mechanism with loops, and why not.
TEST(Cli, InfoSaysWhetherRcrCoversTheLoops) {
  const std::string dir = std::string(LOOPDYN_SOURCE_DIR) + "/models/";
  const CliResult fourbar = run("info " + dir + "fourbar_anderson.yaml");
  EXPECT_EQ(fourbar.output.find("method rcr does not cover it"), std::string::npos) << fourbar.output;
  const CliResult wishbone = run("info --json " + dir + "double_wishbone.yaml");
  ASSERT_EQ(wishbone.status, 0) << wishbone.output;
  const auto j = nlohmann::json::parse(wishbone.output);
  EXPECT_FALSE(j["methods"]["rcr"]["covers"].get<bool>());
  EXPECT_NE(j["methods"]["rcr"]["reason"].get<std::string>().find("solved simultaneously"), std::string::npos);
  EXPECT_TRUE(j["methods"]["embedding"]["covers"].get<bool>());
  const CliResult text = run("info " + dir + "double_wishbone.yaml");
  EXPECT_NE(text.output.find("method rcr does not cover it: rcr: loop"), std::string::npos) << text.output;
}

// `info` and `simulate` agree on which methods take a model: on Park's singular four-bar the
// motion reaches its change points, which lagrange-dense, lagrange-on and srm refuse at the start
// of a run; `info` says so in the same words, and every method it says covers the model runs.
TEST(Cli, InfoListsTheMethodsThatRefuseAReachableChangePoint) {
  const std::string model = std::string(LOOPDYN_SOURCE_DIR) + "/models/fourbar_park_singular.yaml";
  const CliResult info = run("info --json " + model);
  ASSERT_EQ(info.status, 0) << info.output;
  const auto methods = nlohmann::json::parse(info.output)["methods"];
  for (const char* refusing : {"lagrange-dense", "lagrange-on", "srm"}) {
    SCOPED_TRACE(refusing);
    ASSERT_FALSE(methods[refusing]["covers"].get<bool>());
    const std::string reason = methods[refusing]["reason"].get<std::string>();
    EXPECT_NE(reason.find("the motion can reach a change point of the loops"), std::string::npos) << reason;
    const CliResult sim = run("simulate " + model + " --method " + refusing + " --t-end 0.01 --out " +
                              scratch("info_refusal.csv").string());
    EXPECT_EQ(sim.status, 1) << sim.output;
    // The run's message names the same point and reason (the CLI spells settings as flags).
    EXPECT_NE(sim.output.find(reason.substr(0, reason.find("), which"))), std::string::npos) << sim.output;
  }
  for (const auto& [name, scope] : methods.items()) {
    if (!scope["covers"].get<bool>()) continue;
    SCOPED_TRACE(name);
    const CliResult sim = run("simulate " + model + " --method " + name + " --t-end 0.01 --out " +
                              scratch("info_covers.csv").string());
    EXPECT_EQ(sim.status, 0) << sim.output;
  }
  // Park's regular four-bar has no change point: every loop method covers it.
  const auto regular = nlohmann::json::parse(
      run("info --json " + std::string(LOOPDYN_SOURCE_DIR) + "/models/fourbar_park_regular.yaml").output)["methods"];
  for (const std::string& name : loopdyn::loop_methods()) EXPECT_TRUE(regular[name]["covers"].get<bool>()) << name;
}

// rcr near a singular configuration of its choice of independent speeds: the five-bar's first
// choice (joint2, joint4 dependent) degrades at t ≈ 0.9 s from the file's state; rcr chooses
// others and reports it on stderr. With --singular-condition 1.5, below what every choice reaches
// in 2 s, the run stops with an error line naming the loop; --on-singular switch is gone (rcr
// switches by itself).
TEST(Cli, RcrChoosesOtherSpeedsAndStopsOnlyWhenEveryChoiceIsSingular) {
  const std::string model = std::string(LOOPDYN_SOURCE_DIR) + "/models/fivebar_malczyk.yaml";
  const std::string common = " --method rcr --integrator dopri5 --rtol 1e-10 --atol 1e-10 --t-end 2 --out " +
                             scratch("rcr_fivebar.csv").string();
  const CliResult switched = run("simulate " + model + common);
  ASSERT_EQ(switched.status, 0) << switched.output;
  EXPECT_NE(switched.output.find("independent speeds chosen again"), std::string::npos) << switched.output;
  expect_stopped_run(run("simulate " + model + common + " --singular-condition 1.5"),
                        "loop 'joint3' is at or near a singular configuration");
  for (const char* bad : {" --on-singular switch", " --on-singular maybe", " --rcr-indicator-growth 1"}) {
    const CliResult r = run("simulate " + model + common + bad);
    EXPECT_NE(r.status, 0) << bad;
  }
}

TEST(Cli, GenerateChainPrintsTheModelWithItsBenchmarkState) {
  const CliResult r = run("generate chain --bodies 4");
  ASSERT_EQ(r.status, 0) << r.output;
  const loopdyn::Model model = loopdyn::Model::build(loopdyn::parse_mechanism(r.output, "stdout"));
  EXPECT_EQ(model.name, "chain-4");
  const loopdyn::ChainState state = loopdyn::chain_state(4);
  EXPECT_EQ(model.q0, state.q);
  EXPECT_EQ(model.u0, state.u);
}

// `convert` writes what the reader read: the model built from its output has the same state, and a
// file that would not build is refused rather than written.
TEST(Cli, ConvertWritesAModelThatBuildsTheSameAndRefusesOneThatWouldNot) {
  const std::string path = models() + "/double_wishbone.yaml";
  const std::filesystem::path out = scratch("convert.yaml");
  const CliResult r = run("convert " + path + " --out " + out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  const loopdyn::Model a = loopdyn::Model::build(loopdyn::load_mechanism(path));
  const loopdyn::Model b = loopdyn::Model::build(loopdyn::load_mechanism(out.string()));
  EXPECT_EQ(a.body_name, b.body_name);
  EXPECT_EQ(a.q0, b.q0);
  EXPECT_EQ(a.loop_joints.size(), b.loop_joints.size());

  const std::filesystem::path bad = scratch("convert_bad.yaml");
  std::ofstream(bad) << "bodies:\n  - {name: a, mass: -1, inertia: [1, 1, 1]}\n"
                        "joints:\n  - {name: j, type: revolute, parent: ground, child: a}\n";
  std::filesystem::remove(out);
  expect_one_line_error(run("convert " + bad.string() + " --out " + out.string()), "mass");
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(Cli, GenerateWithBadArgumentsFailsWithOneLine) {
  expect_one_line_error(run("generate ladder --cells 2 --layout zigzag"), "unknown ladder layout 'zigzag'");
  expect_one_line_error(run("generate ladder --cells 0"), "--cells must be at least 1, got 0");
  expect_one_line_error(run("generate chain --bodies -1"), "--bodies must be at least 1, got -1");
  // A mistyped size is refused at once (it built until memory ran out).
  expect_one_line_error(run("generate spatial-ladder --cells 100000000"),
                        "--cells must be at most 100000, got 100000000 (a larger mechanism takes minutes");
  expect_one_line_error(run("generate square-net --rows 1000 --cols 1000"),
                        "--rows x --cols must be at most 100000, got 1000000");
  expect_one_line_error(run("generate ladder --cells 2 --out /nonexistent_dir/ladder.yaml"),
                        "cannot write model file '/nonexistent_dir/ladder.yaml'");
  // What CLI11 refuses, in the same form: it printed "Could not convert: --rows = abc" and a second
  // line, and read --seed -1 as 2^64 - 1 (exit 0).
  expect_one_line_error(run("generate square-net --rows abc --cols 2"),
                        "loopdyn: error: --rows: expected a number, got 'abc' (--help lists the options)");
  expect_one_line_error(run("generate square-net --rows 2"), "loopdyn: error: --cols is required");
  expect_one_line_error(run("generate zoo --seed -1"), "loopdyn: error: --seed: the seed must be >= 0, got -1");
}

// `loopdyn generate <what> --out file`, then `info` reports nv speeds, dof degrees of freedom and
// loops loop-closing joints, and the file simulates from its own state without assembly (closed).
void expect_generated(const std::string& what, const std::filesystem::path& file, int nv, int dof,
                      std::size_t loops) {
  ASSERT_EQ(run("generate " + what + " --out " + file.string()).status, 0) << what;
  const CliResult info = run("info --json " + file.string());
  ASSERT_EQ(info.status, 0) << info.output;
  const auto j = nlohmann::json::parse(info.output);
  EXPECT_EQ(j["nv"], nv) << what;
  EXPECT_EQ(j["dof_rank"], dof) << what;
  EXPECT_EQ(j["loop_joints"].size(), loops) << what;
  const CliResult sim =
      run("simulate " + file.string() + " --no-assemble --t-end 0.1 --out " + file.string() + ".csv");
  EXPECT_EQ(sim.status, 0) << sim.output;
}

}  // namespace

// `loopdyn generate nfourbar` (IFToMM A02): 2N + 1 rods, N loops, 1 DOF, the benchmark's closed
// initial state (simulates without assembly); a Lagrange method stops at the first horizontal
// passage with a one-line diagnostic naming the change point.
TEST(Cli, GenerateNFourBarWritesTheBenchmarkAndLagrangeRefusesItsChangePoint) {
  const auto file = scratch("generate_nfourbar.yaml");
  expect_generated("nfourbar --n 3", file, 7, 1, 3);
  const CliResult lagrange = run("simulate " + file.string() + " --method lagrange-dense --integrator dopri5 --rtol 1e-10 "
                                 "--atol 1e-10 --t-end 2 --out " + scratch("generate_nfourbar_lagrange.csv").string());
  EXPECT_NE(lagrange.status, 0);
  EXPECT_NE(lagrange.output.find("lagrange-dense refuses the run: the motion can reach a change point of the loops"),
            std::string::npos)
      << lagrange.output;
  expect_one_line_error(run("generate nfourbar --n 0"), "--n must be at least 1, got 0");
}

// `loopdyn generate square-chain` (paper 003 Ex 4.1): 3K + 1 bars, K loops, K + 1 degrees of
// freedom, closed at rest (simulates without assembly).
// The CSV is written as the run goes, each row flushed: while a long run is going its rows are on
// disk; Ctrl-C (SIGINT) stops it at the next output time with exit code 130, every row computed
// so far kept and the last line saying so.
TEST(Cli, RowsAreOnDiskAsTheRunGoesAndCtrlCKeepsThem) {
  const auto ladder = scratch("interrupt_ladder.yaml"), out = scratch("interrupt.csv");
  ASSERT_EQ(run("generate spatial-ladder --cells 16 --out " + ladder.string()).status, 0);
  std::filesystem::remove(out);
  // Started in the background (a shell's background job ignores SIGINT until the CLI sets its
  // handler, as it does); interrupted once 5 rows are on disk, or after 60 s.
  const std::string script =
      std::string(LOOPDYN_CLI) + " simulate " + ladder.string() + " --t-end 1000 --out " + out.string() +
      " >/dev/null 2>&1 & pid=$!; for i in $(seq 600); do n=$(grep -c '^[0-9]' " + out.string() +
      " 2>/dev/null || true); [ \"${n:-0}\" -ge 5 ] && break; sleep 0.1; done; echo rows_seen=$n; kill -INT $pid; "
      "wait $pid; echo status=$?";
  const CliResult r = loopdyn::test::run_shell(script);
  ASSERT_NE(r.output.find("status=130"), std::string::npos) << r.output;
  const int seen = std::stoi(r.output.substr(r.output.find("rows_seen=") + 10));
  EXPECT_GE(seen, 5) << r.output;  // on disk while the run was going
  const auto csv = read_cli_csv(out.string());
  EXPECT_GE(static_cast<int>(csv.run.rows.size()), seen);
  EXPECT_LT(csv.run.rows.back()(0), 1000.0);
  EXPECT_EQ(csv.ending.rfind("# loopdyn: stopped after t = ", 0), 0u) << csv.ending;
  EXPECT_NE(csv.ending.find(": cancelled at t = "), std::string::npos) << csv.ending;
}

// The progress line: only on a terminal (here a pseudo-terminal from script(1)), only for a run
// that lasts past 2 s, never with --quiet, which also leaves stdout empty. The long runs are
// stopped by SIGINT after 4 s of wall time (timeout(1)), whatever the build's speed.
TEST(Cli, ProgressOnATerminalForLongRunsAndQuietPrintsNothing) {
  // The double pendulum: it starts at once (no loops to close), so the SIGINT finds the run going
  // even in the sanitizer build. --foreground: without it timeout sends its signal to the run and
  // then to its whole process group, so the run gets two SIGINTs, and the second (a second Ctrl-C,
  // which kills at once) could land after the first had been handled: under load the run was
  // killed before it printed why it ended.
  const auto out = scratch("progress.csv");
  const std::string sim = "timeout --foreground --preserve-status -s INT 4 " + std::string(LOOPDYN_CLI) +
                          " simulate " + models() + "/double_pendulum.yaml --t-end 1000000 --output-dt 1 --out " +
                          out.string();
  const CliResult tty = loopdyn::test::run_shell("script -qec '" + sim + "' /dev/null");
  ASSERT_EQ(tty.status, 130) << tty.output;  // stopped by the SIGINT, as Ctrl-C would
  EXPECT_NE(tty.output.find(" / 1e+06 s, "), std::string::npos) << tty.output;
  EXPECT_NE(tty.output.find(" simulated s per wall s, about "), std::string::npos) << tty.output;
  const CliResult quiet = loopdyn::test::run_shell("script -qec '" + sim + " --quiet' /dev/null");
  ASSERT_EQ(quiet.status, 130) << quiet.output;
  EXPECT_EQ(quiet.output.find("simulated s per wall s"), std::string::npos) << quiet.output;
  EXPECT_EQ(quiet.output.find("model       "), std::string::npos) << quiet.output;  // no summary
  EXPECT_NE(quiet.output.find("loopdyn: error: cancelled at t = "), std::string::npos) << quiet.output;
  EXPECT_GT(read_cli_csv(out.string()).run.rows.size(), 2u);
  const CliResult piped = run("simulate " + models() + "/double_pendulum.yaml --t-end 1 --out " + out.string());
  EXPECT_EQ(piped.output.find("simulated s per wall s"), std::string::npos) << piped.output;
  const CliResult short_run = loopdyn::test::run_shell("script -qec '" + std::string(LOOPDYN_CLI) + " simulate " +
                                                       models() + "/double_pendulum.yaml --t-end 1 --out " +
                                                       out.string() + "' /dev/null");
  EXPECT_EQ(short_run.output.find("simulated s per wall s"), std::string::npos) << short_run.output;
}

// The summaries' words: counts agree with their number ("1 body", "1 loop-closing joint", never
// "1 bodies"), the change-point survey says what was walked, and info's Gruebler-Kutzbach count
// says that it ignores geometry where the loops' rank shows redundant rows (a planar four-bar: -2
// against a mobility of 1).
TEST(Cli, SummariesCountInWordsAndSayWhatTheirNumbersIgnore) {
  const auto bar = scratch("one_bar.yaml");
  std::ofstream(bar) << loopdyn::test::bar_text();
  const CliResult one = run("simulate " + bar.string() + " --t-end 0.1 --out " + scratch("one_bar.csv").string());
  ASSERT_EQ(one.status, 0) << one.output;
  EXPECT_NE(one.output.find("model       bar (1 body, nq = 1, nv = 1, 0 loop-closing joints)\n"), std::string::npos)
      << one.output;
  const std::string fourbar = models() + "/fourbar_park_regular.yaml";
  const CliResult loop = run("simulate " + fourbar + " --t-end 0.1 --out " + scratch("one_loop.csv").string());
  ASSERT_EQ(loop.status, 0) << loop.output;
  for (const char* words : {"(3 bodies, nq = 3, nv = 3, 1 loop-closing joint)\n", "assembled   0 iterations, ",
                            "change pts  none on the configuration curve, walked all the way round ("})
    EXPECT_NE(loop.output.find(words), std::string::npos) << words << "\n" << loop.output;
  // Couplings alone: nothing to walk, and it says why (change_points.cpp).
  const CliResult gears = run("simulate " + models() + "/geared_pair.yaml --t-end 0.1 --out " +
                              scratch("gears.csv").string());
  ASSERT_EQ(gears.status, 0) << gears.output;
  EXPECT_NE(gears.output.find("change pts  none: the loops are couplings, whose rows are the same at every "
                              "configuration\n"), std::string::npos) << gears.output;
  for (const std::string& output : {one.output, loop.output}) {
    EXPECT_EQ(output.find("1 bodies"), std::string::npos) << output;
    EXPECT_EQ(output.find("1 loop-closing joints"), std::string::npos) << output;
    EXPECT_EQ(output.find("walk steps"), std::string::npos) << output;
  }
  const CliResult info = run("info " + fourbar);
  ASSERT_EQ(info.status, 0) << info.output;
  EXPECT_NE(info.output.find("DOF (Gruebler-Kutzbach, spatial count: 6 per body minus each joint's constraints) = "
                             "-2; the count ignores geometry: 3 rows of the loops are redundant here"),
            std::string::npos)
      << info.output;
  EXPECT_NE(info.output.find("(5 constraint rows, 3 redundant: "), std::string::npos) << info.output;
  EXPECT_NE(info.output.find("aggregated bodies (constraint embedding, paper 002 section 4.2): 1\n"), std::string::npos)
      << info.output;
}

// README's IFToMM A02 line (40 four-bars at rtol 1e-10; here 10 s of its 20, 10 change points
// crossed, to keep the sanitizer build's run short): the run
// reports on stderr what a user needs, not every re-choice of the partition (nine lines of
// "dependent block condition number" before; one now).
TEST(Cli, TheReadmesA02RunReportsWithoutFlooding) {
  const auto a02 = scratch("a02.yaml");
  ASSERT_EQ(run("generate nfourbar --n 40 --out " + a02.string()).status, 0);
  const CliResult r = run("simulate " + a02.string() + " --integrator dopri5 --rtol 1e-10 --t-end 10 --out " +
                          scratch("a02.csv").string());
  ASSERT_EQ(r.status, 0) << r.output;
  std::size_t events = 0;
  for (std::size_t at = r.output.find("loopdyn: t = "); at != std::string::npos; at = r.output.find("loopdyn: t = ", at + 1))
    ++events;
  EXPECT_LE(events, 2u) << r.output;
  EXPECT_NE(r.output.find("; 10 crossed"), std::string::npos) << r.output;
}

// A misspelt subcommand or option: CLI11's message, then the name probably meant.
TEST(Cli, AMisspeltCommandOrOptionGetsADidYouMean) {
  const std::string pendulum = models() + "/double_pendulum.yaml";
  for (const auto& [args, hint] : std::vector<std::pair<std::string, std::string>>{
           {"simulat x", "loopdyn: 'simulat' is not a command; did you mean 'simulate'?\n"},
           {"simulate " + pendulum + " --tend 3", "loopdyn: '--tend' is not an option of 'simulate'; did you mean '--t-end'?\n"},
           {"simulate " + pendulum + " --intgrator=rk4", "did you mean '--integrator'?\n"},
           {"generate ladderr", "loopdyn: 'ladderr' is not a command; did you mean 'ladder'?\n"},
           {"info --jsn " + pendulum, "loopdyn: '--jsn' is not an option of 'info'; did you mean '--json'?\n"}}) {
    const CliResult r = run(args);
    EXPECT_NE(r.status, 0) << args;
    EXPECT_NE(r.output.find(hint), std::string::npos) << args << ":\n" << r.output;
  }
  const CliResult far = run("frobnicate");  // nothing near: no guess
  EXPECT_NE(far.status, 0);
  EXPECT_EQ(far.output.find("did you mean"), std::string::npos) << far.output;
}

// A fixed step longer than the output interval was silently cut to it (every output time is a
// step's end): now an error naming both settings and the remedy; with rows every step it runs.
TEST(Cli, AFixedStepLongerThanTheOutputIntervalIsRefused) {
  const std::string sim = "simulate " + models() + "/double_pendulum.yaml --integrator rk4 --dt 0.05 --t-end 1 --out " +
                          scratch("long_step.csv").string();
  expect_one_line_error(run(sim), "the fixed step --dt 0.05 of rk4 is longer than the interval between output rows "
                                  "--output-dt 0.01");
  const CliResult rows_every_step = run(sim + " --output-dt 0.05");
  ASSERT_EQ(rows_every_step.status, 0) << rows_every_step.output;
  EXPECT_NE(rows_every_step.output.find("20 steps (0 rejected)"), std::string::npos) << rows_every_step.output;
}

// Models that cannot run fail with one line naming the file and line of the culprit and what to
// change: no bodies; a body with no inertia about its joint's axis (a singular mass matrix: the
// tree method stopped at its first evaluation and auto handed over to dca, which failed with
// another message); a loop joint whose frames cannot turn into line (the assembly's hint).
TEST(Cli, ModelsThatCannotRunNameTheirPlace) {
  const auto empty = scratch("no_bodies.yaml");
  std::ofstream(empty) << "name: x\nbodies: []\n";
  expect_one_line_error(run("simulate " + empty.string()),
                        empty.string() + ": no bodies: a mechanism needs at least one body under `bodies:`");
  const auto spinning_rod = scratch("no_axial_inertia.yaml");
  std::ofstream(spinning_rod) << "name: rod\nbodies:\n"
                                 "  - {name: a, mass: 1.0, com: [0.5, 0, 0], inertia: [0.01, 0.1, 0.1]}\n"
                                 "  - {name: b, mass: 1.0, com: [0, 0, 0], inertia: [0.1, 0.1, 0]}\n"
                                 "joints:\n"
                                 "  - {name: j1, type: revolute, parent: ground, child: a, axis: [0, 0, 1]}\n"
                                 "  - {name: j2, type: revolute, parent: a, child: b, axis: [0, 0, 1],"
                                 " parent_frame: {xyz: [1, 0, 0]}}\n";
  const CliResult singular = run("simulate " + spinning_rod.string() + " --out " + scratch("rod.csv").string());
  expect_one_line_error(singular, spinning_rod.string() + ":7: articulated inertia is singular at joint 'j2'");
  EXPECT_NE(singular.output.find("no method can integrate it; give those bodies inertia about the joint's axis"),
            std::string::npos)
      << singular.output;
  EXPECT_EQ(singular.output.find("dca"), std::string::npos) << singular.output;  // no hand-over
  // A four-bar whose closure's child frame is tilted 0.5 rad about x: no rotation about z brings
  // its z axes into line.
  const auto tilted = scratch("tilted_closure.yaml");
  std::ofstream(tilted) << "name: tilted\nbodies:\n"
                           "  - {name: crank, mass: 1.0, com: [0.5, 0, 0], inertia: [0.01, 0.1, 0.1]}\n"
                           "  - {name: coupler, mass: 1.0, com: [1.0, 0, 0], inertia: [0.01, 0.3, 0.3]}\n"
                           "  - {name: rocker, mass: 1.0, com: [0.5, 0, 0], inertia: [0.01, 0.1, 0.1]}\n"
                           "joints:\n"
                           "  - {name: j1, type: revolute, parent: ground, child: crank, q: [1.0]}\n"
                           "  - {name: j2, type: revolute, parent: crank, child: coupler, parent_frame: {xyz: [1, 0, 0]}}\n"
                           "  - {name: j3, type: revolute, parent: ground, child: rocker, parent_frame: {xyz: [2, 0, 0]},"
                           " q: [1.5]}\n"
                           "  - {name: closure, type: revolute, parent: coupler, child: rocker, cut: true,\n"
                           "     parent_frame: {xyz: [2, 0, 0]}, child_frame: {xyz: [1, 0, 0], rpy: [0.5, 0, 0]}}\n";
  const CliResult bad_axis = run("simulate " + tilted.string() + " --out " + scratch("tilted.csv").string());
  expect_one_line_error(bad_axis, "cannot assemble the initial state: ");
  EXPECT_NE(bad_axis.output.find("the largest residual is a rotation row: loop joint 'closure' (" + tilted.string() +
                                 ":10) cannot turn its two frames into line, check its axis"),
            std::string::npos)
      << bad_axis.output;
}

// The output file is opened before the run: one that cannot be written fails at once.
TEST(Cli, AnOutputThatCannotBeWrittenFailsBeforeTheRun) {
  expect_one_line_error(run("simulate " + models() + "/double_pendulum.yaml --out /nonexistent/dir/run.csv"),
                        "cannot write '/nonexistent/dir/run.csv': No such file or directory");
}

TEST(Cli, GenerateSquareChainWritesPaper003sChain) {
  expect_generated("square-chain --squares 4", scratch("generate_square_chain.yaml"), 13, 5, 4);
  expect_one_line_error(run("generate square-chain --squares 0"), "--squares must be at least 1, got 0");
}

// Paper 003's chain passes nearly flat squares from t = 0.49 on (SquareChain.JointMethodsStopAt-
// TheFirstNearlyFlatSquare): a method chosen by name stops there with one line naming dca; under
// `auto` (embedding here) dca goes on from where the guard stopped embedding and hands the run back
// past the first flat square, and both are said once (later hand-overs only counted);
// --on-singular continue runs it through.
TEST(Cli, AutoHandsOverToDcaWhereItsChoiceStops) {
  const std::filesystem::path chain = scratch("guard_chain.yaml");
  ASSERT_EQ(run("generate square-chain --squares 3 --out " + chain.string()).status, 0);
  const std::string sim = "simulate " + chain.string() + " --t-end 0.6 --out " + scratch("guard.csv").string();
  const CliResult by_auto = run(sim);
  ASSERT_EQ(by_auto.status, 0) << by_auto.output;
  for (const char* part : {"auto: embedding stopped: t = 0.4", "embedding stops: the loops 'square0_",
                           "auto: dca goes on from embedding's state at t = 0.4",
                           "auto: embedding goes on from dca's state at t = 0.5",
                           "the loops are clear of singular configurations again",
                           "later hand-overs between them are counted in the summary",
                           "integrator dopri5 (rtol 1e-08, atol 1e-10) (auto: ", " hand-overs between embedding and "
                           "dca, the first at t = 0.4",
                           "guard       singular configurations watched at every step of embedding: sigma ratio",
                           "dca crossed them from t = 0.4"})
    EXPECT_NE(by_auto.output.find(part), std::string::npos) << part << " in: " << by_auto.output;
  // A dca stretch for each nearly flat square (t = 0.49 and 0.57), or more: where dca hands back
  // depends on where its steps land (2 stretches before dca's stages were projected, 3 after).
  const std::size_t crossed = by_auto.output.find("dca crossed them from t = 0.4");
  const std::size_t open = by_auto.output.find(" (", crossed), words = by_auto.output.find(" hand-overs)", open);
  ASSERT_TRUE(crossed != std::string::npos && words != std::string::npos) << by_auto.output;
  EXPECT_GE(std::stoi(by_auto.output.substr(open + 2, words - open - 2)), 2) << by_auto.output;
  // The second stop (t = 0.57) is counted, not printed.
  EXPECT_EQ(by_auto.output.find("embedding stops: the loops 'square0_1'"), std::string::npos) << by_auto.output;
  // The streamed CSV went on with dca: embedding's rows, then dca's, every 0.01 s.
  const auto handed_over = read_cli_csv(scratch("guard.csv").string());
  EXPECT_EQ(handed_over.run.rows.size(), 61u);
  EXPECT_EQ(handed_over.ending.rfind("# loopdyn: completed at t = 0.6 (", 0), 0u) << handed_over.ending;
  expect_stopped_run(run(sim + " --method embedding"), "embedding stops: the loops 'square0_");
  // The rows before the stop, and the reason as the file's last line.
  const auto stopped = read_cli_csv(scratch("guard.csv").string());
  EXPECT_GT(stopped.run.rows.size(), 40u);
  for (std::size_t k = 0; k < stopped.run.rows.size(); ++k)
    EXPECT_EQ(handed_over.run.rows[k], stopped.run.rows[k]) << "row " << k;
  EXPECT_LT(stopped.run.rows.back()(0), 0.6);
  EXPECT_EQ(stopped.ending.rfind("# loopdyn: stopped after t = 0.4", 0), 0u) << stopped.ending;
  EXPECT_NE(stopped.ending.find(" (embedding): t = 0.4"), std::string::npos) << stopped.ending;
  EXPECT_NE(stopped.ending.find("embedding stops: the loops 'square0_"), std::string::npos) << stopped.ending;
  const CliResult on = run(sim + " --method embedding --on-singular continue");
  ASSERT_EQ(on.status, 0) << on.output;
  EXPECT_EQ(on.output.find("guard       "), std::string::npos) << on.output;  // not watched
  const CliResult watched = run("simulate " + chain.string() + " --t-end 0.3 --out " + scratch("guard.csv").string());
  EXPECT_NE(watched.output.find("guard       singular configurations watched at every step"), std::string::npos)
      << watched.output;
  // Past the dense solves' size (450 kept rows > 400) the net is watched all the same: its G Gᵀ is
  // sparse (the guard's sparse path, change_points.hpp).
  const std::filesystem::path big = scratch("guard_net.yaml");
  ASSERT_EQ(run("generate square-net --rows 15 --cols 15 --out " + big.string()).status, 0);
  const CliResult large =
      run("simulate " + big.string() + " --method embedding --t-end 0.01 --out " + scratch("guard.csv").string());
  ASSERT_EQ(large.status, 0) << large.output;
  EXPECT_NE(large.output.find("guard       singular configurations watched at every step"), std::string::npos)
      << large.output;
}

// srm from the command line: the ε, a_max and α it ran with; its settings refused with one line;
// the stop where paper 003's chain flattens its squares; auto's choice for a large net depends on
// the integrator, and info prints both.
TEST(Cli, SrmPrintsItsParametersRefusesBadOnesAndStopsAtTheFlatSquares) {
  const std::filesystem::path chain = scratch("srm_chain.yaml"), net = scratch("srm_net.yaml");
  ASSERT_EQ(run("generate square-chain --squares 3 --out " + chain.string()).status, 0);
  ASSERT_EQ(run("generate square-net --rows 6 --cols 6 --out " + net.string()).status, 0);
  const std::string out = " --out " + scratch("srm.csv").string();
  const CliResult ok = run("simulate " + chain.string() + " --method srm --integrator rk2 --t-end 0.2" + out);
  ASSERT_EQ(ok.status, 0) << ok.output;
  EXPECT_NE(ok.output.find("srm         2 iterates, ε = 0.007995"), std::string::npos) << ok.output;
  for (const auto& [bad, why] : std::vector<std::pair<std::string, std::string>>{
           {" --integrator rk2 --srm-epsilon -1", "ε (--srm-epsilon, s/kg) must be finite and > 0, got -1"},
           {" --integrator rk2 --srm-iterations 0", "must be at least 1, got 0"},
           {" --integrator rk2 --srm-epsilon 1e-4", "is below the explicit stability limit of rk2"},
           {" --integrator dopri5", "srm needs a fixed-step explicit integrator (--integrator rk2 or --integrator rk4)"}})
    expect_one_line_error(run("simulate " + chain.string() + " --method srm --t-end 0.2" + out + bad), why);
  // As the squares flatten srm's error grows: the check of its own error stops it first (0.458 s;
  // its convergence check would at 0.483 s, test_srm.cpp).
  expect_stopped_run(run("simulate " + chain.string() + " --method srm --integrator rk2 --t-end 1" + out),
                     "srm: by t = 0.458 its loop forces have done");
  const CliResult info = run("info " + net.string());
  EXPECT_NE(info.output.find("default method (--method auto): lagrange-dense;"), std::string::npos) << info.output;
  EXPECT_NE(info.output.find("default method with --integrator rk4 (a fixed step): srm;"), std::string::npos)
      << info.output;
  const CliResult auto_run = run("simulate " + net.string() + " --integrator rk4 --t-end 0.01" + out);
  ASSERT_EQ(auto_run.status, 0) << auto_run.output;
  EXPECT_NE(auto_run.output.find("method      srm, integrator rk4"), std::string::npos) << auto_run.output;
}

// `loopdyn generate square-net` (paper 003 Ex 4.2): 2RC + R + C bars, RC loops, R + C degrees of
// freedom, closed at its tilted start.
TEST(Cli, GenerateSquareNetWritesPaper003sNet) {
  expect_generated("square-net --rows 2 --cols 3 --tilt 0.3", scratch("generate_square_net.yaml"), 17, 5, 6);
  expect_one_line_error(run("generate square-net --rows 2 --cols 0"), "--cols must be at least 1, got 0");
}

// dca from the command line: what it ran with (α, rows, the assembly tree, threads); its
// --diagnostics columns, whose residuals are at round-off with the projections; --threads; its
// settings refused with one line.
TEST(Cli, DcaPrintsItsTreeWritesDiagnosticsAndRefusesBadSettings) {
  const std::string model = models() + "/doubleloop_malczyk.yaml";
  const std::filesystem::path csv = scratch("dca.csv");
  const CliResult ok =
      run("simulate " + model + " --method dca --threads 1 --t-end 0.5 --diagnostics --out " + csv.string());
  ASSERT_EQ(ok.status, 0) << ok.output;
  EXPECT_NE(ok.output.find("dca         α = 1e+06, 50 constraint rows; assembly tree of 15 nodes, depth 3, at most 2 "
                           "handles; 1 thread"),
            std::string::npos)
      << ok.output;
  const loopdyn::Trajectory traj = read_cli_csv(csv.string()).run;
  std::string header;
  for (const std::string& c : traj.columns) header.append(",").append(c);
  EXPECT_NE(header.find(",dca.iterations.acceleration,dca.iterations.position,dca.iterations.velocity,"
                        "dca.residual.position,dca.residual.velocity,dca.residual.acceleration"),
            std::string::npos)
      << header;
  const loopdyn::VecX& values = traj.rows.back();
  ASSERT_GE(values.size(), 6);
  const std::size_t n = values.size();
  EXPECT_GE(values[n - 6], 1.0);      // at least one iteration per evaluation
  EXPECT_LE(values[n - 6], 10.0);     // at most the paper's 10
  EXPECT_LT(values[n - 3], 1e-12);    // position rows after the projection (m, cosines)
  EXPECT_LT(values[n - 2], 1e-12);    // velocity rows
  for (const auto& [bad, why] : std::vector<std::pair<std::string, std::string>>{
           {" --dca-alpha -1", "the penalty α (--dca-alpha) must be finite and > 0, got -1"},
           {" --dca-iterations 0", "(--dca-max-iterations) must be at least 1, got 0"},
           {" --threads -1", "the number of threads (--threads) must be >= 0"}})
    expect_one_line_error(run("simulate " + model + " --method dca --t-end 0.1 --out " + csv.string() + bad), why);
}

// assemble --out rewrites the YAML it read; a URDF or MJCF file is refused before anything is
// printed or written, with the command that writes it as YAML.
TEST(Cli, AssembleOutRefusesUrdfAndMjcfWithOneLine) {
  const auto out = scratch("assemble_robot.yaml");
  std::filesystem::remove(out);
  for (const std::string& file : {models() + "/robots/fourbar.urdf", models() + "/robots/fourbar.xml"}) {
    expect_one_line_error(run("assemble " + file + " --out " + out.string()),
                          "assemble --out rewrites YAML model files only; write '" + file +
                              "' as YAML first (loopdyn convert " + file + " --out FILE.yaml)");
    EXPECT_FALSE(std::filesystem::exists(out)) << file;
  }
  EXPECT_EQ(run("assemble " + models() + "/robots/fourbar.urdf").status, 0);  // without --out: printed
}

std::string file_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// `simulate --view` writes the page beside the CSV; `view` writes it from the CSV, with the plots
// asked for (the page's content is checked in test_viewer.cpp, in a browser by viewer_browser.py).
TEST(Cli, SimulateViewAndViewWriteThePage) {
  const auto csv = scratch("view.csv"), page = scratch("view.html"), other = scratch("view_other.html");
  std::filesystem::remove(page);
  const std::string model = models() + "/fourbar_anderson.yaml";
  const CliResult sim = run("simulate " + model + " --t-end 0.2 --out " + csv.string() + " --view");
  ASSERT_EQ(sim.status, 0) << sim.output;
  EXPECT_NE(sim.output.find("wrote       " + page.string() + " (viewer"), std::string::npos) << sim.output;
  EXPECT_NE(file_text(page).find("id=\"loopdyn-data\""), std::string::npos);
  const CliResult view = run("view " + csv.string() + " --model " + model + " --out " + other.string() +
                             " --plot u.crank_pivot,residual.position");
  ASSERT_EQ(view.status, 0) << view.output;
  EXPECT_NE(file_text(other).find("{\"name\":\"u.crank_pivot\""), std::string::npos);
}

// A mesh that cannot be read (a URDF's, not found: the loader keeps its path as written, with a
// note) does not stop the page: it is drawn as a wire cube, and stderr names the file.
TEST(Cli, AMeshThatCannotBeReadIsDrawnAsAWireCubeWithANote) {
  const auto dir = scratch("missing_mesh");
  std::filesystem::create_directories(dir);
  const auto urdf = dir / "arm.urdf", csv = dir / "arm.csv", page = dir / "arm.html", other = dir / "other.html";
  std::filesystem::remove(page);
  std::ofstream(urdf) << R"(<robot name="arm"><link name="world"/>
<link name="a"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>
<visual><geometry><mesh filename="meshes/a.stl"/></geometry></visual></link>
<joint name="j" type="continuous"><parent link="world"/><child link="a"/><axis xyz="0 1 0"/></joint></robot>
)";
  const std::string note = "loopdyn: note: " + urdf.string() +
                           ":2: body 'a': cannot read mesh file '" + (dir / "meshes/a.stl").string() + "'";
  const CliResult sim = run("simulate " + urdf.string() + " --t-end 0.1 --out " + csv.string() + " --view");
  ASSERT_EQ(sim.status, 0) << sim.output;
  EXPECT_NE(sim.output.find(note), std::string::npos) << sim.output;
  EXPECT_NE(sim.output.find("wrote       " + page.string() + " (viewer"), std::string::npos) << sim.output;
  EXPECT_NE(file_text(page).find("cannot read mesh file"), std::string::npos);  // the page's note
  const CliResult view = run("view " + csv.string() + " --model " + urdf.string() + " --out " + other.string());
  ASSERT_EQ(view.status, 0) << view.output;
  EXPECT_NE(view.output.find(note), std::string::npos) << view.output;
}

TEST(Cli, ViewRefusesARunThatDoesNotMatchWithOneLine) {
  const auto csv = scratch("view_pendulum.csv");
  const std::string fourbar = models() + "/fourbar_anderson.yaml", pendulum = models() + "/double_pendulum.yaml";
  ASSERT_EQ(run("simulate " + pendulum + " --t-end 0.05 --out " + csv.string()).status, 0);
  expect_one_line_error(run("view " + csv.string() + " --model " + fourbar),
                        csv.string() + ": no column 'q.crank_pivot'");
  expect_one_line_error(run("view " + csv.string() + " --model " + pendulum + " --plot energy,enrgy"),
                        "no column 'enrgy' to plot (near: 'energy')");
  const auto bad = scratch("view_bad.csv");
  std::ofstream(bad) << "t,q.shoulder,q.elbow\n0,0.1,abc\n";
  expect_one_line_error(run("view " + bad.string() + " --model " + pendulum),
                        bad.string() + ":2: column 'q.elbow' is not a number: 'abc'");
  expect_one_line_error(run("view /nonexistent/run.csv --model " + pendulum), "cannot open CSV file");
  expect_one_line_error(run("simulate " + pendulum + " --plot energy"), "--plot is for the --view page");
}

namespace loopdyn {
namespace {

// `loopdyn generate zoo` (issue 36): a case of the randomized zoo as a model file, the library's
// text for that seed and index; several into a folder, one file each; a case runs under the
// default `simulate` (watched, dopri5) with exit code 0.
TEST(Cli, GenerateZooWritesTheZoosCases) {
  const CliResult one = run("generate zoo --seed 36 --first 2");
  ASSERT_EQ(one.status, 0) << one.output;
  EXPECT_EQ(one.output, zoo_model_file(zoo_case(36, 2), 36, 2));
  const std::filesystem::path dir = scratch("zoo");
  std::filesystem::remove_all(dir);
  const CliResult three = run("generate zoo --seed 36 --count 3 --out " + dir.string());
  ASSERT_EQ(three.status, 0) << three.output;
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()), 3);
  const std::string file = (dir / ("zoo_36_0_" + zoo_classes()[0] + ".yaml")).string();
  const CliResult sim = run("simulate " + file + " --t-end 1 --out " + scratch("zoo.csv").string());
  EXPECT_EQ(sim.status, 0) << sim.output;
  EXPECT_NE(sim.output.find("watch       energy balance off by at most"), std::string::npos) << sim.output;
  expect_one_line_error(run("generate zoo --count 2"), "give --out FOLDER");
}

}  // namespace
}  // namespace loopdyn

namespace loopdyn::test {
namespace {

// `loopdyn methods` prints each method's options from its table, `--options-markdown` the docs'
// tables (docs/methods.md, "Options"), and `simulate --help` takes its flags from the same tables.
TEST(Cli, MethodsListEachMethodsOptionsFromTheTables) {
  const CliResult r = run_cli("methods");
  ASSERT_EQ(r.status, 0) << r.output;
  for (const char* line : {"--dca-alpha (dca_alpha) = 1e+06 1/kg: dca: penalty α", "--dca-no-projections (dca_projections) = true",
                           "--srm-epsilon (srm_epsilon) = unset s/kg", "--on-singular (on_singular) = stop: at a singular"})
    EXPECT_NE(r.output.find(line), std::string::npos) << line << " not in:\n" << r.output;
  EXPECT_EQ(r.output.find('`'), std::string::npos) << "settings in the CLI's spelling: " << r.output;
  const CliResult md = run_cli("methods --options-markdown");
  ASSERT_EQ(md.status, 0);
  EXPECT_NE(md.output.find("| `--dca-max-iterations` (`--dca-iterations`) | `dca_max_iterations` | integer | 10 |  |"),
            std::string::npos) << md.output;
  const CliResult help = run_cli("simulate --help");
  for (const char* flag : {"--dca-max-iterations", "--dca-iterations", "--no-watch", "--fixed-step-accuracy", "--t-end",
                           "--position-tolerance", "--threads"})
    EXPECT_NE(help.output.find(flag), std::string::npos) << flag;
}

}  // namespace
}  // namespace loopdyn::test
