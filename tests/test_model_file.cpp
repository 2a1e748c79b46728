// Model file reader (src/io/model_file.cpp): bundled models, round trip of every field, and one
// test per class of bad input (loader errors and, end to end, Model::build errors). Messages are
// checked for the file name, the line and the key words of the problem, never as full strings.
// Writer: parse_mechanism(write_mechanism(m)) == m for the bundled models and the generators.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <string>
#include <tuple>

#include "loopdyn/mechanisms/generators.hpp"
#include "loopdyn/io/model_file.hpp"
#include "loopdyn/loops/loop_structure.hpp"
#include "loopdyn/core/model.hpp"
#include "mechanism_compare.hpp"
#include "test_support.hpp"

namespace {

using loopdyn::JointType;
using loopdyn::Mat3;
using loopdyn::Mechanism;
using loopdyn::ModelError;
using loopdyn::Vec3;
using loopdyn::test::expect_same;

const std::string models_dir = std::string(LOOPDYN_SOURCE_DIR) + "/models/";

using loopdyn::test::error_of;

std::string parse_error(const std::string& text) {
  return error_of([&] { loopdyn::parse_mechanism(text, "t.yaml"); });
}
std::string build_error(const std::string& text) {
  return error_of([&] { loopdyn::Model::build(loopdyn::parse_mechanism(text, "t.yaml")); });
}

/// Every part must occur in the message.
void expect_parts(const std::string& message, std::initializer_list<std::string> parts) {
  EXPECT_FALSE(message.empty()) << "no ModelError was thrown";
  for (const auto& p : parts) EXPECT_NE(message.find(p), std::string::npos) << "'" << p << "' not in: " << message;
}

Mat3 rot_x(double a) {
  return (Mat3() << 1, 0, 0, 0, std::cos(a), -std::sin(a), 0, std::sin(a), std::cos(a)).finished();
}
Mat3 rot_y(double a) {
  return (Mat3() << std::cos(a), 0, std::sin(a), 0, 1, 0, -std::sin(a), 0, std::cos(a)).finished();
}
Mat3 rot_z(double a) {
  return (Mat3() << std::cos(a), -std::sin(a), 0, std::sin(a), std::cos(a), 0, 0, 0, 1).finished();
}

template <class T>
int count_forces(const Mechanism& m) {
  int n = 0;
  for (const auto& f : m.forces) n += std::holds_alternative<T>(f.element) ? 1 : 0;
  return n;
}

// ---------------------------------------------------------------------------------------------
// Bundled models

TEST(ModelFileBundled, DoublePendulum) {
  const Mechanism m = loopdyn::load_mechanism(models_dir + "double_pendulum.yaml");
  EXPECT_EQ(m.name, "double_pendulum");
  ASSERT_EQ(m.bodies.size(), 2u);
  ASSERT_EQ(m.joints.size(), 2u);
  EXPECT_EQ(m.markers.size(), 2u);
  EXPECT_EQ(m.forces.size(), 2u);
  EXPECT_TRUE(m.gravity.isApprox(Vec3(0, -9.81, 0)));
  // Paper data: m1 = 5, m2 = 7, J1 = 10, J2 = 20, theta1 = 0.524, theta2 = 0.785 (absolute).
  EXPECT_DOUBLE_EQ(m.bodies[0].mass, 5.0);
  EXPECT_DOUBLE_EQ(m.bodies[1].mass, 7.0);
  EXPECT_DOUBLE_EQ(m.bodies[0].inertia(2, 2), 10.0);
  EXPECT_DOUBLE_EQ(m.bodies[1].inertia(2, 2), 20.0);
  for (const auto& j : m.joints) EXPECT_EQ(j.type, JointType::revolute);
  EXPECT_NEAR(m.joints[0].q.at(0), 0.524, 1e-12);
  EXPECT_NEAR(m.joints[0].q.at(0) + m.joints[1].q.at(0), 0.785, 1e-12);
  EXPECT_EQ(count_forces<loopdyn::BodyTorqueSpec>(m), 1);
  EXPECT_EQ(count_forces<loopdyn::BodyForceSpec>(m), 1);
  EXPECT_NE(m.bodies[0].where.find("double_pendulum.yaml:"), std::string::npos);

  const loopdyn::Model model = loopdyn::Model::build(m);
  EXPECT_EQ(model.nq, 2);
  EXPECT_EQ(model.nv, 2);
  EXPECT_FALSE(model.has_loops());
}

TEST(ModelFileBundled, Chain3dUsesEveryJointAndForceType) {
  const Mechanism m = loopdyn::load_mechanism(models_dir + "chain3d_all_joints.yaml");
  EXPECT_EQ(m.bodies.size(), 8u);
  ASSERT_EQ(m.joints.size(), 8u);
  EXPECT_GE(m.markers.size(), 1u);
  for (JointType t : {JointType::revolute, JointType::prismatic, JointType::cylindrical, JointType::universal,
                      JointType::spherical, JointType::planar, JointType::free, JointType::fixed}) {
    int n = 0;
    for (const auto& j : m.joints) n += j.type == t ? 1 : 0;
    EXPECT_GE(n, 1) << loopdyn::to_string(t);
  }
  EXPECT_EQ(m.forces.size(), 5u);
  EXPECT_EQ(count_forces<loopdyn::JointSpringDamperSpec>(m), 1);
  EXPECT_EQ(count_forces<loopdyn::PointSpringDamperSpec>(m), 1);
  EXPECT_EQ(count_forces<loopdyn::JointForceSpec>(m), 1);
  EXPECT_EQ(count_forces<loopdyn::BodyForceSpec>(m), 1);
  EXPECT_EQ(count_forces<loopdyn::BodyTorqueSpec>(m), 1);
  int with_products = 0;
  for (const auto& b : m.bodies) with_products += b.inertia(0, 1) != 0.0 ? 1 : 0;
  EXPECT_GE(with_products, 4);

  const loopdyn::Model model = loopdyn::Model::build(m);
  EXPECT_EQ(model.nbodies, 8);
  EXPECT_EQ(model.nq, 1 + 1 + 2 + 2 + 4 + 3 + 7 + 0);
  EXPECT_EQ(model.nv, 1 + 1 + 2 + 2 + 3 + 3 + 6 + 0);
  EXPECT_FALSE(model.has_loops());
  EXPECT_GT(model.u0.norm(), 0.0);
}

TEST(ModelFileBundled, FreeTumblingBody) {
  const Mechanism m = loopdyn::load_mechanism(models_dir + "free_tumbling_body.yaml");
  ASSERT_EQ(m.bodies.size(), 1u);
  ASSERT_EQ(m.joints.size(), 1u);
  EXPECT_EQ(m.markers.size(), 1u);
  EXPECT_TRUE(m.forces.empty());
  EXPECT_EQ(m.gravity, Vec3::Zero());
  EXPECT_EQ(m.joints[0].type, JointType::free);
  EXPECT_EQ(m.joints[0].parent, "ground");
  EXPECT_TRUE(m.bodies[0].inertia.isApprox(Vec3(1, 2, 3).asDiagonal().toDenseMatrix()));
  // Spin mostly about the intermediate axis (y), small perturbation about x and z.
  ASSERT_EQ(m.joints[0].u.size(), 6u);
  EXPECT_GT(std::abs(m.joints[0].u[4]), 50.0 * std::abs(m.joints[0].u[3]));
  EXPECT_GT(std::abs(m.joints[0].u[4]), 50.0 * std::abs(m.joints[0].u[5]));
  EXPECT_NE(m.joints[0].u[3], 0.0);

  const loopdyn::Model model = loopdyn::Model::build(m);
  EXPECT_EQ(model.nq, 7);
  EXPECT_EQ(model.nv, 6);
}

TEST(ModelFileBundled, DocumentationExampleParsesAndBuilds) {
  const std::string doc_path = std::string(LOOPDYN_SOURCE_DIR) + "/docs/model-format.md";
  std::ifstream in(doc_path);
  ASSERT_TRUE(in) << doc_path;
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string fence = "```yaml\n";
  const auto begin = doc.find(fence);
  ASSERT_NE(begin, std::string::npos);
  const auto end = doc.find("```", begin + fence.size());
  ASSERT_NE(end, std::string::npos);
  const Mechanism m =
      loopdyn::parse_mechanism(doc.substr(begin + fence.size(), end - begin - fence.size()), "model-format.md");
  EXPECT_EQ(m.name, "four_bar");
  EXPECT_EQ(m.forces.size(), 5u);
  const loopdyn::Model model = loopdyn::Model::build(m);
  EXPECT_EQ(model.nbodies, 3);
  ASSERT_EQ(model.loop_joints.size(), 1u);
  EXPECT_EQ(model.loop_joints[0].name, "closure");
}

TEST(ModelFileBundled, DocumentationCouplingExampleParses) {
  const std::string doc_path = std::string(LOOPDYN_SOURCE_DIR) + "/docs/model-format.md";
  std::ifstream in(doc_path);
  ASSERT_TRUE(in) << doc_path;
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string fence = "```yaml\nconstraints:";
  const auto begin = doc.find(fence);
  ASSERT_NE(begin, std::string::npos);
  const auto text_begin = begin + std::string("```yaml\n").size();
  const auto end = doc.find("```", text_begin);
  ASSERT_NE(end, std::string::npos);
  const Mechanism m = loopdyn::parse_mechanism(doc.substr(text_begin, end - text_begin), "model-format.md");
  ASSERT_EQ(m.couplings.size(), 2u);
  EXPECT_EQ(m.couplings[0].name, "mesh");
  ASSERT_EQ(m.couplings[0].terms.size(), 2u);
  EXPECT_EQ(m.couplings[0].terms[0].coefficient, -2.0);
  EXPECT_EQ(m.couplings[0].terms[1].coefficient, -1.0);
  EXPECT_EQ(m.couplings[0].value, -0.1);
  EXPECT_EQ(m.couplings[1].terms.size(), 3u);
}

// ---------------------------------------------------------------------------------------------
// Round trip of every field type

const std::string full_model = R"yaml(name: roundtrip
gravity: [0.5, -1.0, -9.0]
bodies:
  - name: a
    mass: 2.0
    com: [0.1, 0.2, 0.3]
    inertia: [1.0, 2.0, 2.5]
  - name: b
    mass: 1.5
    inertia: [1.0, 2.0, 2.5, 0.1, -0.2, 0.3]
    visuals:
      - {shape: box, size: [0.1, 0.2, 0.3], origin: {xyz: [0, 0, 0.5], rpy: [0.1, 0, 0]}, rgba: [1, 0, 0, 0.5]}
      - {shape: sphere, radius: 0.05}
      - {shape: cylinder, radius: 0.02, length: 1}
      - {shape: capsule, radius: 0.03, length: 0.4}
      - {shape: mesh, file: meshes/link.stl, scale: [0.001, 0.001, 0.001]}
joints:
  - name: j1
    type: revolute
    parent: ground
    child: a
    parent_frame: {xyz: [1, 2, 3], rpy: [0.1, 0.2, 0.3]}
    child_frame:
      xyz: [0, 0, -0.5]
      rpy: [0.0, 0.0, 1.5707963267948966]
    axis: [0, 2, 0]
    q: 0.25
    u: -1.5
  - name: j2
    type: universal
    parent: a
    child: b
    axis: [1, 0, 0]
    axis2: [0, 0, 1]
    q: [0.1, 0.2]
    u: [0.3, 0.4]
  - name: j3
    type: spherical
    parent: b
    child: ground
    cut: true
    q: [1, 0, 0, 0]
markers:
  - name: m1
    body: b
    xyz: [0.1, 0.2, 0.3]
  - name: origin
    body: a
forces:
  - type: joint_spring_damper
    joint: j1
    stiffness: 10
    damping: 0.5
    rest: 0.1
  - type: point_spring_damper
    body1: b
    point1: [0, 0, 0.1]
    body2: ground
    point2: [1, 0, 0]
    stiffness: 20
    damping: 1
    rest_length: 0.4
  - type: joint_force
    joint: j2
    value: [1.0, -2.0]
  - type: joint_force
    joint: j1
    value: 3.0
  - type: body_force
    body: a
    point: [0.5, 0, 0]
    force: [0, 0, 5]
  - type: body_torque
    body: b
    torque: [0, 1, 0]
)yaml";

