// MJCF import (src/io/mjcf.cpp) against MuJoCo itself: the same file compiled by mj_loadXML and
// run through mj_forward gives the body poses and the accelerations that loopdyn computes from the
// imported Mechanism; MuJoCo's own equality residuals vanish at loopdyn's assembled state (so
// connect, weld and joint equalities mean the same in both). Then bad files (one test per kind of
// refusal, messages checked for file, line and the element) and the notes.
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "loopdyn/loops/assembly.hpp"
#include "loopdyn/formulations/formulation.hpp"
#include "loopdyn/io/mjcf.hpp"
#include "loopdyn/io/model_file.hpp"
#include "loopdyn/core/kinematics.hpp"
#include "loopdyn/loops/loop_structure.hpp"
#include "loopdyn/core/model.hpp"
#include "loopdyn/formulations/registry.hpp"
#include "cli_support.hpp"
#include "test_support.hpp"

namespace {

using loopdyn::Mat3;
using loopdyn::Model;
using loopdyn::ModelError;
using loopdyn::Vec3;
using loopdyn::VecX;
using loopdyn::test::near;

const std::string source_dir = LOOPDYN_SOURCE_DIR;

/// `text` written to a file of its own under the test's name (tests may run in parallel).
std::string write_file(const std::string& text, const std::string& tag = "") {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const auto path = std::filesystem::temp_directory_path() /
                    (std::string("loopdyn_") + info->name() + tag + ".xml");
  std::ofstream(path) << text;
  return path.string();
}

/// ModelError message of load_mjcf(path), "" when it loads.
std::string error_of(const std::string& path) {
  try {
    loopdyn::load_mjcf(path);
  } catch (const ModelError& e) {
    return e.what();
  }
  return "";
}

void expect_parts(const std::string& message, std::initializer_list<std::string> parts) {
  EXPECT_FALSE(message.empty()) << "no ModelError was thrown";
  EXPECT_EQ(message.find('\n'), std::string::npos) << "not one line: " << message;
  for (const auto& p : parts) EXPECT_NE(message.find(p), std::string::npos) << "'" << p << "' not in: " << message;
}

/// The file compiled and run by MuJoCo (the independent code path), contacts disabled.
class MuJoCo {
 public:
  explicit MuJoCo(const std::string& path) {
    char error[1000] = "";
    m_ = mj_loadXML(path.c_str(), nullptr, error, sizeof error);
    if (!m_) throw std::runtime_error(error);
    m_->opt.disableflags |= mjDSBL_CONTACT;
    d_ = mj_makeData(m_);
  }
  ~MuJoCo() {
    mj_deleteData(d_);
    mj_deleteModel(m_);
  }
  MuJoCo(const MuJoCo&) = delete;
  MuJoCo& operator=(const MuJoCo&) = delete;
  const mjModel& m() const { return *m_; }
  mjData& d() { return *d_; }

