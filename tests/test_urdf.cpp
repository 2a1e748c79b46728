// URDF import (src/io/urdf.cpp): the test robots read from URDF equal their YAML twins (field by
// field and in accelerations), a loop-free URDF pendulum against its equations of motion derived by
// hand, the bundled real arm, each mapping rule (root, massless links, inertia rotation, planar
// normal, loop joints, mimic, damping, visuals), one test per class of bad file, and the CLI.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <fstream>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_support.hpp"
#include "loopdyn/loops/assembly.hpp"
#include "loopdyn/formulations/formulation.hpp"
#include "loopdyn/io/model_file.hpp"
#include "loopdyn/io/urdf.hpp"
#include "loopdyn/core/kinematics.hpp"
#include "loopdyn/run/simulator.hpp"
#include "loopdyn/formulations/registry.hpp"
#include "mechanism_compare.hpp"
#include "test_support.hpp"

namespace {

using namespace loopdyn;
using test::CliResult;
using test::expect_same;
using test::near;
using test::run_cli;

const std::string robots_dir = std::string(LOOPDYN_SOURCE_DIR) + "/models/robots/";

/// ModelError message of parse_urdf(text), or "" when it throws nothing.
std::string urdf_error(const std::string& text) {
  try {
    parse_urdf(text, "t.urdf");
  } catch (const ModelError& e) {
    return e.what();
  }
  return "";
}

/// Every part must occur in the message.
void expect_parts(const std::string& message, std::initializer_list<std::string> parts) {
  EXPECT_FALSE(message.empty()) << "no ModelError was thrown";
  for (const auto& p : parts) EXPECT_NE(message.find(p), std::string::npos) << "'" << p << "' not in: " << message;
}

/// A link of mass `mass` with a unit-ish inertia, on one line.
std::string link(const std::string& name, double mass = 1.0) {
  return "<link name=\"" + name + "\"><inertial><mass value=\"" + std::to_string(mass) +
         "\"/><inertia ixx=\"0.1\" iyy=\"0.1\" izz=\"0.1\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n";
}

std::string joint(const std::string& name, const std::string& type, const std::string& parent,
                  const std::string& child, const std::string& inside = "") {
  return "<joint name=\"" + name + "\" type=\"" + type + "\"><parent link=\"" + parent + "\"/><child link=\"" + child +
         "\"/>" + inside + "</joint>\n";
}

std::string robot(const std::string& body) { return "<robot name=\"t\">\n" + body + "</robot>\n"; }

const JointSpec& joint_named(const Mechanism& m, const std::string& name) {
  for (const JointSpec& j : m.joints)
    if (j.name == name) return j;
  throw std::runtime_error("no joint " + name);
}

// ---------------------------------------------------------------------------------------------
// The test robots: URDF and YAML twins (models/robots/make_robots.py writes both)

class UrdfRobot : public ::testing::TestWithParam<const char*> {
 protected:
  std::string yaml() const { return robots_dir + GetParam() + ".yaml"; }
  std::string urdf() const { return robots_dir + GetParam() + ".urdf"; }
};

TEST_P(UrdfRobot, IsTheMechanismOfItsYamlTwin) { expect_same(load_mechanism(yaml()), load_mechanism(urdf())); }

// Accelerations of the two models at one closed state with random speeds on the constraints, by two
// formulations. The mechanisms differ only in joint-frame rotations by round-off (urdfdom turns rpy
// into a quaternion, the YAML reader into a matrix directly: ≤ 4e-16 per entry), which moves the
// accelerations by that times their conditioning, far below 1e-12.
TEST_P(UrdfRobot, GivesTheAccelerationsOfItsYamlTwin) {
  const Model a = Model::build(load_mechanism(yaml()));
  const Model b = Model::build(load_urdf(urdf()));
  ASSERT_EQ(a.body_name, b.body_name);
  ASSERT_EQ(a.nq, b.nq);
  ASSERT_EQ(a.nv, b.nv);
  std::mt19937_64 rng(19);
  const AssemblyResult s = assemble(a, a.loops().constraints, a.q0, test::random_vector(a.nv, rng));
  for (const char* method : {"lagrange-dense", "nullspace"}) {
    VecX ua(a.nv), ub(b.nv);
    make_formulation(method, a)->accelerations(0.0, s.q, s.u, ua);
    make_formulation(method, b)->accelerations(0.0, s.q, s.u, ub);
    EXPECT_GT(ua.norm(), 1.0) << method;  // gravity and the speeds move every robot
    EXPECT_TRUE(near(ua, ub, 1e-12)) << GetParam() << " " << method;
  }
}

// URDF → YAML text (what `loopdyn convert` writes) → Mechanism: the same mechanism again.
TEST_P(UrdfRobot, ConvertedToYamlReadsBackTheSame) {
  const Mechanism m = load_urdf(urdf());
  expect_same(m, parse_mechanism(write_mechanism(m), "converted.yaml"));
}

INSTANTIATE_TEST_SUITE_P(Robots, UrdfRobot, ::testing::Values("fourbar", "delta", "stewart"));

TEST(UrdfRobots, StartClosedWithTheirDegreesOfFreedom) {
  for (const auto& [name, dof] : {std::pair("fourbar", 1), std::pair("delta", 3), std::pair("stewart", 6)}) {
    const Model m = Model::build(load_urdf(robots_dir + name + ".urdf"));
    const AssemblyResult s = assemble(m, m.loops().constraints, m.q0, m.u0);
    EXPECT_EQ(s.iterations, 0) << name;  // the zero pose is closed as written
    EXPECT_EQ(static_cast<int>(s.independent_speeds.size()), dof) << name;
  }
}

// ---------------------------------------------------------------------------------------------
// A loop-free URDF against equations of motion derived by hand

// A double pendulum in the x-z plane (axes along y, gravity −z) hung from a massless base_link fixed
// to `world` 2 m up, with a massless tool link fixed to the lower link. Each <inertial> frame is
// turned by yaw π/2, so the body's moment about y is the file's ixx (R I Rᵀ); products of inertia
// and the y offset of the upper centre of mass do not enter the planar motion.
const char* pendulum_urdf = R"(<robot name="pendulum">
  <link name="world"/>
  <link name="base_link"/>
  <link name="upper"><inertial><origin xyz="0 0.02 -0.4" rpy="0 0 1.5707963267948966"/><mass value="1.5"/>
    <inertia ixx="0.09" iyy="0.02" izz="0.08" ixy="0.005" ixz="0.004" iyz="0"/></inertial></link>
  <link name="lower"><inertial><origin xyz="0 0 -0.3" rpy="0 0 1.5707963267948966"/><mass value="0.8"/>
    <inertia ixx="0.03" iyy="0.01" izz="0.025" ixy="0" ixz="0" iyz="0.002"/></inertial></link>
  <link name="tool"><visual><origin xyz="0 0 0.05"/><geometry><sphere radius="0.02"/></geometry></visual></link>
  <joint name="base_fixed" type="fixed"><parent link="world"/><child link="base_link"/><origin xyz="0 0 2"/></joint>
  <joint name="shoulder" type="continuous"><parent link="base_link"/><child link="upper"/><axis xyz="0 1 0"/></joint>
  <joint name="elbow" type="revolute"><parent link="upper"/><child link="lower"/><origin xyz="0 0 -1"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="10" velocity="5"/></joint>
  <joint name="tool_fixed" type="fixed"><parent link="lower"/><child link="tool"/><origin xyz="0 0 -0.6"/></joint>
</robot>)";