TEST(ModelFileRoundTrip, TopLevelAndBodies) {
  const Mechanism m = loopdyn::parse_mechanism(full_model, "t.yaml");
  EXPECT_EQ(m.name, "roundtrip");
  EXPECT_EQ(m.gravity, Vec3(0.5, -1.0, -9.0));
  ASSERT_EQ(m.bodies.size(), 2u);
  const auto& a = m.bodies[0];
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(a.mass, 2.0);
  EXPECT_EQ(a.com, Vec3(0.1, 0.2, 0.3));
  EXPECT_EQ(a.inertia, Vec3(1.0, 2.0, 2.5).asDiagonal().toDenseMatrix());
  EXPECT_EQ(a.where, "t.yaml:4");
  const auto& b = m.bodies[1];
  EXPECT_EQ(b.com, Vec3::Zero());  // default
  Mat3 Ib;
  Ib << 1.0, 0.1, -0.2, 0.1, 2.0, 0.3, -0.2, 0.3, 2.5;  // plain tensor components
  EXPECT_EQ(b.inertia, Ib);
  EXPECT_EQ(b.where, "t.yaml:8");
  EXPECT_TRUE(a.visuals.empty());
  ASSERT_EQ(b.visuals.size(), 5u);
  using Shape = loopdyn::VisualSpec::Shape;
  EXPECT_EQ(b.visuals[0].shape, Shape::box);
  EXPECT_EQ(b.visuals[0].size, Vec3(0.1, 0.2, 0.3));
  EXPECT_EQ(b.visuals[0].origin.p, Vec3(0, 0, 0.5));
  EXPECT_NEAR(b.visuals[0].origin.R(2, 1), std::sin(0.1), 1e-15);
  EXPECT_EQ(b.visuals[0].rgba, (std::array<double, 4>{1, 0, 0, 0.5}));
  EXPECT_EQ(b.visuals[1].radius, 0.05);
  EXPECT_EQ(b.visuals[1].rgba, loopdyn::VisualSpec{}.rgba);  // default colour
  EXPECT_EQ(b.visuals[2].length, 1.0);
  EXPECT_EQ(b.visuals[3].shape, Shape::capsule);
  EXPECT_EQ(b.visuals[4].file, "meshes/link.stl");
  EXPECT_EQ(b.visuals[4].scale, Vec3::Constant(0.001));
}

TEST(ModelFileRoundTrip, Joints) {
  const Mechanism m = loopdyn::parse_mechanism(full_model, "t.yaml");
  ASSERT_EQ(m.joints.size(), 3u);
  const auto& j1 = m.joints[0];
  EXPECT_EQ(j1.name, "j1");
  EXPECT_EQ(j1.type, JointType::revolute);
  EXPECT_EQ(j1.parent, "ground");
  EXPECT_EQ(j1.child, "a");
  EXPECT_EQ(j1.parent_frame.p, Vec3(1, 2, 3));
  // URDF rpy: R = Rz(yaw) Ry(pitch) Rx(roll), built here from elementary rotations.
  EXPECT_TRUE(j1.parent_frame.R.isApprox(rot_z(0.3) * rot_y(0.2) * rot_x(0.1), 1e-14));
  EXPECT_EQ(j1.child_frame.p, Vec3(0, 0, -0.5));
  EXPECT_TRUE((j1.child_frame.R * Vec3::UnitX()).isApprox(Vec3::UnitY(), 1e-14));  // yaw 90 degrees
  EXPECT_EQ(j1.axis, Vec3(0, 2, 0));           // stored as given; Model::build normalizes
  EXPECT_EQ(j1.q, std::vector<double>{0.25});  // scalar accepted for 1-coordinate joints
  EXPECT_EQ(j1.u, std::vector<double>{-1.5});
  EXPECT_FALSE(j1.cut);
  EXPECT_EQ(j1.where, "t.yaml:18");

  const auto& j2 = m.joints[1];
  EXPECT_EQ(j2.type, JointType::universal);
  EXPECT_EQ(j2.axis, Vec3::UnitX());
  EXPECT_EQ(j2.axis2, Vec3::UnitZ());
  EXPECT_EQ(j2.q, (std::vector<double>{0.1, 0.2}));
  EXPECT_EQ(j2.u, (std::vector<double>{0.3, 0.4}));
  EXPECT_TRUE(j2.parent_frame.R.isIdentity(0.0));  // frames default to identity
  EXPECT_TRUE(j2.child_frame.p.isZero(0.0));

  const auto& j3 = m.joints[2];
  EXPECT_EQ(j3.type, JointType::spherical);
  EXPECT_EQ(j3.child, "ground");
  EXPECT_TRUE(j3.cut);
  EXPECT_EQ(j3.q, (std::vector<double>{1, 0, 0, 0}));
  EXPECT_TRUE(j3.u.empty());  // default: zero speeds
}