 private:
  mjModel* m_ = nullptr;
  mjData* d_ = nullptr;
};

/// MuJoCo id of a loopdyn name: the element's name, or the importer's "body7", "joint3" for an
/// unnamed one.
int mujoco_id(const mjModel& m, mjtObj type, const std::string& name, const std::string& fallback) {
  const int id = mj_name2id(&m, type, name.c_str());
  if (id >= 0 || name.rfind(fallback, 0) != 0) return id;
  return std::stoi(name.substr(fallback.size()));
}

/// MuJoCo joint ids of loopdyn tree joint i: its name, or "a+b" for two hinges read as a universal.
std::vector<int> mujoco_joints(const Model& model, const mjModel& m, int i) {
  std::vector<int> ids;
  std::string rest = model.joints[i].name;
  for (std::size_t cut; !rest.empty(); rest = cut == std::string::npos ? "" : rest.substr(cut + 1)) {
    cut = rest.find('+');
    ids.push_back(mujoco_id(m, mjOBJ_JOINT, rest.substr(0, cut), "joint"));
  }
  return ids;
}

/// loopdyn's (q, u, u̇) of MuJoCo's (qpos, qvel, qacc), joint by joint. They are equal except for a
/// free joint's linear part: world-frame v_w in MuJoCo, body-frame v = Rᵀ v_w in loopdyn, whose
/// derivative is v̇ = Rᵀ v̇_w − ω × v (ω in body axes).
void from_mujoco(const Model& model, const mjModel& m, const mjData& d, VecX& q, VecX& u, VecX& udot) {
  q.resize(model.nq);
  u.resize(model.nv);
  udot.resize(model.nv);
  for (int i = 0; i < model.nbodies; ++i) {
    if (model.nv_joint[i] == 0) continue;  // a body without MuJoCo joints
    int qi = model.q_index[i], vi = model.v_index[i];
    for (const int j : mujoco_joints(model, m, i)) {
      const int type = m.jnt_type[j], qa = m.jnt_qposadr[j], va = m.jnt_dofadr[j];
      const int nq = type == mjJNT_FREE ? 7 : type == mjJNT_BALL ? 4 : 1, nv = nq == 1 ? 1 : nq - 1;
      for (int k = 0; k < nq; ++k) q(qi + k) = d.qpos[qa + k];
      for (int k = 0; k < nv; ++k) u(vi + k) = d.qvel[va + k], udot(vi + k) = d.qacc[va + k];
      if (type == mjJNT_FREE) {
        const Mat3 R = loopdyn::Quat(q(qi + 3), q(qi + 4), q(qi + 5), q(qi + 6)).normalized().toRotationMatrix();
        const Vec3 w = u.segment<3>(vi + 3), v = R.transpose() * u.segment<3>(vi);
        u.segment<3>(vi) = v;
        udot.segment<3>(vi) = R.transpose() * udot.segment<3>(vi) - w.cross(v);
      }
      qi += nq;
      vi += nv;
    }
  }
}

/// MuJoCo's qpos and qvel of loopdyn's (q, u): the inverse of from_mujoco's map.
void to_mujoco(const Model& model, const mjModel& m, const VecX& q, const VecX& u, mjData& d) {
  for (int i = 0; i < model.nbodies; ++i) {
    if (model.nv_joint[i] == 0) continue;
    int qi = model.q_index[i], vi = model.v_index[i];
    for (const int j : mujoco_joints(model, m, i)) {
      const int type = m.jnt_type[j], qa = m.jnt_qposadr[j], va = m.jnt_dofadr[j];
      const int nq = type == mjJNT_FREE ? 7 : type == mjJNT_BALL ? 4 : 1, nv = nq == 1 ? 1 : nq - 1;
      for (int k = 0; k < nq; ++k) d.qpos[qa + k] = q(qi + k);
      for (int k = 0; k < nv; ++k) d.qvel[va + k] = u(vi + k);
      if (type == mjJNT_FREE) {
        const Mat3 R = loopdyn::Quat(q(qi + 3), q(qi + 4), q(qi + 5), q(qi + 6)).normalized().toRotationMatrix();
        const Vec3 vw = R * u.segment<3>(vi);
        for (int k = 0; k < 3; ++k) d.qvel[va + k] = vw(k);
      }
      qi += nq;
      vi += nv;
    }
  }
}

/// A random MuJoCo state: unit quaternions for ball and free joints, values in [-1, 1] otherwise.
void random_state(const mjModel& m, mjData& d, std::mt19937_64& rng) {
  for (int k = 0; k < m.nq; ++k) d.qpos[k] = loopdyn::test::uniform(rng, -1.0, 1.0);
  for (int k = 0; k < m.nv; ++k) d.qvel[k] = loopdyn::test::uniform(rng, -1.0, 1.0);
  for (int j = 0; j < m.njnt; ++j)
    if (m.jnt_type[j] == mjJNT_FREE || m.jnt_type[j] == mjJNT_BALL) {
      const int a = m.jnt_qposadr[j] + (m.jnt_type[j] == mjJNT_FREE ? 3 : 0);
      mju_normalize4(d.qpos + a);
    }
}

/// At random states: every body's world pose (loopdyn kinematics vs MuJoCo's xpos, xmat) and the
/// accelerations of `tree` and `lagrange-dense` vs MuJoCo's qacc. Both sides solve the same
/// equations exactly in double precision (MuJoCo by a sparse LDLᵀ of M with no constraint active),
/// so they differ by round-off times the condition of M. Measured (these tests with both
/// tolerances set to 1e-17): at most 2.6e-13 absolute over poses and accelerations of size up to
/// 464 (relative 1e-14); 1e-12 for poses and the brief's 1e-8 for accelerations are far above.
void expect_mujoco_dynamics(const std::string& path, int states) {
  MuJoCo mj(path);
  const Model model = Model::build(loopdyn::load_mjcf(path));
  ASSERT_TRUE(model.loop_joints.empty());
  std::mt19937_64 rng(7);
  loopdyn::KinematicsData kin(model);
  for (int s = 0; s < states; ++s) {
    random_state(mj.m(), mj.d(), rng);
    mj_forward(&mj.m(), &mj.d());
    VecX q, u, expected;
    from_mujoco(model, mj.m(), mj.d(), q, u, expected);
    loopdyn::update_positions(model, kin, q);
    for (int i = 0; i < model.nbodies; ++i) {
      const int b = mujoco_id(mj.m(), mjOBJ_BODY, model.body_name[i], "body");
      ASSERT_GE(b, 1) << model.body_name[i];
      const Eigen::Map<const Eigen::Matrix<double, 3, 3, Eigen::RowMajor>> xmat(mj.d().xmat + 9 * b);
      EXPECT_TRUE(near(kin.X_world[i].p, Eigen::Map<const Vec3>(mj.d().xpos + 3 * b), 1e-12)) << model.body_name[i];
      EXPECT_TRUE(near(kin.X_world[i].R, Mat3(xmat), 1e-12)) << model.body_name[i];
    }
    for (const char* method : {"tree", "lagrange-dense"}) {
      const auto f = loopdyn::make_formulation(method, model);
      VecX udot(model.nv);
      f->accelerations(0.0, q, u, udot);
      EXPECT_TRUE(near(udot, expected, 1e-8)) << method << " at state " << s;
    }
  }
}

// A spatial arm: a hinge with ref, springref, stiffness and damping; a slide with the same; a
// ball; two perpendicular hinges through one point (a universal joint, the first with ref); a
// free-floating body carrying a hinged flap. Off-axis centres of mass and full inertia tensors,
// gravity off the axes, every body pose rotated.
constexpr const char* arm_xml = R"(<mujoco model="arm">
  <compiler angle="radian"/>
  <option gravity="0.3 -0.5 -9.81"><flag contact="disable"/></option>
  <worldbody>
    <body name="upper" pos="0.1 0.2 0.3" quat="0.9 0.1 0.3 0.2">
      <joint name="shoulder" pos="0.05 0 0.02" axis="0.2 1 0.3" ref="0.4" stiffness="3" springref="0.2" damping="0.5"/>
      <inertial pos="0.3 0.02 -0.01" quat="0.8 0.2 0.1 0.4" mass="1.5" diaginertia="0.05 0.04 0.02"/>
      <geom type="capsule" fromto="0 0 0 0.6 0 0" size="0.03"/>
      <body name="slider" pos="0.6 0 0" euler="0.3 0.1 -0.2">
        <joint name="extend" type="slide" pos="0.1 0 0" axis="1 0.2 0" ref="0.1" stiffness="20" springref="0.05" damping="1"/>
        <inertial pos="0.1 0.01 0.02" mass="0.8" fullinertia="0.02 0.03 0.025 0.002 -0.001 0.003"/>
        <geom type="box" size="0.05 0.02 0.03" rgba="0.8 0.1 0.1 1"/>
        <body name="wrist" pos="0.2 0.05 0" euler="-0.4 0.2 0.1">
          <joint name="wrist_ball" type="ball" pos="0.01 0.02 0.03"/>
          <inertial pos="0.05 0.1 -0.02" mass="0.6" fullinertia="0.01 0.012 0.008 0.001 0.0005 -0.002"/>
          <body name="hand" pos="0.1 0.2 0" euler="0.5 -0.3 0.2">
            <joint name="hand_yaw" pos="0.02 0 0.01" axis="0 0 1" ref="0.3"/>
            <joint name="hand_roll" pos="0.02 0 0.01" axis="1 0 0"/>
            <inertial pos="0.04 -0.01 0.03" mass="0.4" fullinertia="0.004 0.005 0.003 -0.0005 0.0002 0.0004"/>
            <geom type="sphere" size="0.04"/>
          </body>
        </body>
      </body>
    </body>
    <body name="float" pos="1 0.5 2" euler="0.2 0.3 0.4">
      <freejoint name="float_free"/>
      <inertial pos="0.02 -0.03 0.01" mass="2" fullinertia="0.1 0.12 0.09 0.01 -0.02 0.005"/>
      <body name="flap" pos="0.3 0 0.1" euler="0 0.2 0">
        <geom type="cylinder" size="0.02 0.1"/>
        <joint name="flap_hinge" pos="-0.05 0 0" axis="0 1 0"/>
        <inertial pos="0.1 0 0" mass="0.3" diaginertia="0.001 0.004 0.004"/></body></body>
  </worldbody>
</mujoco>
)";

