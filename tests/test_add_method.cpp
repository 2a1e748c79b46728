// A new method is one file and one registry row (docs/methods.md, "How to add a method"): the toy
// method of toy_method.hpp, registered at run time, is made by the factory, runs under run() with
// the watch, takes its option from the tables the CLI and Python read, and appears in the docs'
// tables and `loopdyn methods`.
#include <gtest/gtest.h>

#include "loopdyn/loops/assembly.hpp"
#include "loopdyn/run/run.hpp"
#include "loopdyn/run/run_options.hpp"
#include "test_support.hpp"
#include "toy_method.hpp"

namespace loopdyn {
namespace {

using namespace loopdyn::test;

// The row, registered once for every test of this file (a second registration is refused).
const MethodInfo& toy_row() {
  static const MethodInfo& row = register_method(toy::ToyLagrange::row());
  return row;
}

TEST(AddMethod, TheRegistryTakesTheRowOnceAndListsIt) {
  EXPECT_EQ(toy_row().name, "toy");
  EXPECT_EQ(&method_info("toy"), &toy_row());
  EXPECT_THROW(register_method(toy::ToyLagrange::row()), std::invalid_argument);
  const std::vector<std::string> loops = loop_methods();
  EXPECT_NE(std::find(loops.begin(), loops.end(), "toy"), loops.end());
}

TEST(AddMethod, TheFactoryMakesItAndItAgreesWithLagrangeDense) {
  toy_row();
  const LoopState c = assembled_state("fourbar_park_regular", 3);
  const VecX reference = accelerations("lagrange-dense", c);
  EXPECT_TRUE(near(accelerations("toy", c), reference, 1e-9));
  // Its option reaches it through FormulationSettings: a compliance changes the accelerations.
  FormulationSettings fs;
  ASSERT_TRUE(set_option(formulation_options(), fs, "toy_compliance", OptionValue(1e-2)));
  EXPECT_EQ(fs.extra<toy::ToySettings>("toy").compliance, 1e-2);
  auto f = make_formulation("toy", c.model, fs);
  VecX udot(c.model.nv);
  f->accelerations(0.0, c.q, c.u, udot);
  EXPECT_GT((udot - reference).norm(), 1e-6);
}

TEST(AddMethod, RunWithTheWatchRunsItAndTheCliSpellingsSetIt) {
  toy_row();
  const LoopState c = file_state("fourbar_park_regular");
  // As `loopdyn simulate --method toy --toy-compliance 0 --t-end 0.5` parses its flags.
  RunSettings rs;
  const OptionTable<RunSettings> table = all_run_options();
  for (const auto& [flag, text] : std::vector<std::pair<std::string, std::string>>{
           {"--method", "toy"}, {"--toy-compliance", "0"}, {"--t-end", "0.5"}})
    ASSERT_TRUE(set_option_text(table, rs, flag, text)) << flag;
  EXPECT_EQ(rs.method, "toy");
  EXPECT_EQ(rs.simulation.t_end, 0.5);
  EXPECT_THROW(set_option_text(table, rs, "--toy-compliance", "soft"), OptionError);
  const RunResult toy_run = run(c.model, c.q, c.u, rs);
  ASSERT_TRUE(toy_run.completed()) << toy_run.stop.message;
  EXPECT_EQ(toy_run.method, "toy");
  EXPECT_TRUE(toy_run.trajectory.watch.watched);
  rs.method = "lagrange-dense";
  const RunResult dense = run(c.model, c.q, c.u, rs);
  ASSERT_TRUE(dense.completed()) << dense.stop.message;
  EXPECT_TRUE(near(toy_run.trajectory.rows.back(), dense.trajectory.rows.back(), 1e-6));
}

TEST(AddMethod, TheDocsTablesAndTheMethodsListShowIt) {
  toy_row();
  EXPECT_NE(methods_markdown().find("| `toy` | test suite's toy"), std::string::npos);
  const std::string options = options_markdown();
  EXPECT_NE(options.find("`toy`:"), std::string::npos) << options;
  EXPECT_NE(options.find("| `--toy-compliance` | `toy_compliance` | real | 0 | m/N |"), std::string::npos) << options;
  EXPECT_NE(methods_text().find("toy_compliance"), std::string::npos);
}

}  // namespace
}  // namespace loopdyn