TEST(ModelFileRoundTrip, MarkersAndForces) {
  const Mechanism m = loopdyn::parse_mechanism(full_model, "t.yaml");
  ASSERT_EQ(m.markers.size(), 2u);
  EXPECT_EQ(m.markers[0].name, "m1");
  EXPECT_EQ(m.markers[0].body, "b");
  EXPECT_EQ(m.markers[0].point, Vec3(0.1, 0.2, 0.3));
  EXPECT_EQ(m.markers[0].where, "t.yaml:44");
  EXPECT_EQ(m.markers[1].point, Vec3::Zero());

  ASSERT_EQ(m.forces.size(), 6u);
  const auto& sd = std::get<loopdyn::JointSpringDamperSpec>(m.forces[0].element);
  EXPECT_EQ(sd.joint, "j1");
  EXPECT_EQ(sd.stiffness, 10.0);
  EXPECT_EQ(sd.damping, 0.5);
  EXPECT_EQ(sd.rest, 0.1);
  EXPECT_EQ(m.forces[0].where, "t.yaml:50");

  const auto& psd = std::get<loopdyn::PointSpringDamperSpec>(m.forces[1].element);
  EXPECT_EQ(psd.body1, "b");
  EXPECT_EQ(psd.point1, Vec3(0, 0, 0.1));
  EXPECT_EQ(psd.body2, "ground");
  EXPECT_EQ(psd.point2, Vec3(1, 0, 0));
  EXPECT_EQ(psd.stiffness, 20.0);
  EXPECT_EQ(psd.damping, 1.0);
  EXPECT_EQ(psd.rest_length, 0.4);

  const auto& jf = std::get<loopdyn::JointForceSpec>(m.forces[2].element);
  EXPECT_EQ(jf.joint, "j2");
  EXPECT_EQ(jf.value, (std::vector<double>{1.0, -2.0}));
  EXPECT_EQ(std::get<loopdyn::JointForceSpec>(m.forces[3].element).value, std::vector<double>{3.0});

  const auto& bf = std::get<loopdyn::BodyForceSpec>(m.forces[4].element);
  EXPECT_EQ(bf.body, "a");
  EXPECT_EQ(bf.point, Vec3(0.5, 0, 0));
  EXPECT_EQ(bf.force, Vec3(0, 0, 5));

  const auto& bt = std::get<loopdyn::BodyTorqueSpec>(m.forces[5].element);
  EXPECT_EQ(bt.body, "b");
  EXPECT_EQ(bt.torque, Vec3(0, 1, 0));
}

// Couplings of joint coordinates (`constraints:`): gears and linear couplings.
const std::string coupled_model = R"yaml(name: couplings
constraints:
  - type: gear
    name: mesh
    joint1: w1
    joint2: w2
    ratio: -2.0
  - {type: gear, name: shifted, joint1: a, joint2: b, ratio: 0.5, offset: 0.25}
  - type: linear
    name: diff
    terms:
      - {joint: a, coefficient: 1.0}
      - {joint: b, coefficient: -3}
      - joint: c
        coefficient: 0.5
    value: 1.5
  - type: linear
    name: lock
    terms: [{joint: w1, coefficient: 2}]
)yaml";

TEST(ModelFileRoundTrip, Couplings) {
  const Mechanism m = loopdyn::parse_mechanism(coupled_model, "t.yaml");
  ASSERT_EQ(m.couplings.size(), 4u);
  using Term = loopdyn::CouplingSpec::Term;
  const auto terms_are = [](const loopdyn::CouplingSpec& c, std::initializer_list<Term> expected) {
    ASSERT_EQ(c.terms.size(), expected.size()) << c.name;
    std::size_t k = 0;
    for (const Term& e : expected) {
      EXPECT_EQ(c.terms[k].joint, e.joint) << c.name << " term " << k;
      EXPECT_EQ(c.terms[k].coefficient, e.coefficient) << c.name << " term " << k;
      ++k;
    }
  };
  // Gear q(w2) = -2 q(w1): -2 q(w1) - q(w2) = 0.
  const auto& mesh = m.couplings[0];
  EXPECT_EQ(mesh.name, "mesh");
  terms_are(mesh, {{"w1", -2.0}, {"w2", -1.0}});
  EXPECT_EQ(mesh.value, 0.0);
  EXPECT_EQ(mesh.where, "t.yaml:3");
  // Gear with offset q(b) = 0.5 q(a) + 0.25: 0.5 q(a) - q(b) = -0.25.
  const auto& shifted = m.couplings[1];
  EXPECT_EQ(shifted.name, "shifted");
  terms_are(shifted, {{"a", 0.5}, {"b", -1.0}});
  EXPECT_EQ(shifted.value, -0.25);
  EXPECT_EQ(shifted.where, "t.yaml:8");
  const auto& diff = m.couplings[2];
  EXPECT_EQ(diff.name, "diff");
  terms_are(diff, {{"a", 1.0}, {"b", -3.0}, {"c", 0.5}});
  EXPECT_EQ(diff.value, 1.5);
  EXPECT_EQ(diff.where, "t.yaml:9");
  const auto& lock = m.couplings[3];
  terms_are(lock, {{"w1", 2.0}});
  EXPECT_EQ(lock.value, 0.0);  // default
}

TEST(ModelFileRoundTrip, NoCouplingsByDefault) {
  EXPECT_TRUE(loopdyn::parse_mechanism(full_model, "t.yaml").couplings.empty());
  EXPECT_TRUE(loopdyn::parse_mechanism("name: x\nconstraints:\n", "t.yaml").couplings.empty());
  EXPECT_TRUE(loopdyn::parse_mechanism("name: x\nconstraints: []\n", "t.yaml").couplings.empty());
}

TEST(ModelFileRoundTrip, DefaultsForAMinimalFile) {
  const Mechanism m = loopdyn::parse_mechanism(
      "bodies:\n  - {name: a, mass: 1, inertia: [1, 1, 1]}\n"
      "joints:\n  - {name: j, type: fixed, parent: ground, child: a}\n",
      "t.yaml");
  EXPECT_EQ(m.name, "mechanism");
  EXPECT_EQ(m.gravity, Vec3(0, 0, -9.81));
  EXPECT_TRUE(m.markers.empty());
  EXPECT_TRUE(m.forces.empty());
  EXPECT_TRUE(m.joints[0].q.empty());
  EXPECT_EQ(m.joints[0].where, "t.yaml:4");
}

TEST(ModelFileRoundTrip, LoadMechanismUsesThePathAsSource) {
  const std::string path = models_dir + "free_tumbling_body.yaml";
  const Mechanism m = loopdyn::load_mechanism(path);
  EXPECT_EQ(m.bodies[0].where.rfind(path + ":", 0), 0u) << m.bodies[0].where;
}

// ---------------------------------------------------------------------------------------------
// Loader errors: file name, line, problem

