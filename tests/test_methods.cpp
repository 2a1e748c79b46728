// The method registry (formulation.hpp): each row against what its formulation does, and the
// docs' methods table against the registry.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "loopdyn/loops/loop_structure.hpp"
#include "loopdyn/formulations/formulation.hpp"
#include "loopdyn/mechanisms/generators.hpp"
#include "loopdyn/mechanisms/square_nets.hpp"
#include "loopdyn/formulations/tree.hpp"
#include "loopdyn/run/simulator.hpp"
#include "loopdyn/formulations/registry.hpp"
#include "loopdyn/run/method_choice.hpp"
#include "loopdyn/run/run_watch.hpp"
#include "test_support.hpp"

namespace loopdyn {
namespace {

const std::vector<std::string> kFiles{"double_pendulum",   "fourbar_anderson", "fourbar_jain_terminal",
                                      "double_wishbone",   "doubleloop_malczyk", "geared_chain",
                                      "fivebar_malczyk",   "parallel_3rrr",    "chain3d_all_joints"};

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A row's scope check says yes exactly when the formulation takes the model: built and its state
// completed at the model's assembled initial configuration (what the Simulator does before a
// run), with ModelError otherwise. The check is the registry's; the construction is the method's.
TEST(Methods, ScopeCheckAgreesWithTheFormulation) {
  for (const std::string& file : kFiles) {
    const test::LoopState c = test::file_state(file);
    for (const MethodInfo& m : methods()) {
      if (!m.implemented()) continue;
      const std::string problem = m.scope_problem(c.model, c.q);
      bool took = true;
      std::string error;
      try {
        auto f = make_formulation(m.name, c.model);
        VecX q = c.q, u = c.u;
        f->complete_state(0.0, q, u);
      } catch (const ModelError& e) {
        took = false;
        error = e.what();
      }
      EXPECT_EQ(took, problem.empty()) << file << ", " << m.name << ": scope '" << problem << "', error '" << error << "'";
      if (!took) {
        EXPECT_EQ(problem, error) << file << ", " << m.name;
      }
    }
  }
}

// `multipliers` is true exactly for the methods that report one multiplier per kept row.
TEST(Methods, MultipliersFlagAgreesWithTheFormulation) {
  const test::LoopState c = test::assembled_state("fourbar_anderson", 3);
  const int rows = c.model.loops().constraints.rows();
  ASSERT_GT(rows, 0);
  for (const std::string& name : loop_methods()) {
    auto f = make_formulation(name, c.model);
    VecX udot(c.model.nv);
    f->accelerations(0.0, c.q, c.u, udot);
    EXPECT_EQ(method_info(name).multipliers, f->multipliers().size() == rows) << name;
    EXPECT_EQ(f->name(), name);
  }
  EXPECT_FALSE(method_info("tree").multipliers);
}

// The work a run integrates is the power each method reports of the forces it evaluated
// (Formulation::applied_power): it must be the forces' power at the state, here evaluated apart
// (applied_power of run_watch.hpp, its own kinematics). A03 has a spring and a driving torque;
// the state is closed, so a method's completion leaves it: equal to round-off (1e-12 of the
// largest term). srm and dca keep none (several iterates; absolute coordinates): the Simulator
// evaluates it for them.
TEST(Methods, AppliedPowerIsThePowerOfTheForcesAtTheState) {
  const test::LoopState c = test::assembled_state("iftomm_a03_andrews", 5);
  KinematicsData kin(c.model);
  update_positions(c.model, kin, c.q);
  update_velocities(c.model, kin, c.q, c.u);
  ForceData forces(c.model);
  const double expected = applied_power(c.model, kin, 0.3, c.q, c.u, forces);
  ASSERT_GT(std::abs(expected), 1e-3);
  for (const std::string& name : loop_methods()) {
    auto f = make_formulation(name, c.model);
    VecX udot(c.model.nv);
    f->accelerations(0.3, c.q, c.u, udot);
    const std::optional<double> power = f->applied_power();
    if (name == "srm" || name == "dca") {
      EXPECT_FALSE(power) << name;
      continue;
    }
    ASSERT_TRUE(power) << name;
    EXPECT_NEAR(*power, expected, 1e-12 * (1.0 + std::abs(expected))) << name;
  }
}

TEST(Methods, UnknownAndPlannedMethodsAreNamed) {
  const Model m = test::load_model("fourbar_anderson");
  try {
    make_formulation("no-such-method", m);
    ADD_FAILURE();
  } catch (const ModelError& e) {
    for (const MethodInfo& row : methods()) EXPECT_NE(std::string(e.what()).find(row.name), std::string::npos) << e.what();
  }
  for (const MethodInfo& row : methods()) {
    if (row.implemented()) continue;
    try {
      make_formulation(row.name, m);
      ADD_FAILURE() << row.name;
    } catch (const ModelError& e) {
      EXPECT_NE(std::string(e.what()).find("not implemented yet"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(row.paper), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(loop_methods().size(), 8u);  // every loop method of the papers
}

// auto picks srm for an aggregated body of kSrmAggregatedBody speeds or more that neither embedding
// nor rcr takes, when the step is fixed; with dopri5 (accuracy by tolerance) lagrange-dense. A
// smaller one (the 4 x 4 net: 39 speeds) stays with lagrange-dense, whose dense solve is cheap there.
TEST(Methods, AutoPicksSrmForALargeAggregatedBodyWithAFixedStep) {
  const Model large = Model::build(square_net_mechanism(6, 6, 0.5)), small = Model::build(square_net_mechanism(4, 4, 0.5));
  ASSERT_GE(large.loops().aggregation.largest_nv(), kSrmAggregatedBody);
  ASSERT_LT(small.loops().aggregation.largest_nv(), kSrmAggregatedBody);
  for (IntegratorKind fixed : {IntegratorKind::rk2, IntegratorKind::rk4})
    EXPECT_EQ(default_method(large, fixed).method, "srm");
  const MethodChoice adaptive = default_method(large, IntegratorKind::dopri5);
  EXPECT_EQ(adaptive.method, "lagrange-dense");
  EXPECT_NE(adaptive.reason.find("dopri5's tolerances rule out srm"), std::string::npos) << adaptive.reason;
  EXPECT_EQ(default_method(small, IntegratorKind::rk4).method, "lagrange-dense");
  EXPECT_EQ(default_method(test::load_model("fourbar_anderson"), IntegratorKind::rk4).method, "embedding");
}

// From kDcaAggregatedBody speeds in one aggregated body (paper 003's chain and net) dopri5's runs
// take dca, linear in that size, where lagrange-dense is cubic (method_choice.hpp); a fixed step
// keeps srm.
TEST(Methods, AutoPicksDcaForAVeryLargeAggregatedBody) {
  const Model chain = Model::build(square_chain_mechanism(64)), net = Model::build(square_net_mechanism(10, 10, 0.5));
  for (const Model* m : {&chain, &net}) {
    ASSERT_GE(m->loops().aggregation.largest_nv(), kDcaAggregatedBody);
    const MethodChoice choice = default_method(*m, IntegratorKind::dopri5);
    EXPECT_EQ(choice.method, "dca") << m->name;
    EXPECT_NE(choice.reason.find("divide and conquer is linear"), std::string::npos) << choice.reason;
    EXPECT_EQ(default_method(*m, IntegratorKind::rk4).method, "srm");
  }
  const Model smaller = Model::build(square_chain_mechanism(32));
  ASSERT_LT(smaller.loops().aggregation.largest_nv(), kDcaAggregatedBody);
  EXPECT_EQ(default_method(smaller, IntegratorKind::dopri5).method, "lagrange-dense");
}

// The spatial ladder's loops share their base and close one at a time at every L: auto picks rcr.
// From L = 74 on its scope test once counted the round-off of a structurally redundant row
// (growing with the loops' lever arms) as rank, refused, and auto ran the cubic lagrange-dense
// (87.8 s for 1 s of L = 256, against rcr's 0.3 s); `--method rcr` itself ran there.
TEST(Methods, AutoPicksRcrForTheSpatialLadderAtEverySize) {
  for (int cells : {16, 80, 128}) {
    const Model m = Model::build(spatial_ladder_mechanism(cells));
    EXPECT_EQ(default_method(m, IntegratorKind::dopri5).method, "rcr") << cells << " cells";
  }
}

// README and docs/methods.md carry `loopdyn methods --markdown` verbatim.
TEST(Methods, DocsTablesAreTheRegistry) {
  const std::string table = methods_markdown();
  for (const char* doc : {"/README.md", "/docs/methods.md"})
    EXPECT_NE(read(std::string(LOOPDYN_SOURCE_DIR) + doc).find(table), std::string::npos)
        << doc << " has not the registry's table; paste `loopdyn methods --markdown`:\n" << table;
}

// A formulation written outside loopdyn, so not in the registry.
class Outside final : public Formulation {
 public:
  explicit Outside(const Model& model) : Formulation(model), tree_(model) {}
  std::string_view name() const override { return "outside"; }
  void accelerations(double t, const VecX& q, const VecX& u, Eigen::Ref<VecX> udot) override {
    tree_.accelerations(t, q, u, udot);
  }

 private:
  TreeFormulation tree_;
};

// --reactions asks the registry for multipliers only where there are loops: `tree`, without
// multipliers, gives the reactions of a tree, and so does a formulation the registry does not know.
TEST(Methods, ReactionsOfATreeNeedNoMultipliers) {
  SimulationSettings s;
  s.reactions = true;
  s.t_end = 0.01;
  s.output_dt = 0.01;
  const Model tree = test::load_model("double_pendulum");
  auto f = make_formulation("tree", tree);
  EXPECT_NO_THROW(Simulator(tree, *f, s).run(tree.q0, tree.u0));
  Outside outside(tree);
  EXPECT_NO_THROW(Simulator(tree, outside, s).run(tree.q0, tree.u0));
}

}  // namespace
}  // namespace loopdyn