TEST(UrdfPendulum, MergesTheMasslessLinks) {
  const Mechanism m = parse_urdf(pendulum_urdf, "pendulum.urdf");
  ASSERT_EQ(m.bodies.size(), 2u);
  EXPECT_EQ(m.bodies[0].name, "upper");
  EXPECT_EQ(m.bodies[1].name, "lower");
  ASSERT_EQ(m.joints.size(), 2u);  // base_fixed and tool_fixed are merged away
  EXPECT_EQ(joint_named(m, "shoulder").parent, "ground");
  EXPECT_EQ(joint_named(m, "shoulder").parent_frame.p, Vec3(0, 0, 2));
  ASSERT_EQ(m.bodies[1].visuals.size(), 1u);  // the tool's sphere, on the lower link at −0.6 + 0.05
  EXPECT_TRUE(near(m.bodies[1].visuals[0].origin.p, Vec3(0, 0, -0.55), 1e-15));
}

// M(q) u̇ = b(q, u) + G(q) for relative angles q1 (shoulder), q2 (elbow) about +y, links hanging
// along −z: with h = m2 L1 c2 sin q2,
//   M11 = I1 + m1 c1² + I2 + m2 (L1² + c2² + 2 L1 c2 cos q2),  M12 = I2 + m2 (c2² + L1 c2 cos q2),
//   M22 = I2 + m2 c2²,  b = [h (2 u1 u2 + u2²), −h u1²],
//   G = −∂V/∂q = [−m1 g c1 sin q1 − m2 g (L1 sin q1 + c2 sin(q1 + q2)), −m2 g c2 sin(q1 + q2)].
// Tolerance: a 2x2 solve of O(1) numbers, round-off ~1e-15.
TEST(UrdfPendulum, TreeAccelerationsMatchTheHandDerivedEquations) {
  const Model model = Model::build(parse_urdf(pendulum_urdf, "pendulum.urdf"));
  const double m1 = 1.5, m2 = 0.8, c1 = 0.4, c2 = 0.3, L1 = 1.0, I1 = 0.09, I2 = 0.03, g = 9.81;
  const double q1 = 0.7, q2 = -0.4, u1 = 1.3, u2 = -0.6;
  const double h = m2 * L1 * c2 * std::sin(q2);
  Eigen::Matrix2d M;
  M(0, 0) = I1 + m1 * c1 * c1 + I2 + m2 * (L1 * L1 + c2 * c2 + 2 * L1 * c2 * std::cos(q2));
  M(0, 1) = M(1, 0) = I2 + m2 * (c2 * c2 + L1 * c2 * std::cos(q2));
  M(1, 1) = I2 + m2 * c2 * c2;
  const Eigen::Vector2d rhs(h * (2 * u1 * u2 + u2 * u2) - m1 * g * c1 * std::sin(q1) -
                                m2 * g * (L1 * std::sin(q1) + c2 * std::sin(q1 + q2)),
                            -h * u1 * u1 - m2 * g * c2 * std::sin(q1 + q2));
  const Eigen::Vector2d expected = M.ldlt().solve(rhs);
  VecX udot(2);
  make_formulation("tree", model)->accelerations(0.0, Eigen::Vector2d(q1, q2), Eigen::Vector2d(u1, u2), udot);
  EXPECT_TRUE(near(udot, expected, 1e-12));
}

// ---------------------------------------------------------------------------------------------
// The bundled real arm (models/robots/kr5: DART's KUKA KR5 sixx R650 from Debian's dart-doc)

TEST(UrdfKr5, LoadsWithItsMeshesAndRunsWithTheTreeAndTheKktMethodsAgreeing) {
  std::vector<std::string> notes;
  const std::string path = robots_dir + "kr5/kr5_sixx_r650.urdf";
  const Mechanism m = load_urdf(path, &notes);
  EXPECT_TRUE(notes.empty()) << notes.front();
  ASSERT_EQ(m.bodies.size(), 7u);  // base_link (massive, fixed to world) and six moving links
  for (const BodySpec& b : m.bodies) {
    ASSERT_EQ(b.visuals.size(), 1u) << b.name;
    EXPECT_TRUE(std::filesystem::path(b.visuals[0].file).is_absolute()) << b.visuals[0].file;
    EXPECT_TRUE(std::filesystem::exists(b.visuals[0].file)) << b.visuals[0].file;
  }
  const Model model = Model::build(m);
  EXPECT_EQ(model.nv, 6);
  // ABA against CRBA + dense solve (lagrange-dense on a tree): two code paths, round-off apart.
  std::mt19937_64 rng(5);
  const VecX q = test::random_vector(model.nq, rng), u = test::random_vector(model.nv, rng);
  VecX aba(6), dense(6);
  make_formulation("tree", model)->accelerations(0.0, q, u, aba);
  make_formulation("lagrange-dense", model)->accelerations(0.0, q, u, dense);
  EXPECT_TRUE(near(aba, dense, 1e-10));
  // One second under gravity: RK4 at 1 ms keeps the energy of this conservative arm to ~1e-9.
  SimulationSettings settings;
  settings.t_end = 1.0;
  auto method = make_formulation("tree", model);
  const Trajectory run = Simulator(model, *method, settings).run(model.q0, model.u0);
  const double e0 = run.at(0, "energy"), e1 = run.at(run.rows.size() - 1, "energy");
  EXPECT_LT(std::abs(e1 - e0), 1e-7 * std::abs(e0));
  EXPECT_GT(std::abs(run.at(run.rows.size() - 1, "q.shoulder_pitch")), 0.1);  // it falls
}