TEST(Mjcf, SpatialArmGivesMuJoCosPosesAndAccelerations) {
  expect_mujoco_dynamics(write_file(arm_xml), 5);
}

TEST(Mjcf, ArmMapsJointsSpringsAndShapes) {
  const loopdyn::Mechanism m = loopdyn::load_mjcf(write_file(arm_xml));
  EXPECT_EQ(m.name, "arm");
  EXPECT_TRUE(near(m.gravity, Vec3(0.3, -0.5, -9.81), 0.0));
  ASSERT_EQ(m.joints.size(), 6u);
  EXPECT_EQ(m.joints[3].name, "hand_yaw+hand_roll");
  EXPECT_EQ(m.joints[3].type, loopdyn::JointType::universal);
  EXPECT_EQ(m.joints[4].type, loopdyn::JointType::free);
  // q = MuJoCo's qpos0: the hinge's ref (radians here), the free body's pose.
  EXPECT_EQ(m.joints[0].q, std::vector<double>{0.4});
  EXPECT_EQ(m.joints[3].q, (std::vector<double>{0.3, 0.0}));
  ASSERT_EQ(m.forces.size(), 2u);
  const auto& spring = std::get<loopdyn::JointSpringDamperSpec>(m.forces[1].element);
  EXPECT_EQ(std::tie(spring.joint, spring.stiffness, spring.damping, spring.rest),
            std::make_tuple(std::string("extend"), 20.0, 1.0, 0.05));  // rest = springref
  // Geoms: half-sizes doubled, MuJoCo's fromto capsule along its own z.
  ASSERT_EQ(m.bodies[0].visuals.size(), 1u);
  EXPECT_EQ(m.bodies[0].visuals[0].shape, loopdyn::VisualSpec::Shape::capsule);
  EXPECT_NEAR(m.bodies[0].visuals[0].length, 0.6, 1e-15);
  EXPECT_TRUE(near(m.bodies[0].visuals[0].origin.p, Vec3(0.3, 0, 0), 1e-15));
  EXPECT_NEAR(std::abs(m.bodies[0].visuals[0].origin.R(0, 2)), 1.0, 1e-15);  // its z along ±x
  EXPECT_TRUE(near(m.bodies[1].visuals[0].size, Vec3(0.1, 0.04, 0.06), 1e-15));
  EXPECT_EQ(m.bodies[1].visuals[0].rgba[0], 0.8f);
  EXPECT_EQ(m.bodies[3].visuals[0].radius, 0.04);
  // The importer's where: the file and the line of the element.
  EXPECT_NE(m.joints[1].where.find(".xml:10"), std::string::npos) << m.joints[1].where;
}