TEST(ModelFileErrors, MalformedYaml) {
  expect_parts(parse_error("name: x\nbodies:\n  - name: a\n    mass: [1, 2\n  - name: b\n"), {"t.yaml:", "YAML"});
  // A mapping key after a plain list item at the wrong indentation.
  expect_parts(parse_error("name: x\ngravity: [0, 0, 0]\n  bad: 1\n"), {"t.yaml:3:", "malformed YAML"});
}

// Flow collections nested past 1000 levels are refused before libyaml reads them: its scanner is
// quadratic in the nesting (100,000 levels took 20 s to the error). Brackets in quotes and
// comments are not nesting.
TEST(ModelFileErrors, DeepFlowNestingIsRefusedAtOnce) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  expect_parts(parse_error("name: x\nbodies: " + deep + "\n"),
               {"t.yaml:2:", "malformed YAML: flow collections ([...], {...}) nested more than 1000 deep"});
  const std::string hidden = std::string(2000, '[');
  const std::string ok = "name: \"" + hidden + "\"  # " + hidden + "\nbodies: [[{name: a, mass: 1, inertia: [1, 1, 1]}]]\n";
  expect_parts(parse_error(ok), {"t.yaml:2:", "body #1 must be a mapping"});  // read past the brackets
}

// The reader (libyaml into a compact tree, src/io/yaml_tree.cpp) takes what yaml-cpp took: anchors
// and aliases, quoted names, flow and block style, YAML's spellings of flags and numbers; a
// second document is refused (yaml-cpp read the first only: the second's keys went unchecked).
TEST(ModelFileReader, AnchorsQuotedNamesFlagsAndNumbers) {
  const loopdyn::Mechanism m = loopdyn::parse_mechanism(R"yaml(name: "x"
bodies:
  - {name: 'a', mass: +1.5e0, com: &offset [0, 0, .5], inertia: &rod [0.1, 0.1, 0.01]}
  - name: b
    mass: 2
    com: *offset
    inertia: *rod
joints:
  - {name: j1, type: revolute, parent: ground, child: a, independent: Yes}
  - {name: j2, type: revolute, parent: a, child: b, independent: off, q: [-.25]}
...
)yaml", "t.yaml");
  EXPECT_EQ(m.name, "x");
  ASSERT_EQ(m.bodies.size(), 2u);
  EXPECT_EQ(m.bodies[0].name, "a");
  EXPECT_EQ(m.bodies[0].mass, 1.5);
  EXPECT_EQ(m.bodies[1].com, loopdyn::Vec3(0, 0, 0.5));
  EXPECT_EQ(m.bodies[1].inertia(2, 2), 0.01);
  EXPECT_TRUE(m.joints[0].independent);
  EXPECT_FALSE(m.joints[1].independent);
  EXPECT_EQ(m.joints[1].q, std::vector<double>{-0.25});
  expect_parts(parse_error("name: x\nbodies:\n  - {name: a, mass: *nowhere}\n"), {"t.yaml:3:", "malformed YAML"});
  for (const auto& [second, line] : std::vector<std::pair<std::string, std::string>>{
           {"---\ngravity: [0, 0, 0]\n", "t.yaml:2:"}, {"...\n---\nmasss: 3\n", "t.yaml:3:"}, {"...\ngarbage: [\n", "t.yaml:"}})
    expect_parts(parse_error("name: x\n" + second), {line, "a second YAML document"});
  expect_parts(parse_error("name: x\nbodies:\n  - {name: a, mass: 0x10}\n"), {"t.yaml:3:", "must be a number, got '0x10'"});
  expect_parts(parse_error("name: x\nbodies:\n  - {name: a, mass: 1, com: [0, 0, .inf]}\n"),
               {"t.yaml:3:", "must be a finite number, got '.inf'"});
  // YAML 1.1's flags in lower case, Capitalized or UPPER CASE, and no other mix.
  const auto independent = [](const std::string& flag) {
    return loopdyn::parse_mechanism("joints:\n  - {name: j, type: revolute, parent: ground, child: a, independent: " +
                                        flag + "}\n",
                                    "t.yaml")
        .joints[0]
        .independent;
  };
  for (const std::string flag : {"true", "True", "TRUE", "yes", "Y", "on", "ON"}) EXPECT_TRUE(independent(flag)) << flag;
  for (const std::string flag : {"false", "False", "NO", "n", "Off", "OFF"}) EXPECT_FALSE(independent(flag)) << flag;
  for (const std::string flag : {"tRUE", "oN", "TRUe", "1"})
    expect_parts(parse_error("joints:\n  - {name: j, type: revolute, parent: ground, child: a, independent: " + flag + "}\n"),
                 {"t.yaml:2:", "'independent' of joint 'j' must be true or false"});
}

TEST(ModelFileErrors, EmptyFileOrNotAMapping) {
  expect_parts(parse_error(""), {"t.yaml:1:", "empty"});
  expect_parts(parse_error("- a\n- b\n"), {"t.yaml:1:", "mapping"});
}

TEST(ModelFileErrors, UnknownTopLevelKey) {
  expect_parts(parse_error("name: x\nbodys: []\n"),
               {"t.yaml:2:", "unknown key 'bodys'",
                "expected one of: name, gravity, bodies, joints, markers, forces, constraints"});
}

TEST(ModelFileErrors, MisspeltBodyKey) {
  expect_parts(parse_error("bodies:\n  - name: link1\n    masss: 1\n    inertia: [1, 1, 1]\n"),
               {"t.yaml:3:", "unknown key 'masss' in body 'link1'", "(expected one of: name, mass, com, inertia, visuals)"});
}

TEST(ModelFileErrors, MisspeltJointKey) {
  expect_parts(parse_error("joints:\n  - name: j\n    type: revolute\n    parnet: ground\n    child: a\n"),
               {"t.yaml:4:", "unknown key 'parnet' in joint 'j'", "parent"});
}

TEST(ModelFileErrors, MisspeltFrameKey) {
  expect_parts(parse_error("joints:\n  - name: j\n    type: revolute\n    parent: ground\n    child: a\n"
                           "    parent_frame: {xyz: [0, 0, 0], rpx: [0, 0, 0]}\n"),
               {"t.yaml:6:", "unknown key 'rpx'", "'parent_frame' of joint 'j'", "xyz, rpy"});
}

TEST(ModelFileErrors, MisspeltMarkerKey) {
  expect_parts(parse_error("markers:\n  - name: tip\n    body: a\n    xzy: [0, 0, 1]\n"),
               {"t.yaml:4:", "unknown key 'xzy' in marker 'tip'", "name, body, xyz"});
}

TEST(ModelFileErrors, MisspeltForceKey) {
  expect_parts(parse_error("forces:\n  - type: joint_spring_damper\n    joint: j\n    stifness: 3\n"),
               {"t.yaml:4:", "unknown key 'stifness'", "force #1 (joint_spring_damper)", "stiffness"});
  // A key of another force type is unknown too.
  expect_parts(
      parse_error("forces:\n  - type: body_torque\n    body: a\n    torque: [0, 0, 1]\n    point: [0, 0, 0]\n"),
      {"t.yaml:5:", "unknown key 'point'", "body_torque"});
}

TEST(ModelFileErrors, DuplicateKey) {
  expect_parts(parse_error("bodies:\n  - name: a\n    mass: 1\n    mass: 2\n    inertia: [1, 1, 1]\n"),
               {"t.yaml:4:", "duplicate key 'mass'", "body 'a'"});
}

TEST(ModelFileErrors, MissingRequiredKeys) {
  expect_parts(parse_error("bodies:\n  - name: a\n    inertia: [1, 1, 1]\n"),
               {"t.yaml:2:", "body 'a'", "missing required key 'mass'"});
  expect_parts(parse_error("bodies:\n  - name: a\n    mass: 1\n"), {"t.yaml:2:", "body 'a'", "'inertia'"});
  expect_parts(
      parse_error("bodies:\n  - {name: a, mass: 1, inertia: [1, 1, 1]}\n  - mass: 1\n    inertia: [1, 1, 1]\n"),
      {"t.yaml:3:", "body #2", "missing required key 'name'"});
  expect_parts(parse_error("joints:\n  - name: j\n    type: revolute\n    parent: ground\n"),
               {"t.yaml:2:", "joint 'j'", "missing required key 'child'"});
  expect_parts(parse_error("joints:\n  - name: j\n    parent: ground\n    child: a\n"), {"t.yaml:2:", "'type'"});
  expect_parts(parse_error("markers:\n  - name: m\n"), {"t.yaml:2:", "marker 'm'", "'body'"});
  expect_parts(parse_error("forces:\n  - joint: j\n"), {"t.yaml:2:", "force #1", "'type'"});
  expect_parts(parse_error("forces:\n  - type: body_force\n    body: a\n"), {"t.yaml:2:", "body_force", "'force'"});
}