// ---------------------------------------------------------------------------------------------
// Mapping rules

TEST(UrdfMapping, InertiaIsTurnedIntoBodyAxes) {
  const Mechanism m = parse_urdf(robot(R"(<link name="world"/>
<link name="a"><inertial><origin xyz="0.1 -0.2 0.3" rpy="0.3 -0.2 0.5"/><mass value="2"/>
<inertia ixx="0.4" iyy="0.3" izz="0.2" ixy="0.01" ixz="-0.02" iyz="0.03"/></inertial></link>
)" + joint("j", "continuous", "world", "a")),
                                 "t.urdf");
  Mat3 I;
  I << 0.4, 0.01, -0.02, 0.01, 0.3, 0.03, -0.02, 0.03, 0.2;
  // URDF's rpy: R = Rz(yaw) Ry(pitch) Rx(roll), written out here apart from the reader's code.
  const Mat3 R = (Eigen::AngleAxisd(0.5, Vec3::UnitZ()) * Eigen::AngleAxisd(-0.2, Vec3::UnitY()) *
                  Eigen::AngleAxisd(0.3, Vec3::UnitX())).toRotationMatrix();
  ASSERT_EQ(m.bodies.size(), 1u);
  EXPECT_EQ(m.bodies[0].mass, 2.0);
  EXPECT_EQ(m.bodies[0].com, Vec3(0.1, -0.2, 0.3));
  EXPECT_TRUE(near(m.bodies[0].inertia, R * I * R.transpose(), 1e-15));
}

TEST(UrdfMapping, RootLinkIsGroundWhenWorldOrMasslessAndFixedToItOtherwise) {
  const Mechanism world = parse_urdf(robot("<link name=\"world\"/>\n" + link("a") + joint("j", "continuous", "world", "a")), "t.urdf");
  EXPECT_EQ(world.bodies.size(), 1u);
  EXPECT_EQ(joint_named(world, "j").parent, "ground");

  std::vector<std::string> notes;
  const Mechanism massless = parse_urdf(robot("<link name=\"base_link\"/>\n" + link("a") + joint("j", "continuous", "base_link", "a")),
                                        "t.urdf", &notes);
  EXPECT_EQ(joint_named(massless, "j").parent, "ground");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("massless root link 'base_link' is the ground"), std::string::npos) << notes[0];

  const Mechanism massive = parse_urdf(robot(link("base") + link("a") + joint("j", "continuous", "base", "a")), "t.urdf");
  ASSERT_EQ(massive.bodies.size(), 2u);
  const JointSpec& anchor = massive.joints.front();
  EXPECT_EQ(anchor.name, "ground_to_base");
  EXPECT_EQ(anchor.type, JointType::fixed);
  EXPECT_EQ(anchor.parent, "ground");
  EXPECT_EQ(anchor.child, "base");
  EXPECT_EQ(Model::build(massive).nv, 1);
}

TEST(UrdfMapping, JointTypes) {
  const Mechanism m = parse_urdf(
      robot("<link name=\"world\"/>\n" + link("a") + link("b") + link("c") + link("d") + link("e") +
            joint("rev", "revolute", "world", "a", "<axis xyz=\"0 0 2\"/><limit lower=\"-1\" upper=\"1\" effort=\"1\" velocity=\"1\"/>") +
            joint("cont", "continuous", "a", "b") +
            joint("pri", "prismatic", "b", "c", "<axis xyz=\"0 1 0\"/><limit lower=\"-1\" upper=\"1\" effort=\"1\" velocity=\"1\"/>") +
            joint("float", "floating", "c", "d") + joint("fix", "fixed", "d", "e")),
      "t.urdf");
  EXPECT_EQ(joint_named(m, "rev").type, JointType::revolute);
  EXPECT_EQ(joint_named(m, "rev").axis, Vec3(0, 0, 2));  // Model::build normalizes
  EXPECT_EQ(joint_named(m, "rev").effort, 1.0);          // <limit effort>: what a joint_pd on it may apply
  EXPECT_EQ(joint_named(m, "cont").effort, std::numeric_limits<double>::infinity());
  EXPECT_EQ(joint_named(m, "cont").type, JointType::revolute);
  EXPECT_EQ(joint_named(m, "cont").axis, Vec3(1, 0, 0));  // URDF's default axis
  EXPECT_EQ(joint_named(m, "pri").type, JointType::prismatic);
  EXPECT_EQ(joint_named(m, "float").type, JointType::free);
  EXPECT_EQ(joint_named(m, "fix").type, JointType::fixed);
  EXPECT_EQ(Model::build(m).nv, 1 + 1 + 1 + 6);
}