// Loops: a four-bar in the x-z plane closed by <connect>, a gear between two hinges by a joint
// equality with an offset and refs, and a lid welded to the arm at a relpose that the reference
// pose does not satisfy (loopdyn assembles it).
constexpr const char* loops_xml = R"(<mujoco model="loops">
  <compiler angle="radian"/>
  <worldbody>
    <body name="crank" euler="0 -1 0">
      <joint name="crank_pin" axis="0 1 0" ref="0.2"/>
      <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.02"/>
      <body name="coupler" pos="0.5 0 0" euler="0 1 0">
        <joint name="coupler_pin" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 2 0 0" size="0.02"/>
      </body>
    </body>
    <body name="rocker" pos="2.2 0 0"><joint name="rocker_pin" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0 0 0.5" size="0.02"/></body>
    <body name="arm" pos="0 1 0">
      <joint name="arm_pin" axis="0 0 1" ref="0.3"/>
      <geom type="box" size="0.25 0.02 0.02" pos="0.25 0 0"/>
      <body name="arm2" pos="0.5 0 0">
        <joint name="arm2_pin" axis="0 0 1"/>
        <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.02"/>
      </body>
    </body>
    <body name="lid" pos="0 1 0">
      <joint name="lid_pin" axis="0 0 1"/>
      <geom type="box" size="0.2 0.05 0.01" pos="0.2 0 0.1"/>
    </body>
  </worldbody>
  <equality>
    <connect name="close" body1="coupler" body2="rocker" anchor="2 0 0"/>
    <joint name="gear" joint1="arm2_pin" joint2="arm_pin" polycoef="0.1 -0.5 0 0 0"/>
    <weld name="glue" body1="arm" body2="lid" relpose="0 0 0 0.995 0 0 0.0998"/>
  </equality>