TEST(ModelFileErrors, WrongVectorLength) {
  expect_parts(parse_error("bodies:\n  - name: b\n    mass: 1\n    com: [0, 0]\n    inertia: [1, 1, 1]\n"),
               {"t.yaml:4:", "'com' of body 'b' must have 3 numbers", "got 2"});
  expect_parts(parse_error("bodies:\n  - name: b\n    mass: 1\n    inertia: [1, 1, 1, 0]\n"),
               {"t.yaml:4:", "'inertia' of body 'b'", "3 numbers", "6 numbers", "3 rows of 3", "got 4"});
  expect_parts(parse_error("gravity: [0, -9.81]\n"), {"t.yaml:1:", "'gravity'", "3 numbers", "got 2"});
  expect_parts(parse_error("markers:\n  - name: m\n    body: a\n    xyz: [1, 2, 3, 4]\n"),
               {"t.yaml:4:", "'xyz' of marker 'm'", "got 4"});
}

TEST(ModelFileErrors, WrongCoordinateCount) {
  const std::string head = "joints:\n  - name: s\n    type: spherical\n    parent: ground\n    child: a\n";
  expect_parts(parse_error(head + "    q: [1, 0, 0]\n"), {"t.yaml:6:", "'q' of joint 's'", "4 numbers", "got 3"});
  expect_parts(parse_error(head + "    q: 1\n"),
               {"t.yaml:6:", "'q' of joint 's'", "list of 4 numbers", "single value"});
  expect_parts(parse_error(head + "    u: [1, 0, 0, 0]\n"), {"t.yaml:6:", "'u' of joint 's'", "3 numbers", "got 4"});
  const std::string free = "joints:\n  - name: f\n    type: free\n    parent: ground\n    child: a\n";
  expect_parts(parse_error(free + "    q: [0, 0, 0, 1, 0, 0]\n"),
               {"t.yaml:6:", "'q' of joint 'f'", "7 numbers", "got 6"});
  const std::string fixed = "joints:\n  - name: w\n    type: fixed\n    parent: ground\n    child: a\n";
  expect_parts(parse_error(fixed + "    q: [0]\n"), {"t.yaml:6:", "'q' of joint 'w'", "0 numbers", "got 1"});
}

TEST(ModelFileErrors, NonNumericValue) {
  expect_parts(parse_error("bodies:\n  - name: a\n    mass: heavy\n    inertia: [1, 1, 1]\n"),
               {"t.yaml:3:", "'mass' of body 'a' must be a number", "'heavy'"});
  expect_parts(parse_error("bodies:\n  - name: a\n    mass: 1\n    com: [0, x, 0]\n    inertia: [1, 1, 1]\n"),
               {"t.yaml:4:", "'com' of body 'a'", "element 2", "number", "'x'"});
  expect_parts(parse_error("bodies:\n  - name: a\n    mass:\n    inertia: [1, 1, 1]\n"),
               {"t.yaml:3:", "'mass' of body 'a'", "no value"});
  expect_parts(parse_error("bodies:\n  - name: a\n    mass: [1]\n    inertia: [1, 1, 1]\n"),
               {"t.yaml:3:", "'mass' of body 'a' must be a number", "list"});
  expect_parts(parse_error("bodies:\n  - name: a\n    mass: .nan\n    inertia: [1, 1, 1]\n"),
               {"t.yaml:3:", "'mass' of body 'a'", "finite"});
  expect_parts(
      parse_error("joints:\n  - name: j\n    type: revolute\n    parent: ground\n    child: a\n    cut: maybe\n"),
      {"t.yaml:6:", "'cut' of joint 'j'", "true or false"});
  expect_parts(parse_error("forces:\n  - type: joint_force\n    joint: j\n    value: [1, two]\n"),
               {"t.yaml:4:", "'value'", "'two'"});
  expect_parts(parse_error("joints:\n  - name: j\n    type: revolute\n    parent: [ground]\n    child: a\n"),
               {"t.yaml:4:", "'parent' of joint 'j'", "text"});
}

TEST(ModelFileErrors, WrongListShape) {
  expect_parts(parse_error("bodies:\n  name: a\n"), {"t.yaml:2:", "'bodies' must be a list"});
  expect_parts(parse_error("bodies:\n  - just_a_name\n"), {"t.yaml:2:", "body #1", "mapping"});
}

TEST(ModelFileErrors, UnknownJointType) {
  expect_parts(parse_error("joints:\n  - name: j\n    type: hinge\n    parent: ground\n    child: a\n"),
               {"t.yaml:3:", "unknown joint type 'hinge'", "joint 'j'", "revolute, prismatic"});
}

TEST(ModelFileErrors, BadVisuals) {
  const std::string body = "bodies:\n  - name: a\n    mass: 1\n    inertia: [1, 1, 1]\n    visuals:\n";
  expect_parts(parse_error(body + "      - {shape: cone, radius: 1}\n"),
               {"t.yaml:6:", "unknown shape 'cone'", "visual #1 of body 'a'", "box, sphere"});
  expect_parts(parse_error(body + "      - {shape: box, size: [1, 0, 1]}\n"),
               {"t.yaml:6:", "'size' of visual #1 of body 'a'", "positive"});
  expect_parts(parse_error(body + "      - {shape: sphere, radius: 1}\n      - {shape: cylinder, radius: 1}\n"),
               {"t.yaml:7:", "visual #2 of body 'a'", "missing required key 'length'"});
  expect_parts(parse_error(body + "      - {shape: sphere, radius: 1, size: [1, 1, 1]}\n"),
               {"t.yaml:6:", "unknown key 'size'", "radius"});
  expect_parts(parse_error(body + "      - {shape: sphere, radius: 1, rgba: [1, 2, 0, 1]}\n"),
               {"t.yaml:6:", "'rgba' of visual #1", "[0, 1]"});
  expect_parts(parse_error(body + "      shape: box\n"), {"t.yaml:6:", "'visuals' of body 'a'", "list"});
}

TEST(ModelFileErrors, UnknownForceType) {
  expect_parts(parse_error("forces:\n  - type: gravity_well\n    body: a\n"),
               {"t.yaml:2:", "unknown force type 'gravity_well'", "joint_spring_damper", "body_torque"});
}

TEST(ModelFileErrors, AxisOnAJointTypeWithoutOne) {
  expect_parts(parse_error("joints:\n  - name: j\n    type: revolute\n    parent: ground\n    child: a\n"
                           "    axis2: [0, 1, 0]\n"),
               {"t.yaml:6:", "'axis2'", "revolute joint 'j'", "universal"});
  expect_parts(parse_error("joints:\n  - name: s\n    type: spherical\n    parent: ground\n    child: a\n"
                           "    axis: [0, 0, 1]\n"),
               {"t.yaml:6:", "'axis'", "spherical joint 's'"});
}