// URDF's planar joint moves in the plane normal to its axis. Checked on the motion itself: from the
// zero pose, the child's origin moves by |(x, y)| within that plane and the child turns by θ about
// the normal, for axes along x, along −z (the half-turn case) and oblique, under a turned origin.
TEST(UrdfMapping, PlanarJointMovesInThePlaneNormalToItsAxis) {
  for (const Vec3& n : {Vec3(1, 0, 0), Vec3(0, 0, -1), Vec3(0.3, -0.5, 0.8)}) {
    const std::string axis = "<axis xyz=\"" + std::to_string(n.x()) + " " + std::to_string(n.y()) + " " +
                             std::to_string(n.z()) + "\"/>";
    const Model model = Model::build(parse_urdf(
        robot("<link name=\"world\"/>\n" + link("a") +
              joint("p", "planar", "world", "a", "<origin xyz=\"0.1 0.2 0.3\" rpy=\"0.2 0.1 -0.3\"/>" + axis)),
        "t.urdf"));
    KinematicsData kin(model);
    update_positions(model, kin, VecX::Zero(3));
    const Transform X0 = kin.X_world[0];
    const Mat3 origin = (Eigen::AngleAxisd(-0.3, Vec3::UnitZ()) * Eigen::AngleAxisd(0.1, Vec3::UnitY()) *
                         Eigen::AngleAxisd(0.2, Vec3::UnitX())).toRotationMatrix();
    EXPECT_TRUE(near(X0.p, Vec3(0.1, 0.2, 0.3), 1e-15));  // zero pose: the child link frame is the origin
    EXPECT_TRUE(near(X0.R, origin, 1e-15));
    update_positions(model, kin, Eigen::Vector3d(0.4, -0.7, 0.9));
    const Transform& X = kin.X_world[0];
    const Vec3 normal = origin * n.normalized();
    EXPECT_NEAR((X.p - X0.p).dot(normal), 0.0, 1e-15);
    EXPECT_NEAR((X.p - X0.p).norm(), std::hypot(0.4, 0.7), 1e-15);
    const Eigen::AngleAxisd turn(X.R * X0.R.transpose());
    EXPECT_NEAR(turn.angle(), 0.9, 1e-14);
    EXPECT_TRUE(near(turn.axis(), normal, 1e-14));
  }
}

TEST(UrdfMapping, MimicIsACouplingAndDampingAJointDamper) {
  std::vector<std::string> notes;
  const Mechanism m = parse_urdf(
      robot("<link name=\"world\"/>\n" + link("a") + link("b") + link("c") +
            joint("j1", "continuous", "world", "a", "<dynamics damping=\"0.3\" friction=\"0.1\"/>") +
            joint("j2", "continuous", "world", "b", "<mimic joint=\"j1\" multiplier=\"-2\" offset=\"0.25\"/>") +
            joint("f", "floating", "world", "c", "<dynamics damping=\"1\"/>")),
      "t.urdf", &notes);
  ASSERT_EQ(m.forces.size(), 1u);
  const auto& damper = std::get<JointSpringDamperSpec>(m.forces[0].element);
  EXPECT_EQ(damper.joint, "j1");
  EXPECT_EQ(damper.damping, 0.3);
  EXPECT_EQ(damper.stiffness, 0.0);
  ASSERT_EQ(m.couplings.size(), 1u);  // q(j2) = −2 q(j1) + 0.25  ⇔  −2 q(j1) − q(j2) = −0.25
  const CouplingSpec& c = m.couplings[0];
  std::vector<std::pair<std::string, double>> terms;
  for (const CouplingSpec::Term& t : c.terms) terms.emplace_back(t.joint, t.coefficient);
  EXPECT_EQ(terms, (std::vector<std::pair<std::string, double>>{{"j1", -2.0}, {"j2", -1.0}}));
  EXPECT_EQ(c.name, "mimic_j2");
  EXPECT_EQ(c.value, -0.25);
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_NE(notes[0].find("friction of joint 'j1' ignored"), std::string::npos) << notes[0];
  EXPECT_NE(notes[1].find("damping of floating joint 'f' ignored"), std::string::npos) << notes[1];
  EXPECT_EQ(Model::build(m).couplings.size(), 1u);
}

TEST(UrdfMapping, LoopJointsOfEveryTypeAreCutJointsWithTheirFrames) {
  const std::string chain = "<link name=\"world\"/>\n" + link("a") + link("b") +
                            "<link name=\"tip\"/>\n" + joint("ja", "continuous", "world", "a") +
                            joint("jb", "continuous", "a", "b", "<origin xyz=\"1 0 0\"/>") +
                            joint("jt", "fixed", "b", "tip", "<origin xyz=\"0.5 0 0\"/>");
  for (const char* type : {"revolute", "prismatic", "cylindrical", "universal", "spherical", "planar", "fixed"}) {
    const std::string name(type);
    const bool axis = name != "spherical" && name != "fixed";
    const Mechanism m = parse_urdf(
        robot(chain + "<loop_joint name=\"close\" type=\"" + name + "\"><parent link=\"tip\"/><child link=\"world\"/>" +
              "<origin xyz=\"0.1 0 0\" rpy=\"0 0 0.5\"/><child_origin xyz=\"2 0 0\"/>" +
              (axis ? "<axis xyz=\"0 0 1\"/>" : "") + (name == "universal" ? "<axis2 xyz=\"1 0 0\"/>" : "") +
              "</loop_joint>\n"),
        "t.urdf");
    const JointSpec& j = joint_named(m, "close");
    EXPECT_EQ(to_string(j.type), name);
    EXPECT_TRUE(j.cut);
    EXPECT_EQ(j.parent, "b");  // the massless tip is merged into b, 0.5 m along x
    EXPECT_EQ(j.child, "ground");
    EXPECT_TRUE(near(j.parent_frame.p, Vec3(0.6, 0, 0), 1e-15)) << type;
    EXPECT_TRUE(near(j.parent_frame.R, Eigen::AngleAxisd(0.5, Vec3::UnitZ()).toRotationMatrix(), 1e-15)) << type;
    EXPECT_EQ(j.child_frame.p, Vec3(2, 0, 0));
    if (name == "universal") {
      EXPECT_EQ(j.axis2, Vec3(1, 0, 0));
    }
    EXPECT_EQ(j.where, "t.urdf:9");
  }
}