</mujoco>
)";

TEST(Mjcf, EqualitiesMeanWhatMuJoCoEnforces) {
  const std::string path = write_file(loops_xml);
  const Model model = Model::build(loopdyn::load_mjcf(path));
  ASSERT_EQ(model.loop_joints.size(), 2u);  // close (spherical), glue (fixed)
  ASSERT_EQ(model.couplings.size(), 1u);
  MuJoCo mj(path);
  std::mt19937_64 rng(3);
  for (int s = 0; s < 3; ++s) {
    // A closed state away from the reference pose: loopdyn assembles a perturbed one.
    const VecX q = model.q0 + loopdyn::test::random_vector(model.nq, rng, 0.3);
    const VecX u = loopdyn::test::random_vector(model.nv, rng);
    const loopdyn::AssemblyResult r = loopdyn::assemble(model, model.loops().constraints, q, u, {});
    ASSERT_LT(r.position_residual, 1e-12);
    to_mujoco(model, mj.m(), r.q, r.u, mj.d());
    mj_forward(&mj.m(), &mj.d());
    // MuJoCo's own residuals of its equality rows (position and velocity), its reading of the
    // same eq_data: zero to the assembly's tolerance, scaled by the lever arms (2 m).
    int rows = 0;
    for (int k = 0; k < mj.d().nefc; ++k) {
      if (mj.d().efc_type[k] != mjCNSTR_EQUALITY) continue;
      ++rows;
      EXPECT_NEAR(mj.d().efc_pos[k], 0.0, 1e-11) << "row " << k << " at state " << s;
      EXPECT_NEAR(mj.d().efc_vel[k], 0.0, 1e-11) << "row " << k << " at state " << s;
    }
    EXPECT_EQ(rows, 3 + 1 + 6);  // connect, joint, weld
  }
}

TEST(Mjcf, EqualitiesBecomeCutJointsAndACoupling) {
  const loopdyn::Mechanism m = loopdyn::load_mjcf(write_file(loops_xml));
  const auto& close = m.joints[m.joints.size() - 2];
  EXPECT_EQ(close.type, loopdyn::JointType::spherical);
  EXPECT_TRUE(close.cut);
  EXPECT_EQ(close.parent, "coupler");
  EXPECT_EQ(close.child, "rocker");
  EXPECT_TRUE(near(close.parent_frame.p, Vec3(2, 0, 0), 0.0));
  EXPECT_EQ(m.joints.back().type, loopdyn::JointType::fixed);
  // q(arm2) − 0 = 0.1 − 0.5 (q(arm) − 0.3): q(arm2) + 0.5 q(arm) = 0.25.
  ASSERT_EQ(m.couplings.size(), 1u);
  EXPECT_EQ(m.couplings[0].terms[0].joint, "arm2_pin");
  EXPECT_EQ(m.couplings[0].terms[1].coefficient, 0.5);
  EXPECT_NEAR(m.couplings[0].value, 0.25, 1e-16);
}