TEST(ModelFileErrors, ConstraintKeys) {
  // Misspelt key, and a key of the other constraint type.
  expect_parts(parse_error("constraints:\n  - type: gear\n    name: g\n    joint1: a\n    joint2: b\n"
                           "    ration: 2\n"),
               {"t.yaml:6:", "unknown key 'ration'", "constraint 'g' (gear)", "joint1, joint2, ratio, offset"});
  expect_parts(parse_error("constraints:\n  - type: gear\n    name: g\n    joint1: a\n    joint2: b\n"
                           "    ratio: 2\n    value: 1\n"),
               {"t.yaml:7:", "unknown key 'value'", "constraint 'g' (gear)"});
  expect_parts(parse_error("constraints:\n  - type: linear\n    name: l\n    terms: [{joint: a, coefficient: 1}]\n"
                           "    offset: 1\n"),
               {"t.yaml:5:", "unknown key 'offset'", "constraint 'l' (linear)", "terms, value"});
  expect_parts(parse_error("constraints:\n  - type: linear\n    name: l\n    terms:\n"
                           "      - {joint: a, coeff: 1}\n"),
               {"t.yaml:5:", "unknown key 'coeff'", "term #1 of constraint 'l' (linear)", "joint, coefficient"});
  expect_parts(parse_error("constraints:\n  - type: gear\n    name: g\n    name: h\n    joint1: a\n"),
               {"t.yaml:4:", "duplicate key 'name'"});
}

TEST(ModelFileErrors, ConstraintMissingFields) {
  const std::string gear = "constraints:\n  - type: gear\n    name: g\n";
  expect_parts(parse_error(gear + "    joint2: b\n    ratio: 2\n"),
               {"t.yaml:2:", "constraint 'g' (gear)", "missing required key 'joint1'"});
  expect_parts(parse_error(gear + "    joint1: a\n    ratio: 2\n"),
               {"t.yaml:2:", "constraint 'g' (gear)", "missing required key 'joint2'"});
  expect_parts(parse_error(gear + "    joint1: a\n    joint2: b\n"),
               {"t.yaml:2:", "constraint 'g' (gear)", "missing required key 'ratio'"});
  expect_parts(parse_error("constraints:\n  - {type: gear, joint1: a, joint2: b, ratio: 2}\n"),
               {"t.yaml:2:", "constraint #1 (gear)", "missing required key 'name'"});
  expect_parts(parse_error("constraints:\n  - {name: g, joint1: a, joint2: b, ratio: 2}\n"),
               {"t.yaml:2:", "constraint 'g'", "missing required key 'type'"});
  expect_parts(parse_error("constraints:\n  - type: linear\n    name: l\n    value: 1\n"),
               {"t.yaml:2:", "constraint 'l' (linear)", "missing required key 'terms'"});
  expect_parts(parse_error("constraints:\n  - type: linear\n    name: l\n    terms:\n      - {coefficient: 1}\n"),
               {"t.yaml:5:", "term #1 of constraint 'l' (linear)", "missing required key 'joint'"});
  expect_parts(parse_error("constraints:\n  - type: linear\n    name: l\n    terms:\n      - {joint: a}\n"),
               {"t.yaml:5:", "term #1 of constraint 'l' (linear)", "missing required key 'coefficient'"});
}

TEST(ModelFileErrors, ConstraintUnknownType) {
  expect_parts(parse_error("constraints:\n  - type: belt\n    name: b\n    joint1: a\n"),
               {"t.yaml:2:", "unknown constraint type 'belt'", "constraint 'b'", "gear, linear"});
}

TEST(ModelFileErrors, ConstraintTermsShape) {
  const std::string head = "constraints:\n  - type: linear\n    name: l\n";
  expect_parts(parse_error(head + "    terms: []\n"), {"t.yaml:4:", "'terms' of constraint 'l' (linear)", "empty"});
  expect_parts(parse_error(head + "    terms:\n    value: 1\n"), {"t.yaml:4:", "'terms'", "no value"});
  expect_parts(parse_error(head + "    terms: {joint: a, coefficient: 1}\n"),
               {"t.yaml:4:", "'terms' of constraint 'l' (linear)", "list"});
  expect_parts(parse_error(head + "    terms: [a]\n"), {"t.yaml:4:", "term #1 of constraint 'l'", "mapping"});
}

TEST(ModelFileErrors, ConstraintValues) {
  expect_parts(parse_error("constraints:\n  - {type: gear, name: g, joint1: a, joint2: b, ratio: two}\n"),
               {"t.yaml:2:", "'ratio' of constraint 'g' (gear) must be a number", "'two'"});
  expect_parts(parse_error("constraints:\n  - {type: gear, name: g, joint1: a, joint2: b, ratio: 1, offset: .inf}\n"),
               {"t.yaml:2:", "'offset' of constraint 'g' (gear)", "finite"});
  expect_parts(parse_error("constraints:\n  - {type: gear, name: g, joint1: [a], joint2: b, ratio: 1}\n"),
               {"t.yaml:2:", "'joint1' of constraint 'g' (gear)", "text"});
  expect_parts(parse_error("constraints:\n  - type: linear\n    name: l\n    terms:\n"
                           "      - {joint: a, coefficient: 1}\n      - {joint: b, coefficient: [1]}\n"),
               {"t.yaml:6:", "'coefficient' of term #2 of constraint 'l' (linear)", "number"});
  expect_parts(parse_error("constraints:\n  - type: linear\n    name: l\n    terms: [{joint: a, coefficient: 1}]\n"
                           "    value: x\n"),
               {"t.yaml:5:", "'value' of constraint 'l' (linear)", "'x'"});
  expect_parts(parse_error("constraints:\n  type: gear\n"), {"t.yaml:2:", "'constraints' must be a list"});
  expect_parts(parse_error("constraints:\n  - gear\n"), {"t.yaml:2:", "constraint #1", "mapping"});
}

TEST(ModelFileErrors, NonexistentFile) {
  const std::string path = models_dir + "no_such_model.yaml";
  expect_parts(error_of([&] { loopdyn::load_mechanism(path); }), {"cannot open model file", "no_such_model.yaml"});
  expect_parts(error_of([&] { loopdyn::load_mechanism(models_dir); }), {"cannot open model file"});
}

// A file past the most the reader takes is refused as it is read (`loopdyn info /dev/zero` read
// until memory ran out); up to it, the text is the file's, byte for byte.
TEST(ModelFileErrors, FilesPastTheLargestAreRefusedAsTheyAreRead) {
  const std::string path = models_dir + "double_pendulum.yaml";
  const std::size_t size = std::filesystem::file_size(path);
  EXPECT_EQ(loopdyn::read_model_text(path, size).size(), size);
  expect_parts(error_of([&] { loopdyn::read_model_text(path, size - 1); }),
               {"model file '" + path + "' is longer than " + std::to_string(size - 1) + " bytes"});
}

// ---------------------------------------------------------------------------------------------
// Semantic errors, end to end through Model::build (messages name the file:line of the item)

const std::string two_links = R"yaml(bodies:
  - name: a
    mass: 1
    inertia: [0.1, 0.1, 0.1]
  - name: b
    mass: 1
    inertia: [0.1, 0.1, 0.1]
joints:
  - {name: j1, type: revolute, parent: ground, child: a}
  - {name: j2, type: revolute, parent: a, child: b}
)yaml";