// Isaac Sim's importer spells a spherical loop joint <link1 link xyz rpy/> <link2 .../>: the same
// joint as <parent>/<origin> and <child>/<child_origin>.
TEST(UrdfMapping, LoopJointsInIsaacSimsSpelling) {
  const std::string tree = "<link name=\"world\"/>\n" + link("a") + joint("j", "continuous", "world", "a");
  const Mechanism isaac = parse_urdf(robot(tree + R"(<loop_joint name="c" type="spherical">
<link1 link="a" xyz="0.5 0 0" rpy="0.1 0 0"/><link2 link="world" xyz="0 0 -1"/></loop_joint>
)"), "t.urdf");
  const Mechanism ours = parse_urdf(robot(tree + R"(<loop_joint name="c" type="spherical">
<parent link="a"/><child link="world"/><origin xyz="0.5 0 0" rpy="0.1 0 0"/><child_origin xyz="0 0 -1"/></loop_joint>
)"), "t.urdf");
  expect_same(isaac, ours);
  EXPECT_EQ(joint_named(isaac, "c").parent_frame.p, Vec3(0.5, 0, 0));
}

// Materials by name, in the visual, without colour; meshes by relative path, package:// and missing.
TEST(UrdfMapping, VisualsKeepShapesColoursAndResolvedMeshPaths) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "loopdyn_test_urdf_visuals";
  fs::create_directories(dir / "my_robot" / "urdf");
  fs::create_directories(dir / "my_robot" / "meshes");
  std::ofstream(dir / "my_robot" / "meshes" / "arm.stl") << "solid arm\nendsolid arm\n";
  const fs::path file = dir / "my_robot" / "urdf" / "r.urdf";
  std::ofstream(file) << robot(R"(<material name="blue"><color rgba="0.1 0.2 0.8 1"/></material>
<link name="world"/>
<link name="a"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>
<visual><origin xyz="0 0 0.5" rpy="1.5707963267948966 0 0"/><geometry><box size="0.1 0.2 0.3"/></geometry><material name="blue"/></visual>
<visual><geometry><cylinder radius="0.05" length="0.4"/></geometry><material name="red"><color rgba="1 0 0 0.5"/></material></visual>
<visual><geometry><sphere radius="0.07"/></geometry><material name="wood"><texture filename="wood.png"/></material></visual>
<visual><geometry><mesh filename="package://my_robot/meshes/arm.stl" scale="2 2 2"/></geometry></visual>
<visual><geometry><mesh filename="../meshes/arm.stl"/></geometry></visual>
<visual><geometry><mesh filename="package://other/missing.dae"/></geometry></visual>
</link>
<joint name="j" type="continuous"><parent link="world"/><child link="a"/></joint>
)");
  std::vector<std::string> notes;
  const Mechanism m = load_urdf(file.string(), &notes);
  const auto& v = m.bodies.at(0).visuals;
  ASSERT_EQ(v.size(), 6u);
  using Shape = VisualSpec::Shape;
  EXPECT_EQ(v[0].shape, Shape::box);
  EXPECT_EQ(v[0].size, Vec3(0.1, 0.2, 0.3));
  EXPECT_EQ(v[0].origin.p, Vec3(0, 0, 0.5));
  EXPECT_TRUE(near(v[0].origin.R, Eigen::AngleAxisd(M_PI / 2, Vec3::UnitX()).toRotationMatrix(), 1e-15));
  EXPECT_EQ(v[0].rgba, (std::array<double, 4>{0.1, 0.2, 0.8, 1.0}));  // the named material's colour
  EXPECT_EQ(v[1].shape, Shape::cylinder);
  EXPECT_EQ(v[1].radius, 0.05);
  EXPECT_EQ(v[1].length, 0.4);
  EXPECT_EQ(v[1].rgba, (std::array<double, 4>{1.0, 0.0, 0.0, 0.5}));
  EXPECT_EQ(v[2].shape, Shape::sphere);
  EXPECT_EQ(v[2].rgba, VisualSpec().rgba);  // a texture only: the default grey
  const std::string arm = fs::canonical(dir / "my_robot" / "meshes" / "arm.stl").string();
  EXPECT_EQ(v[3].shape, Shape::mesh);
  EXPECT_EQ(v[3].file, arm);
  EXPECT_EQ(v[3].scale, Vec3(2, 2, 2));
  EXPECT_EQ(v[4].file, arm);
  EXPECT_EQ(v[5].file, "package://other/missing.dae");
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_NE(notes[0].find("material 'wood' of link 'a' has no colour"), std::string::npos) << notes[0];
  EXPECT_NE(notes[1].find("mesh 'package://other/missing.dae' of link 'a' not found"), std::string::npos) << notes[1];
}

// A ROS package opened by its bare file name from its own folder (`cd kr5 && loopdyn info kr5.urdf`):
// the folder to look meshes up from is the working directory, from C++ and from the CLI.
TEST(UrdfMapping, PackageMeshesOfAFileOpenedByItsBareNameFromItsFolder) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "loopdyn_test_urdf_bare" / "my_robot";
  fs::create_directories(dir / "meshes");
  std::ofstream(dir / "meshes" / "arm.stl") << "solid arm\nendsolid arm\n";
  std::ofstream(dir / "r.urdf") << robot(R"(<link name="world"/>
<link name="a"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>
<visual><geometry><mesh filename="package://my_robot/meshes/arm.stl"/></geometry></visual>
<visual><geometry><mesh filename="meshes/arm.stl"/></geometry></visual>
</link>
<joint name="j" type="continuous"><parent link="world"/><child link="a"/></joint>
)");
  struct InFolder {  // the working directory for the test's scope
    explicit InFolder(const fs::path& d) : before(fs::current_path()) { fs::current_path(d); }
    ~InFolder() { fs::current_path(before); }
    fs::path before;
  } in_folder(dir);
  std::vector<std::string> notes;
  const Mechanism m = load_urdf("r.urdf", &notes);
  EXPECT_TRUE(notes.empty()) << notes.front();
  const std::string arm = fs::canonical(dir / "meshes" / "arm.stl").string();
  ASSERT_EQ(m.bodies.at(0).visuals.size(), 2u);
  EXPECT_EQ(m.bodies[0].visuals[0].file, arm);
  EXPECT_EQ(m.bodies[0].visuals[1].file, arm);
  const CliResult info = run_cli("info r.urdf");
  EXPECT_EQ(info.status, 0) << info.output;
  EXPECT_EQ(info.output.find("error"), std::string::npos) << info.output;
}