// ---- real files ----

const std::string samples_dir = "/usr/share/mujoco/model/";  // libmujoco-samples (scripts/install-deps.sh)

TEST(Mjcf, BundledSliderCrankGivesMuJoCosAccelerations) {
  // MuJoCo's sample without its servos: three hinged links with joint damping.
  expect_mujoco_dynamics(source_dir + "/models/mjcf/slider_crank_passive.xml", 5);
}

TEST(Mjcf, SampleSliderCrankIsRefusedForItsServos) {
  expect_parts(error_of(samples_dir + "slider_crank/slider_crank.xml"),
               {"slider_crank.xml:50:", "actuator 'forward'", "zero control"});
}

TEST(Mjcf, SampleMugGivesMuJoCosAccelerationsAndFallsFreelyFromTheCli) {
  // A free body (inertia from its mesh and boxes) carrying a welded handle.
  const std::string mug = samples_dir + "mug/mug.xml";
  expect_mujoco_dynamics(mug, 5);
  const std::string csv = (std::filesystem::temp_directory_path() / "loopdyn_mjcf_mug.csv").string();
  const auto r = loopdyn::test::run_cli("simulate " + mug + " --t-end 0.5 --out " + csv);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("loopdyn: note: " + mug + ": contacts are not modelled"), std::string::npos) << r.output;
  // Started at rest, it falls without turning: z = −g t²/2, which rk4 integrates exactly.
  const loopdyn::Trajectory run = loopdyn::test::read_cli_csv(csv).run;
  EXPECT_EQ(run.rows.back()(0), 0.5);
  EXPECT_NEAR(run.at(run.rows.size() - 1, "q.joint0.2"), -9.81 * 0.25 / 2.0, 1e-12);  // the height
}

// The closed-loop robots of models/robots/: the MJCF twin (scripts/mjcf_from_yaml.py: nested
// bodies, <connect> for the loop joints, <inertial> tensors diagonalized by MuJoCo's compiler) and
// the YAML give the same accelerations at a closed state with random speeds. Both are exact
// solves of the same equations; 1e-12 (relative, test::near) allows the round-off of MuJoCo's
// inertia eigen-decomposition and of the quaternions the script writes (both ~1e-16); measured
// with the tolerance set to 1e-18: 1.1e-13, 3.6e-14, 7.1e-14 on accelerations up to 54, 58, 118.
class Robots : public ::testing::TestWithParam<std::string> {};