/// `two_links` with the first occurrence of `from` replaced by `to`.
std::string two_links_with(const std::string& from, const std::string& to) {
  std::string text = two_links;
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(ModelFileBuild, ValidModelBuilds) { EXPECT_EQ(build_error(two_links), ""); }

TEST(ModelFileBuild, NonPositiveMass) {
  expect_parts(build_error(two_links_with("mass: 1", "mass: 0")), {"t.yaml:2", "body 'a'", "mass"});
  expect_parts(build_error(two_links_with("mass: 1", "mass: -2")), {"t.yaml:2", "body 'a'", "mass"});
}

TEST(ModelFileBuild, BadInertia) {
  // Not positive semi-definite (eigenvalues 3, -1, 1).
  expect_parts(build_error(two_links_with("[0.1, 0.1, 0.1]", "[1, 1, 1, 2, 0, 0]")),
               {"t.yaml:2", "body 'a'", "inertia"});
  // Negative principal moment.
  expect_parts(build_error(two_links_with("[0.1, 0.1, 0.1]", "[-1, 1, 1]")), {"t.yaml:2", "body 'a'", "inertia"});
  // Triangle inequality violated: Izz > Ixx + Iyy.
  expect_parts(build_error(two_links_with("[0.1, 0.1, 0.1]", "[1, 1, 3]")),
               {"t.yaml:2", "body 'a'", "inertia", "triangle"});
}

// The inertia as the matrix itself (three rows of three, as Drake and RBDL users write it): the
// same matrix as the 6-number form; a row of the wrong length names the row, a matrix that is not
// symmetric fails Model::build as any invalid inertia does.
TEST(ModelFileReader, InertiaAsAMatrix) {
  const auto inertia = [](const std::string& value) {
    return loopdyn::parse_mechanism("bodies:\n  - name: a\n    mass: 1\n    inertia: " + value + "\n", "t.yaml")
        .bodies[0]
        .inertia;
  };
  EXPECT_EQ(inertia("[[1.0, 0.1, -0.2], [0.1, 2.0, 0.3], [-0.2, 0.3, 2.5]]"),
            inertia("[1.0, 2.0, 2.5, 0.1, -0.2, 0.3]"));
  expect_parts(parse_error("bodies:\n  - name: a\n    mass: 1\n    inertia: [[1, 0, 0], [0, 1], [0, 0, 1]]\n"),
               {"t.yaml:4:", "'inertia' of body 'a' (element 2) must have 3 numbers (a row of the matrix), got 2"});
  expect_parts(parse_error("bodies:\n  - name: a\n    mass: 1\n    inertia: [[1, 0, 0], [0, 1, 0]]\n"),
               {"t.yaml:4:", "'inertia' of body 'a' as a matrix must have 3 rows of 3 numbers, got 2 rows"});
  expect_parts(build_error(two_links_with("[0.1, 0.1, 0.1]", "[[1, 0.1, 0], [0.2, 1, 0], [0, 0, 1]]")),
               {"t.yaml:2", "body 'a'", "inertia matrix is not symmetric"});
}

// A point mass off its joint's axis and a slender rod build; a point mass on the axis of the only
// joint that turns it (j1: b's turn about the same axis is j2's) leaves the mass matrix singular,
// which no method can integrate: refused at build, naming the joint and its line.
TEST(ModelFileBuild, PointMassAndSlenderRodAreAccepted) {
  EXPECT_EQ(build_error(two_links_with("inertia: [0.1, 0.1, 0.1]", "com: [0.5, 0, 0]\n    inertia: [0, 0, 0]")), "");
  EXPECT_EQ(build_error(two_links_with("[0.1, 0.1, 0.1]", "[0, 0.1, 0.1]")), "");
  expect_parts(build_error(two_links_with("[0.1, 0.1, 0.1]", "[0, 0, 0]")),
               {"t.yaml:9: articulated inertia is singular at joint 'j1'", "no method can integrate it"});
}

TEST(ModelFileBuild, ZeroAxis) {
  expect_parts(build_error(two_links_with("child: b}", "child: b, axis: [0, 0, 0]}")),
               {"t.yaml:10", "joint 'j2'", "axis"});
}

TEST(ModelFileBuild, BodyNotConnectedToGround) {
  expect_parts(build_error(two_links_with("parent: a, child: b", "parent: b, child: a")), {"t.yaml:", "not connected"});
  // b hangs from nothing: only j1 remains.
  expect_parts(build_error(two_links_with("  - {name: j2, type: revolute, parent: a, child: b}\n", "")),
               {"t.yaml:5", "body 'b'", "not connected"});
}

TEST(ModelFileBuild, UnknownBodyInJoint) {
  expect_parts(build_error(two_links_with("parent: a, child: b", "parent: a, child: c")),
               {"t.yaml:10", "joint 'j2'", "unknown body 'c'"});
}

TEST(ModelFileBuild, IndependentOnlyOnTreeJoints) {
  const loopdyn::Model m = loopdyn::Model::build(loopdyn::parse_mechanism(two_links_with("child: b}", "child: b, independent: true}"), "t.yaml"));
  EXPECT_FALSE(m.joints[m.joint_index("j1")].independent);
  EXPECT_TRUE(m.joints[m.joint_index("j2")].independent);
  expect_parts(build_error(two_links + "  - {name: j3, type: revolute, parent: ground, child: b, cut: true, independent: true}\n"),
               {"t.yaml:11", "joint 'j3'", "closes a loop", "tree joints only"});
  expect_parts(parse_error("joints:\n  - {name: j, type: revolute, parent: ground, child: a, independent: 2}\n"),
               {"t.yaml:2", "independent"});
}

// Bad couplings under `constraints:` (issue 5: "an unknown joint in constraints:" gets a test on its
// message): the message names the file line, the constraint and the joint.
TEST(ModelFileBuild, CouplingOnAnUnknownLoopOrMultiCoordinateJoint) {
  const std::string gear = "constraints:\n  - {type: gear, name: g, joint1: j1, joint2: ";
  EXPECT_EQ(build_error(two_links + gear + "j2, ratio: 2}\n"), "");
  expect_parts(build_error(two_links + gear + "j9, ratio: 2}\n"), {"t.yaml:12", "constraint 'g'", "unknown joint 'j9'"});
  expect_parts(build_error(two_links_with("type: revolute, parent: a", "type: universal, parent: a") + gear +
                           "j2, ratio: 2}\n"),
               {"t.yaml:12", "constraint 'g'", "joint 'j2' must have one coordinate"});
  expect_parts(build_error(two_links + "  - {name: j3, type: revolute, parent: a, child: b, cut: true}\n" + gear +
                           "j3, ratio: 2}\n"),
               {"t.yaml:13", "constraint 'g'", "'j3' is a loop-closing joint"});
}

// A gear of a joint with itself was accepted: with ratio 1 its row is zero (a constraint that
// constrains nothing), with ratio -2 it pinned the joint at 0 and the start state's assembly moved
// q there, exit 0. A linear coupling whose coefficients are all zero relates nothing either.
TEST(ModelFileBuild, DegenerateCouplingsAreRefused) {
  const std::string gear = "constraints:\n  - {type: gear, name: g, joint1: j1, joint2: ";
  for (const char* ratio : {"1", "-2"})
    expect_parts(build_error(two_links + gear + "j1, ratio: " + ratio + "}\n"),
                 {"t.yaml:12", "constraint 'g'", "joint 'j1' appears twice"});
  const std::string linear = "constraints:\n  - {type: linear, name: l, terms: [{joint: j1, coefficient: ";
  expect_parts(build_error(two_links + linear + "0}, {joint: j2, coefficient: 0.0}]}\n"),
               {"t.yaml:12", "constraint 'l'", "every coefficient is zero"});
  EXPECT_EQ(build_error(two_links + linear + "0}, {joint: j2, coefficient: 1}]}\n"), "");
}

// A joint's effort limits the joint_pd controllers on it, which act on one coordinate: on a
// spherical or fixed joint, or on a loop-closing one, it was accepted and did nothing. Its
// value is printed as written (-1e-9 read "-0.000000").
TEST(ModelFileBuild, EffortOnlyWhereAControllerCanUseIt) {
  EXPECT_EQ(build_error(two_links_with("child: b}", "child: b, effort: 3}")), "");
  std::string spherical = two_links_with("child: b}", "child: b, effort: 3}");
  spherical.replace(spherical.find("type: revolute, parent: a"), 25, "type: spherical, parent: a");
  expect_parts(build_error(spherical), {"t.yaml:10", "joint 'j2'", "effort applies to joints of one coordinate"});
  expect_parts(build_error(two_links + "  - {name: j3, type: revolute, parent: a, child: b, cut: true, effort: 3}\n"),
               {"t.yaml:11", "joint 'j3' closes a loop", "its effort would limit no joint_pd controller"});
  expect_parts(build_error(two_links_with("child: b}", "child: b, effort: -1e-9}")),
               {"t.yaml:10", "effort must be > 0 (got -1e-09)"});
}

TEST(ModelFileBuild, DuplicateBodyName) {
  expect_parts(build_error(two_links_with("name: b", "name: a")), {"t.yaml:5", "duplicate", "'a'"});
}

// ---------------------------------------------------------------------------------------------
// Writer: parse_mechanism(write_mechanism(m)) == m, field by field

/// Writes `m`, parses it back and compares; with `builds`, also the models built from both.
void expect_round_trip(const Mechanism& m, bool builds = true) {
  const std::string text = loopdyn::write_mechanism(m);
  SCOPED_TRACE(m.name + " written as:\n" + text);
  const Mechanism back = loopdyn::parse_mechanism(text, "written.yaml");
  expect_same(m, back);
  if (!builds) return;
  const loopdyn::Model x = loopdyn::Model::build(m), y = loopdyn::Model::build(back);
  EXPECT_EQ(x.nq, y.nq);
  EXPECT_EQ(x.nv, y.nv);
  EXPECT_EQ(x.body_name, y.body_name);
  ASSERT_EQ(x.loop_joints.size(), y.loop_joints.size());
  for (std::size_t k = 0; k < x.loop_joints.size(); ++k) EXPECT_EQ(x.loop_joints[k].name, y.loop_joints[k].name);
  EXPECT_EQ(x.q0, y.q0);
  EXPECT_EQ(x.u0, y.u0);
}

TEST(ModelFileWriter, EveryBundledModelRoundTrips) {
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(models_dir)) {
    if (entry.path().extension() != ".yaml") continue;
    ++n;
    SCOPED_TRACE(entry.path().string());
    expect_round_trip(loopdyn::load_mechanism(entry.path().string()));
  }
  EXPECT_GE(n, 10);
}