// `convert --out` (save_mechanism) writes an importer's absolute mesh paths relative to the output's
// folder, from which the reader takes them: the YAML and its meshes can move together.
TEST(UrdfMapping, ConvertWritesMeshesRelativeToTheOutputFolder) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "loopdyn_test_urdf_relative";
  fs::remove_all(dir);
  fs::create_directories(dir / "robot" / "meshes");
  fs::create_directories(dir / "out");
  std::ofstream(dir / "robot" / "meshes" / "arm.stl") << "solid arm\nendsolid arm\n";
  std::ofstream(dir / "robot" / "r.urdf") << robot(R"(<link name="world"/>
<link name="a"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>
<visual><geometry><mesh filename="meshes/arm.stl"/></geometry></visual>
</link>
<joint name="j" type="continuous"><parent link="world"/><child link="a"/></joint>
)");
  const fs::path yaml = dir / "out" / "r.yaml";
  const CliResult convert = run_cli("convert " + (dir / "robot" / "r.urdf").string() + " --out " + yaml.string());
  ASSERT_EQ(convert.status, 0) << convert.output;
  const Mechanism m = load_mechanism(yaml.string());
  ASSERT_EQ(m.bodies.at(0).visuals.size(), 1u);
  EXPECT_EQ(m.bodies[0].visuals[0].file, "../robot/meshes/arm.stl");
  const fs::path moved = dir.string() + "_moved";  // the whole folder elsewhere: the mesh is still found
  fs::remove_all(moved);
  fs::rename(dir, moved);
  const fs::path file = load_mechanism((moved / "out" / "r.yaml").string()).bodies.at(0).visuals.at(0).file;
  EXPECT_TRUE(fs::exists(moved / "out" / file)) << file;
  fs::remove_all(moved);
}

TEST(UrdfMapping, TransmissionsAreIgnoredWithANote) {
  std::vector<std::string> notes;
  parse_urdf(robot("<link name=\"world\"/>\n" + link("a") + joint("j", "continuous", "world", "a") +
                   "<transmission name=\"t\"><type>transmission_interface/SimpleTransmission</type></transmission>\n"),
             "t.urdf", &notes);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("1 <transmission> element(s) ignored"), std::string::npos) << notes[0];
}

// urdfdom skips the children of <robot> it does not know: each gets a note at its line naming it,
// a misspelt one with what it was probably meant to be; the robot still loads. Where the misspelt
// element leaves a link without its joint, urdfdom's error names it too.
TEST(UrdfMapping, ElementsThatAreNotReadGetANoteAtTheirLine) {
  std::vector<std::string> notes;
  const Mechanism m = parse_urdf(robot("<link name=\"world\"/>\n" + link("a") + joint("j", "continuous", "world", "a") +
                                       "<gazebo reference=\"a\"><material>Gazebo/Red</material></gazebo>\n"
                                       "<sensor name=\"cam\" type=\"camera\"/>\n"
                                       "<joitn name=\"k\" type=\"fixed\"><parent link=\"a\"/><child link=\"world\"/></joitn>\n"
                                       "<lnik name=\"c\"/>\n"),
                                 "t.urdf", &notes);
  EXPECT_EQ(m.joints.size(), 1u);
  ASSERT_EQ(notes.size(), 4u) << ::testing::PrintToString(notes);
  EXPECT_EQ(notes[0], "t.urdf:5: <gazebo> is not read (Gazebo's simulation settings)");
  EXPECT_EQ(notes[1], "t.urdf:6: <sensor> is not read (only link, joint, material, loop_joint and transmission are)");
  EXPECT_EQ(notes[2], "t.urdf:7: <joitn> is not read (a misspelt <joint>?)");
  EXPECT_EQ(notes[3], "t.urdf:8: <lnik> is not read (a misspelt <link>?)");
  expect_parts(urdf_error(robot("<link name=\"world\"/>\n" + link("a") + link("b") + joint("j", "continuous", "world", "a") +
                                "<joitn name=\"k\" type=\"continuous\"><parent link=\"a\"/><child link=\"b\"/></joitn>\n")),
               {"t.urdf:", "urdfdom", "t.urdf:6: <joitn> is not read (a misspelt <joint>?)"});
}

TEST(UrdfMapping, UrdfPathsAreRecognizedInAnyCase) {
  EXPECT_TRUE(is_urdf_path("robot.urdf"));
  EXPECT_TRUE(is_urdf_path("/a/b/Robot.URDF"));
  EXPECT_FALSE(is_urdf_path("robot.yaml"));
  EXPECT_FALSE(is_urdf_path("urdf"));
}

// ---------------------------------------------------------------------------------------------
// Bad files: file, line, element, problem

const std::string world_and_a = "<link name=\"world\"/>\n" + link("a");  // lines 2 and 3

TEST(UrdfErrors, MalformedXml) {
  expect_parts(urdf_error("<robot name=\"t\">\n<link name=\"a\">\n</robot>\n"), {"t.urdf:2:", "malformed XML (XML_ERROR_MISMATCHED_ELEMENT: XMLElement name=link)"});
  expect_parts(urdf_error("<model/>"), {"t.urdf:1:", "root element must be <robot>"});
}

TEST(UrdfErrors, UnknownLinkInAJoint) {
  expect_parts(urdf_error(robot(world_and_a + joint("j", "continuous", "world", "nope"))),
               {"t.urdf:4:", "urdfdom", "child link [nope] of joint [j] not found"});
}

TEST(UrdfErrors, UnknownLinkInALoopJoint) {
  expect_parts(urdf_error(robot(world_and_a + joint("j", "continuous", "world", "a") +
                                "<loop_joint name=\"c\" type=\"spherical\">\n<parent link=\"a\"/>\n<child link=\"nope\"/>\n</loop_joint>\n")),
               {"t.urdf:7:", "loop_joint 'c'", "unknown link 'nope'"});
}