TEST_P(Robots, MjcfAndYamlGiveTheSameAccelerations) {
  const std::string base = source_dir + "/models/robots/" + GetParam();
  const Model yaml = Model::build(loopdyn::load_mechanism(base + ".yaml"));
  const Model mjcf = Model::build(loopdyn::load_mjcf(base + ".xml"));
  ASSERT_EQ(yaml.nv, mjcf.nv);
  std::mt19937_64 rng(11);
  const loopdyn::AssemblyResult r = loopdyn::assemble(
      yaml, yaml.loops().constraints, yaml.q0, loopdyn::test::random_vector(yaml.nv, rng), {});
  ASSERT_LT(r.position_residual, 1e-12);
  // The same state in the MJCF model's coordinates, joint by joint (a fixed joint has none). Its
  // free joint is placed in the world; the YAML's in a parent frame that only translates.
  VecX q(mjcf.nq), u(mjcf.nv);
  std::vector<int> twin(yaml.nbodies, -1);
  for (int i = 0; i < yaml.nbodies; ++i) {
    if (yaml.nq_joint[i] == 0) continue;
    const int k = twin[i] = mjcf.joint_index(yaml.joints[i].name);
    q.segment(mjcf.q_index[k], mjcf.nq_joint[k]) = r.q.segment(yaml.q_index[i], yaml.nq_joint[i]);
    u.segment(mjcf.v_index[k], mjcf.nv_joint[k]) = r.u.segment(yaml.v_index[i], yaml.nv_joint[i]);
    if (mjcf.nq_joint[k] == 7) {
      ASSERT_TRUE(yaml.joints[i].parent_frame.R.isIdentity(0.0) && yaml.joints[i].child_frame_identity);
      q.segment<3>(mjcf.q_index[k]) += yaml.joints[i].parent_frame.p;
    }
  }
  VecX a_yaml(yaml.nv), a_mjcf(mjcf.nv), a_twin(yaml.nv);
  loopdyn::make_formulation("lagrange-dense", yaml)->accelerations(0.0, r.q, r.u, a_yaml);
  loopdyn::make_formulation("lagrange-dense", mjcf)->accelerations(0.0, q, u, a_mjcf);
  for (int i = 0; i < yaml.nbodies; ++i)
    if (twin[i] >= 0) a_twin.segment(yaml.v_index[i], yaml.nv_joint[i]) = a_mjcf.segment(mjcf.v_index[twin[i]], yaml.nv_joint[i]);
  EXPECT_TRUE(near(a_twin, a_yaml, 1e-12));
}

INSTANTIATE_TEST_SUITE_P(Mjcf, Robots, ::testing::Values("fourbar", "delta", "stewart"));

// ---- bad files: one line naming the file, the line where known, the element and the problem ----

TEST(Mjcf, BrokenXmlKeepsMuJoCosLine) {
  const std::string path = write_file("<mujoco>\n<worldbody>\n<body name=\"a\">\n<geom size=\"1\"/>\n</worldbody>\n</mujoco>\n");
  expect_parts(error_of(path), {path + ":3:", "MuJoCo cannot compile it", "MISMATCHED_ELEMENT"});
}

TEST(Mjcf, EqualityNamingAMissingBodyKeepsMuJoCosLine) {
  const std::string path = write_file(
      "<mujoco>\n<worldbody>\n<body name=\"a\">\n<joint/><geom size=\"1\"/>\n</body>\n</worldbody>\n"
      "<equality>\n<connect body1=\"a\" body2=\"zz\" anchor=\"0 0 0\"/>\n</equality>\n</mujoco>\n");
  expect_parts(error_of(path), {path + ":8:", "unknown element 'zz'", "equality"});
}

TEST(Mjcf, ElementMuJoCoDoesNotKnowKeepsItsLine) {
  const std::string path = write_file("<mujoco>\n<worldbody>\n<body>\n<geom size=\"1\"/>\n<flex/>\n</body>\n</worldbody>\n</mujoco>\n");
  expect_parts(error_of(path), {path + ":5:", "unrecognized element", "flex"});
}

TEST(Mjcf, MissingFileIsNamed) {
  expect_parts(error_of("/nonexistent/robot.xml"), {"cannot open model file '/nonexistent/robot.xml'"});
}

/// A one-body file with `joint` for the body's joints and `extra` after the worldbody.
std::string one_body(const std::string& joints, const std::string& extra = "") {
  return "<mujoco>\n  <worldbody>\n    <body name=\"b\" pos=\"0 0 1\">\n      " + joints +
         "\n      <geom name=\"g\" size=\"0.1\" mass=\"1\"/>\n    </body>\n  </worldbody>\n" + extra + "</mujoco>\n";
}