// Every kind of drive motion and load profile is written back as given (a `speed` as its polynomial).
TEST(ModelFileWriter, DrivesRoundTrip) {
  Mechanism m = loopdyn::parse_mechanism(two_links, "t.yaml");
  using loopdyn::TimeFunction;
  m.drives = {{"j1", TimeFunction::sine(0.5, 2.0, 0.25, 0.1), ""},
              {"j2", TimeFunction::table({0.0, 0.5, 1.0}, {0.0, 0.2, 0.1}), ""}};
  expect_round_trip(m, false);  // two drives on a two-link chain: the file is valid, the model has no freedom
  m.drives = {{"j1", TimeFunction::polynomial({0.1, 2.0, -0.5}), ""},
              {"j2", TimeFunction::expression("0.2*sin(t)", "0.2*cos(t)"), ""}};
  expect_round_trip(m, false);
  m.drives.clear();  // and loads with a profile
  m.forces = {{loopdyn::JointForceSpec{"j1", {2.0}}, "", TimeFunction::sine(1.0, 0.5, 0.0, 0.0)},
              {loopdyn::BodyTorqueSpec{"b", Vec3(0, 0, 1)}, "", TimeFunction::table({0.0, 1.0}, {0.0, 1.0})},
              {loopdyn::JointPdSpec{"j2", 40.0, 4.0, TimeFunction::polynomial({0.5}), 2.5}, "", std::nullopt}};
  m.joints[0].effort = 7.0;
  expect_round_trip(m);
}

TEST(ModelFileWriter, GeneratedMechanismsRoundTrip) {
  using loopdyn::LadderLayout;
  for (LadderLayout layout : {LadderLayout::serial, LadderLayout::comb, LadderLayout::comb_parents_first})
    expect_round_trip(loopdyn::ladder_mechanism(3, layout));
  expect_round_trip(loopdyn::chain_mechanism(7));
  expect_round_trip(loopdyn::branched_tree_mechanism(6));
}

TEST(ModelFileWriter, EveryFieldAndCouplingRoundTrips) {
  expect_round_trip(loopdyn::parse_mechanism(full_model, "t.yaml"));
  expect_round_trip(loopdyn::parse_mechanism(coupled_model, "t.yaml"), false);  // joints not declared
  // A linear coupling that is not a gear, one with a term of coefficient -1 first, and a gear with an offset.
  Mechanism m = loopdyn::parse_mechanism(two_links, "t.yaml");
  m.couplings = {{"g", {{"j1", 0.5}, {"j2", -1.0}}, -0.25, ""},
                 {"l", {{"j2", -1.0}, {"j1", 3.0}}, 0.0, ""},
                 {"one", {{"j1", 2.0}}, 1.0 / 3.0, ""}};
  expect_round_trip(m, false);  // three couplings on two joints overconstrain; the file is still valid
  EXPECT_NE(loopdyn::write_mechanism(m).find("type: gear"), std::string::npos);
}

// Rotated frames of every kind, gimbal lock included, and numbers and names that YAML would read
// as something else if written plainly.
TEST(ModelFileWriter, RotationsNumbersAndNamesRoundTrip) {
  Mechanism m;
  m.name = "null";
  m.gravity = Vec3(0.1 + 0.2, -0.0, 1e-300);
  m.add_body("yes", 1.0 / 3.0, Vec3(M_PI, -2.5e300, 4.9e-324), Vec3(1, 2, 2.5).asDiagonal().toDenseMatrix());
  const double h = M_PI / 2;
  const std::vector<Vec3> rpys = {{0.1, 0.2, 0.3},  {-3.0, 1.5, 3.1}, {0.4, h, -0.7},     {0.4, -h, 0.2},
                                  {M_PI, 0.0, 0.0}, {0.0, 0.0, M_PI}, {2.0, -1.2, -2.9}, {1e-9, 0.0, 0.0}};
  std::string parent = "yes";
  for (std::size_t k = 0; k < rpys.size(); ++k) {
    const std::string child = k % 2 ? "1" : "a: #b";
    if (k < 2) m.add_body(child, 1.0, Vec3::Zero(), Mat3::Identity());
    const loopdyn::Transform X{loopdyn::rpy_rotation(rpys[k]), Vec3(0, 0, 0.1 * k)};
    const loopdyn::Transform Y{rot_x(0.3 * k) * rot_y(-0.2) * rot_z(0.7 * k), Vec3::Zero()};
    std::string name = "j";  // appended: GCC 12 warns falsely (-Wrestrict) on "j" + std::string at -O3
    name += std::to_string(k);
    auto& j = m.add_joint(name, k % 2 ? JointType::spherical : JointType::universal, parent,
                          child, X, Y);
    j.cut = k >= 2;
    parent = child;
  }
  expect_round_trip(m, false);
}

TEST(ModelFileWriter, LeavesOutDefaultsAndWritesShortestNumbers) {
  Mechanism m = loopdyn::parse_mechanism(two_links, "t.yaml");
  m.joints[1].parent_frame.p = Vec3(0.1, 0, 0);
  m.joints[1].q = {0.3};
  const std::string text = loopdyn::write_mechanism(m);
  for (const char* absent : {"com:", "child_frame", "rpy", "axis", "u:", "cut", "independent", "markers", "forces"})
    EXPECT_EQ(text.find(absent), std::string::npos) << absent << " in\n" << text;
  for (const char* present : {"gravity: [0, 0, -9.81]", "inertia: [0.1, 0.1, 0.1]", "parent_frame: {xyz: [0.1, 0, 0]}",
                              "q: 0.3"})
    EXPECT_NE(text.find(present), std::string::npos) << present << " not in\n" << text;
}

TEST(ModelFileWriter, CallbacksCannotBeWritten) {
  Mechanism m = loopdyn::parse_mechanism(two_links, "t.yaml");
  m.name = "driven";
  m.callbacks.emplace_back([](double, const loopdyn::Model&, const loopdyn::KinematicsData&, const loopdyn::VecX&,
                              const loopdyn::VecX&, loopdyn::AppliedForces&) {});
  m.callbacks.push_back(m.callbacks.front());
  expect_parts(error_of([&] { loopdyn::write_mechanism(m); }),
               {"cannot write mechanism 'driven'", "Mechanism::callbacks[0], Mechanism::callbacks[1]"});
}

TEST(ModelFileWriter, SaveMechanismWritesAFileOrNamesThePath) {
  const Mechanism m = loopdyn::chain_mechanism(3);
  const auto path = std::filesystem::temp_directory_path() / "loopdyn_test_model_file_save.yaml";
  loopdyn::save_mechanism(m, path.string());
  expect_same(m, loopdyn::load_mechanism(path.string()));
  const std::string bad = "/nonexistent_dir/chain.yaml";
  expect_parts(error_of([&] { loopdyn::save_mechanism(m, bad); }), {"cannot write model file", bad});
}

}  // namespace