TEST(UrdfErrors, UnsupportedJointTypes) {
  expect_parts(urdf_error(robot(world_and_a + joint("j", "ball", "world", "a"))),
               {"t.urdf:4:", "Joint [j] has no known type [ball]"});
  expect_parts(urdf_error(robot(world_and_a + joint("j", "continuous", "world", "a") +
                                "<loop_joint name=\"c\" type=\"free\"><parent link=\"a\"/><child link=\"world\"/></loop_joint>\n")),
               {"t.urdf:5:", "loop_joint 'c'", "unknown type 'free'"});
}

TEST(UrdfErrors, ZeroAxis) {
  expect_parts(urdf_error(robot(world_and_a + "<joint name=\"j\" type=\"continuous\"><parent link=\"world\"/><child link=\"a\"/>\n"
                                              "<axis xyz=\"0 0 0\"/></joint>\n")),
               {"t.urdf:5:", "joint 'j'", "<axis> must be a non-zero vector"});
  expect_parts(urdf_error(robot(world_and_a + joint("j", "continuous", "world", "a") +
                                "<loop_joint name=\"c\" type=\"revolute\"><parent link=\"a\"/><child link=\"world\"/>\n"
                                "<axis xyz=\"0 0 0\"/></loop_joint>\n")),
               {"t.urdf:6:", "loop_joint 'c'", "<axis> must not be zero"});
}

TEST(UrdfErrors, BadMass) {
  expect_parts(urdf_error(robot("<link name=\"world\"/>\n<link name=\"a\">\n<inertial><mass value=\"-1\"/>"
                                "<inertia ixx=\"1\" iyy=\"1\" izz=\"1\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n" +
                                joint("j", "continuous", "world", "a"))),
               {"t.urdf:4:", "link 'a'", "mass must be positive, got -1"});
  // urdfdom logs a mass that is not a number and keeps the link without it: still an error here.
  expect_parts(urdf_error(robot("<link name=\"world\"/>\n<link name=\"a\"><inertial><mass value=\"nan\"/>"
                                "<inertia ixx=\"1\" iyy=\"1\" izz=\"1\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n" +
                                joint("j", "continuous", "world", "a"))),
               {"t.urdf:3:", "urdfdom", "mass [nan] is not a float", "Link [a]"});
}

TEST(UrdfErrors, MasslessLinkOnAMovingJoint) {
  expect_parts(urdf_error(robot(world_and_a + "<link name=\"b\"/>\n" + joint("j", "continuous", "world", "a") +
                                joint("k", "continuous", "a", "b"))),
               {"t.urdf:4:", "link 'b' has no mass", "continuous joint 'k'"});
}

// urdfdom accepts it (the last joint read wins); the reader does not.
TEST(UrdfErrors, LinkWithTwoParents) {
  expect_parts(urdf_error(robot(world_and_a + link("b") + joint("j", "continuous", "world", "a") +
                                joint("k", "continuous", "world", "b") + joint("l", "continuous", "a", "b"))),
               {"t.urdf:7:", "joint 'l'", "link 'b' is already the child of joint 'k'", "<loop_joint>"});
}

// Links on a cycle of joints apart from the root have a parent each, so urdfdom keeps the file;
// the reader stopped on them with "map::at" and no line. A joint of a link to itself is one too.
TEST(UrdfErrors, CycleApartFromTheRoot) {
  expect_parts(urdf_error(robot(world_and_a + link("b") + link("c") + joint("j", "continuous", "world", "a") +
                                joint("k", "continuous", "b", "c") + joint("l", "continuous", "c", "b"))),
               {"t.urdf:4:", "link 'b' hangs from a cycle of joints apart from the root", "<loop_joint>"});
  expect_parts(urdf_error(robot(world_and_a + link("b") + joint("j", "continuous", "world", "a") +
                                joint("k", "continuous", "b", "b"))),
               {"t.urdf:4:", "link 'b' hangs from a cycle of joints"});
}

TEST(UrdfErrors, WorldWithAnInertial) {
  expect_parts(urdf_error(robot("<link name=\"world\">\n<inertial><mass value=\"1\"/>"
                                "<inertia ixx=\"1\" iyy=\"1\" izz=\"1\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n" +
                                link("a") + joint("j", "continuous", "world", "a"))),
               {"t.urdf:3:", "link 'world' is the ground"});
}

TEST(UrdfErrors, MalformedLoopJoint) {
  const std::string tree = world_and_a + joint("j", "continuous", "world", "a");  // lines 2-4
  const auto loop = [&](const std::string& attributes, const std::string& inside) {
    return urdf_error(robot(tree + "<loop_joint " + attributes + ">\n" + inside + "</loop_joint>\n"));
  };
  const std::string links = "<parent link=\"a\"/><child link=\"world\"/>\n";
  expect_parts(loop("name=\"c\" type=\"revolute\" kind=\"x\"", links), {"t.urdf:5:", "unknown attribute 'kind' of <loop_joint>"});
  expect_parts(loop("name=\"c\" type=\"revolute\"", links + "<limit lower=\"0\"/>\n"), {"t.urdf:7:", "loop_joint 'c'", "unknown element <limit>"});
  expect_parts(loop("name=\"c\" type=\"revolute\"", "<parent link=\"a\"/>\n"), {"t.urdf:5:", "missing <child"});
  expect_parts(loop("type=\"revolute\"", links), {"t.urdf:5:", "needs a 'name' attribute"});
  expect_parts(loop("name=\"c\" type=\"spherical\"", links + "<axis xyz=\"0 0 1\"/>\n"), {"t.urdf:7:", "<axis> does not apply to a spherical joint"});
  expect_parts(loop("name=\"c\" type=\"revolute\"", links + "<origin xyz=\"1 x 0\"/>\n"), {"t.urdf:7:", "'xyz' of <origin> has 'x', not a finite number"});
  expect_parts(loop("name=\"c\" type=\"revolute\"", links + "<origin xyz=\"1 0\"/>\n"), {"t.urdf:7:", "must have 3 numbers"});
  expect_parts(loop("name=\"j\" type=\"revolute\"", links), {"t.urdf:5:", "loop_joint 'j': another joint has that name"});
  expect_parts(loop("name=\"c\" type=\"spherical\"", "<link1 link=\"a\"/>\n<link1 link=\"world\"/>\n"), {"t.urdf:7:", "more than one <link1>"});
  expect_parts(loop("name=\"c\" type=\"spherical\"", "<link1 link=\"a\"/><link2 link=\"world\"/>\n<origin xyz=\"1 0 0\"/>\n"),
               {"t.urdf:7:", "<origin> cannot be mixed with <link1>/<link2>"});
}