TEST(Mjcf, PhysicsLoopdynWouldMissIsRefusedAtItsElement) {
  struct Case {
    std::string joints, extra;
    std::vector<std::string> parts;
  };
  const std::vector<Case> cases{
      {"<joint name=\"h\" armature=\"0.1\"/>", "", {":4:", "joint 'h' (hinge)", "armature"}},
      {"<joint name=\"h\" frictionloss=\"0.1\"/>", "", {":4:", "joint 'h'", "frictionloss"}},
      {"<joint name=\"s\" type=\"ball\" damping=\"0.1\"/>", "", {":4:", "joint 's' (ball)", "damping"}},
      {"<joint name=\"a\"/><joint name=\"c\"/><joint name=\"d\" axis=\"1 0 0\"/>", "",
       {":3:", "body 'b' has 3 joints", "universal"}},
      {"<joint name=\"a\"/><joint name=\"c\" axis=\"1 0 1\"/>", "",
       {":3:", "body 'b' has joints 'a' (hinge) and 'c' (hinge)", "perpendicular"}},
      {"<joint name=\"a\"/><joint name=\"c\" type=\"slide\"/>", "", {":3:", "'c' (slide)"}},
      {"<joint name=\"h\"/>", "  <actuator>\n    <position name=\"servo\" joint=\"h\" kp=\"10\"/>\n  </actuator>\n",
       {":9:", "actuator 'servo'", "zero control"}},
      {"<joint name=\"h\"/>", "  <tendon>\n    <fixed name=\"t\"><joint joint=\"h\" coef=\"1\"/></fixed>\n  </tendon>\n",
       {":9:", "tendon 't'", "not read"}},
      {"<joint name=\"h\"/><joint name=\"h2\" axis=\"1 0 0\"/>",
       "  <equality>\n    <joint name=\"sq\" joint1=\"h\" joint2=\"h2\" polycoef=\"0 1 0.5 0 0\"/>\n  </equality>\n",
       {":9:", "equality 'sq' (joint)", "quadratic"}},
      {"<joint name=\"h\"/>", "  <option viscosity=\"0.1\"/>\n", {":8:", "<option>", "fluid"}},
  };
  for (const auto& c : cases) {
    const std::string path = write_file(one_body(c.joints, c.extra), std::to_string(&c - cases.data()));
    const std::string message = error_of(path);
    expect_parts(message, {path});
    for (const std::string& part : c.parts) expect_parts(message, {part});
  }
}

TEST(Mjcf, CompositeIsRefusedAtItsLine) {
  const std::string path = write_file(
      "<mujoco>\n<worldbody>\n<composite type=\"particle\" count=\"2 1 1\" spacing=\"0.1\">\n"
      "<geom size=\"0.01\"/>\n</composite>\n</worldbody>\n</mujoco>\n");
  expect_parts(error_of(path), {path + ":3:", "<composite>"});
}

TEST(Mjcf, WhatActsOnlyOnContactOrCommandIsANote) {
  const std::string path = write_file(one_body(
      "<joint name=\"h\" limited=\"true\" range=\"-1 1\"/>",
      "  <actuator>\n    <motor joint=\"h\"/>\n  </actuator>\n  <sensor>\n    <jointpos joint=\"h\"/>\n  </sensor>\n"));
  std::vector<std::string> notes;
  const loopdyn::Mechanism m = loopdyn::load_mechanism(path, &notes);
  EXPECT_EQ(m.joints.size(), 1u);
  ASSERT_EQ(notes.size(), 4u);
  expect_parts(notes[0], {path + ":8:", "1 actuator(s) not read", "zero control"});
  expect_parts(notes[1], {path + ":", "contacts are not modelled", "1 geom(s)"});
  expect_parts(notes[2], {"joint limits are not enforced"});
  expect_parts(notes[3], {path + ":11:", "sensors"});
}

TEST(Mjcf, LoadMechanismTakesXmlAndMjcfInAnyCase) {
  EXPECT_TRUE(loopdyn::is_mjcf_path("a/robot.XML"));
  EXPECT_TRUE(loopdyn::is_mjcf_path("robot.mjcf"));
  EXPECT_FALSE(loopdyn::is_mjcf_path("robot.yaml"));
  EXPECT_FALSE(loopdyn::is_mjcf_path("xml"));
  const std::string path = write_file(arm_xml);
  const std::string mjcf = std::filesystem::path(path).replace_extension(".MJCF").string();
  std::filesystem::rename(path, mjcf);
  EXPECT_EQ(loopdyn::load_mechanism(mjcf).name, "arm");
}

}  // namespace
