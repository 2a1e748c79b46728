// Model building: spanning tree, numbering, coordinate layout, loops, DOF, C++-builder errors.
#include "loopdyn/formulations/formulation.hpp"
#include "loopdyn/loops/loop_structure.hpp"
#include "loopdyn/formulations/registry.hpp"
#include "test_support.hpp"

namespace loopdyn {
namespace {

Mechanism four_bar(bool pin_cut) { return test::parallelogram_four_bar(pin_cut); }

TEST(Model, DepthFirstNumberingWithParentsFirst) {
  const Model m = Model::build(test::random_tree(3, 20));
  for (int i = 0; i < m.nbodies; ++i) {
    EXPECT_LT(m.parent[i], i);
    for (int k = i + 1; k < i + m.subtree_size[i]; ++k) {  // subtree is a contiguous range
      int a = k;
      while (a > i) a = m.parent[a];
      EXPECT_EQ(a, i);
    }
  }
  EXPECT_EQ(m.q_index.back() + m.nq_joint.back(), m.nq);
  EXPECT_EQ(static_cast<int>(m.v_body.size()), m.nv);
}

TEST(Model, FourBarLoopFoundCountedAndRanked) {
  for (bool pin : {true, false}) {
    const Model m = Model::build(four_bar(pin));
    ASSERT_EQ(m.loop_joints.size(), 1u);
    EXPECT_EQ(m.loop_joints[0].name, "C");  // breadth-first reaches the rocker through D first
    EXPECT_EQ(m.nv, 3);
    // Grübler–Kutzbach in space: 6·3 − 4·5 = −2 (the planar loop's 3 redundant rows make it wrong).
    EXPECT_EQ(m.dof_gruebler, -2);
    const Constraints& cons = m.loops().constraints;
    EXPECT_EQ(cons.rows(), 2);  // the 3 out-of-plane rows of a planar loop are structurally redundant
    EXPECT_EQ(cons.dropped().size(), 3u);
    const RankInfo r = constraint_rank(m, cons, m.q0);
    EXPECT_EQ(r.rank, 2);
    EXPECT_EQ(r.dof, 1);
  }
}

// The loop structure is built once, by Model::build: copies of the model share it (a formulation
// made from a copy reads the same rows), its kept and dropped rows partition every row, and a
// Model made without build() says so instead of reading a null structure.
TEST(Model, LoopStructureIsBuiltOnceAndShared) {
  const Model m = Model::build(four_bar(true));
  const Model copy = m;
  EXPECT_EQ(&copy.loops(), &m.loops());
  const LoopStructure& s = m.loops();
  EXPECT_EQ(s.unreduced.rows(), 5);  // revolute loop joint: 6 − 1 rows
  EXPECT_TRUE(s.unreduced.dropped().empty());
  EXPECT_EQ(s.constraints.rows() + static_cast<int>(s.constraints.dropped().size()), s.unreduced.rows());
  ASSERT_EQ(s.aggregation.nodes.size(), 1u);  // the whole four-bar is one aggregated body
  EXPECT_EQ(s.aggregation.nodes[0].loop_joints, std::vector<int>{0});
  const Model bare;
  try {
    (void)bare.loops();
    ADD_FAILURE() << "expected std::logic_error";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("Model::build"), std::string::npos) << e.what();
  }
}

// Messages name at most four loops and count the others (a 40-loop N-four-bar's re-choice message
// listed all 40).
TEST(Model, QuotedListsNameFourAndCountTheRest) {
  EXPECT_EQ(quoted_list({}), "");
  EXPECT_EQ(quoted_list({"C1", "C2"}), "'C1', 'C2'");
  EXPECT_EQ(quoted_list({"a", "b", "c", "d"}), "'a', 'b', 'c', 'd'");
  EXPECT_EQ(quoted_list({"a", "b", "c", "d", "e", "f"}), "'a', 'b', 'c', 'd' and 2 more");
  EXPECT_EQ(quoted_list({"a", "b", "c"}, 1), "'a' and 2 more");
}

TEST(Model, PinnedCutJointIsNotInTheTree) {
  Mechanism mech = four_bar(false);
  mech.joints[2].cut = true;  // cut D instead: the rocker then hangs from the coupler through C
  const Model m = Model::build(mech);
  ASSERT_EQ(m.loop_joints.size(), 1u);
  EXPECT_EQ(m.loop_joints[0].name, "D");
  EXPECT_EQ(m.joints[m.body_index("rocker")].name, "C");
  EXPECT_EQ(constraint_rank(m, m.loops().constraints, m.q0).dof, 1);
}

TEST(Model, CoordinateNamesFollowTheCsvContract) {
  Mechanism mech;
  mech.add_body("a", 1, Vec3::Zero(), Mat3::Identity());
  mech.add_body("b", 1, Vec3::Zero(), Mat3::Identity());
  mech.add_joint("ball", JointType::spherical, "ground", "a");
  mech.add_joint("hinge", JointType::revolute, "a", "b");
  const Model m = Model::build(mech);
  const std::vector<std::string> expected{"q.ball.0", "q.ball.1", "q.ball.2", "q.ball.3", "q.hinge",
                                          "u.ball.0", "u.ball.1", "u.ball.2", "u.hinge"};
  EXPECT_EQ(m.coordinate_names(), expected);
}

void expect_error(const Mechanism& mech, const std::vector<std::string>& words) {
  try {
    Model::build(mech);
    ADD_FAILURE() << "expected ModelError containing '" << words.front() << "'";
  } catch (const ModelError& e) {
    for (const std::string& w : words) EXPECT_NE(std::string(e.what()).find(w), std::string::npos) << e.what();
  }
}

TEST(Model, BuilderErrorsNameThePlaceAndTheProblem) {
  Mechanism base;
  base.add_body("a", 1, Vec3::Zero(), Mat3::Identity());
  base.add_joint("j", JointType::revolute, "ground", "a");

  Mechanism m = base;
  m.bodies[0].name = "ground";
  m.joints[0].child = "ground";
  expect_error(m, {"reserved"});
  m = base;
  m.add_joint("j", JointType::revolute, "ground", "a");
  expect_error(m, {"duplicate joint name 'j'"});
  m = base;
  m.joints[0].type = JointType::universal;
  m.joints[0].axis = Vec3::UnitX();
  m.joints[0].axis2 = Vec3(1, 1, 0);
  expect_error(m, {"joint 'j'", "perpendicular"});
  m = base;
  m.joints[0].parent = "a";
  expect_error(m, {"joint 'j'", "same body"});
  m = base;
  m.joints[0].type = JointType::spherical;
  m.joints[0].q = {1, 1, 0, 0};
  expect_error(m, {"joint 'j'", "unit norm"});
  m = base;
  m.joints[0].q = {0.1, 0.2};
  expect_error(m, {"joint 'j'", "'q' must have 1"});
  m = base;
  m.joints[0].u = {std::nan("")};
  expect_error(m, {"joint 'j'", "not finite"});
  m = base;
  m.joints[0].where = "m.yaml:7";
  m.joints[0].axis = Vec3::Zero();
  expect_error(m, {"m.yaml:7: ", "joint 'j'", "axis"});
  m = base;  // a long axis is a direction too (its norm overflowed to inf: "zero or not finite")
  m.joints[0].axis = Vec3(0, 1e300, 1e300);
  EXPECT_TRUE(std::get<Revolute>(Model::build(m).joints[0].joint).axis.isApprox(Vec3(0, 1, 1).normalized(), 1e-15));
  m = base;
  m.add_joint("k", JointType::revolute, "b", "a");
  expect_error(m, {"joint 'k'", "unknown body 'b'"});
  m = base;
  m.add_body("island", 1, Vec3::Zero(), Mat3::Identity());
  expect_error(m, {"body 'island'", "not connected to ground"});
  m = base;
  m.forces.push_back({JointForceSpec{"j", {1.0, 2.0}}, "m.yaml:9"});
  expect_error(m, {"m.yaml:9: ", "joint_force", "needs 1 values"});
  // Names head CSV columns: a comma or a line break made other columns of one (exit 0).
  for (const std::string name : {"x,y", "x\ny", "x\ty"}) {
    m = base;
    m.joints[0].name = name;
    expect_error(m, {"joint '" + name + "'", "cannot hold a comma or a control character"});
    m = base;
    m.bodies[0].name = name;
    m.joints[0].child = name;
    expect_error(m, {"body '" + name + "'", "cannot hold a comma"});
  }
  m = base;
  m.markers.push_back({"tip", "a", Vec3::Zero(), ""});
  m.markers.push_back({"tip", "a", Vec3::UnitX(), ""});
  expect_error(m, {"duplicate marker name 'tip'"});
  // A negative damper feeds energy in (URDF refused it; YAML and MJCF ran to 5e6 rad/s).
  m = base;
  m.forces.push_back({JointSpringDamperSpec{"j", -3.0, -1.0, 0.0}, "m.yaml:11"});
  expect_error(m, {"m.yaml:11: ", "joint_spring_damper on 'j'", "damping must not be negative"});
  m = base;
  m.forces.push_back({PointSpringDamperSpec{"ground", "a", Vec3::Zero(), Vec3::Zero(), 1.0, -0.5, 0.0}, ""});
  expect_error(m, {"point_spring_damper", "damping must not be negative"});
  m = base;  // a negative stiffness alone is a snap-through element
  m.forces.push_back({JointSpringDamperSpec{"j", -3.0, 0.0, 0.0}, ""});
  EXPECT_NO_THROW(Model::build(m));
  m = base;
  m.bodies[0].inertia = Vec3(1, 1, 3).asDiagonal();
  expect_error(m, {"body 'a'", "triangle inequality"});
  m = base;
  m.bodies[0].mass = 0.0;
  expect_error(m, {"body 'a'", "mass must be positive"});
}

TEST(Model, DegenerateButValidInertiasAreAccepted) {
  for (const Mat3& I : {Mat3(Mat3::Zero()), Mat3(Vec3(0, 2, 2).asDiagonal())}) {  // point mass, slender rod
    Mechanism m;
    m.add_body("a", 1, Vec3(0.5, 0, 0), I);
    m.add_joint("j", JointType::revolute, "ground", "a");
    EXPECT_NO_THROW(Model::build(m));
  }
}

TEST(Model, FormulationFactoryRejectsWhatItCannotRun) {
  const Model loop = Model::build(four_bar(true));
  try {
    make_formulation("tree", loop);
    ADD_FAILURE();
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("'C'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(make_formulation("no-such-method", loop), ModelError);
  const Model tree = Model::build(test::random_tree(1, 3));
  EXPECT_EQ(make_formulation("tree", tree)->name(), "tree");
}

}  // namespace
}  // namespace loopdyn