TEST(UrdfErrors, NegativeDamping) {
  expect_parts(urdf_error(robot(world_and_a + "<joint name=\"j\" type=\"continuous\"><parent link=\"world\"/><child link=\"a\"/>\n"
                                              "<dynamics damping=\"-1\"/></joint>\n")),
               {"t.urdf:5:", "joint 'j'", "damping must not be negative"});
}

// A negative <limit effort> was dropped (the joint lost the limit the file asked for) and
// negative visual sizes were kept, so that `convert` wrote a model file it then refused.
TEST(UrdfErrors, NegativeEffortAndVisualSizes) {
  expect_parts(urdf_error(robot(world_and_a + "<joint name=\"j\" type=\"revolute\"><parent link=\"world\"/><child link=\"a\"/>\n"
                                              "<limit effort=\"-5\" velocity=\"1\" lower=\"0\" upper=\"1\"/></joint>\n")),
               {"t.urdf:5:", "joint 'j'", "<limit effort> must not be negative, got -5"});
  const auto with_visual = [](const std::string& geometry) {
    return robot("<link name=\"world\"/>\n<link name=\"a\">\n<inertial><mass value=\"1\"/>"
                 "<inertia ixx=\"1\" iyy=\"1\" izz=\"1\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial>\n"
                 "<visual><geometry>" + geometry + "</geometry></visual>\n</link>\n" +
                 "<joint name=\"j\" type=\"continuous\"><parent link=\"world\"/><child link=\"a\"/></joint>\n");
  };
  EXPECT_EQ(urdf_error(with_visual("<box size=\"0.1 0.2 0.3\"/>")), "");
  expect_parts(urdf_error(with_visual("<box size=\"0.1 -0.2 0.3\"/>")), {"t.urdf:5:", "link 'a'", "box size must be positive, got -0.2"});
  expect_parts(urdf_error(with_visual("<sphere radius=\"-1\"/>")), {"t.urdf:5:", "sphere radius must be positive"});
  expect_parts(urdf_error(with_visual("<cylinder radius=\"0.1\" length=\"0\"/>")), {"t.urdf:5:", "cylinder length must be positive"});
}

TEST(UrdfErrors, ModelBuildNamesTheElementLine) {
  // A universal loop joint with parallel axes passes the reader; Model::build reports it at its line.
  try {
    Model::build(parse_urdf(robot(world_and_a + joint("j", "continuous", "world", "a") +
                                  "<loop_joint name=\"c\" type=\"universal\"><parent link=\"a\"/><child link=\"world\"/>"
                                  "<axis xyz=\"0 0 1\"/><axis2 xyz=\"0 0 1\"/></loop_joint>\n"),
                            "t.urdf"));
    FAIL() << "no ModelError";
  } catch (const ModelError& e) {
    expect_parts(e.what(), {"t.urdf:5:", "'c'", "perpendicular"});
  }
}

TEST(UrdfErrors, FileThatCannotBeRead) {
  expect_parts([] {
    try {
      load_mechanism("/nonexistent/robot.URDF");
    } catch (const ModelError& e) {
      return std::string(e.what());
    }
    return std::string();
  }(), {"cannot open model file '/nonexistent/robot.URDF'"});
}

// ---------------------------------------------------------------------------------------------
// The CLI takes URDF files as it takes YAML

TEST(UrdfCli, InfoSimulateAndConvert) {
  namespace fs = std::filesystem;
  const CliResult info = run_cli("info --json " + robots_dir + "delta.urdf");
  ASSERT_EQ(info.status, 0) << info.output;
  const auto j = nlohmann::json::parse(info.output);
  EXPECT_EQ(j["nv"], 21);
  EXPECT_EQ(j["dof_rank"], 3);
  EXPECT_EQ(j["loop_joints"].size(), 6u);

  const fs::path csv = fs::temp_directory_path() / "loopdyn_test_urdf_stewart.csv";
  const CliResult sim = run_cli("simulate " + robots_dir + "stewart.urdf --t-end 0.2 --out " + csv.string());
  ASSERT_EQ(sim.status, 0) << sim.output;
  EXPECT_EQ(loopdyn::test::read_cli_csv(csv.string()).run.rows.size(), 21u);  // rows at 0, 0.01, ..., 0.2

  const fs::path yaml = fs::temp_directory_path() / "loopdyn_test_urdf_fourbar.yaml";
  const CliResult convert = run_cli("convert " + robots_dir + "fourbar.urdf --out " + yaml.string());
  ASSERT_EQ(convert.status, 0) << convert.output;
  expect_same(load_urdf(robots_dir + "fourbar.urdf"), load_mechanism(yaml.string()));
}

TEST(UrdfCli, ElementsThatAreNotReadArePrintedAsNotes) {
  const std::filesystem::path file = std::filesystem::temp_directory_path() / "loopdyn_test_urdf_gazebo.urdf";
  std::ofstream(file) << robot(world_and_a + joint("j", "continuous", "world", "a") + "<gazebo/>\n");
  const CliResult info = run_cli("info " + file.string());
  ASSERT_EQ(info.status, 0) << info.output;
  EXPECT_NE(info.output.find("loopdyn: note: " + file.string() + ":5: <gazebo> is not read"), std::string::npos)
      << info.output;
}

TEST(UrdfCli, BadFileFailsWithOneLineNamingItsLine) {
  const std::filesystem::path bad = std::filesystem::temp_directory_path() / "loopdyn_test_urdf_bad.urdf";
  std::ofstream(bad) << robot(world_and_a + joint("j", "continuous", "world", "nope"));
  test::expect_one_line_error(run_cli("info " + bad.string()), bad.string() + ":4: urdfdom");
}

}  // namespace
