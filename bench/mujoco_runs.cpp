// The IFToMM cases in MuJoCo (mujoco_runs.hpp).
#include "mujoco_runs.hpp"

#include "loopdyn/core/kinematics.hpp"
#include "loopdyn/core/model.hpp"

#include <mujoco/mujoco.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <variant>

namespace loopdyn::bench {

namespace {

std::string numbers(const double* x, int n) {
  std::ostringstream s;
  s.precision(17);
  for (int k = 0; k < n; ++k) s << (k ? " " : "") << x[k];
  return s.str();
}
std::string numbers(const Vec3& v) { return numbers(v.data(), 3); }

double initial_q(const JointSpec& j) { return j.q.empty() ? 0.0 : j.q[0]; }
double initial_u(const JointSpec& j) { return j.u.empty() ? 0.0 : j.u[0]; }

// Every body's world pose at the initial coordinates, by loopdyn's own kinematics (ground: the
// identity).
std::map<std::string, Transform> initial_poses(const Mechanism& m) {
  const Model model = Model::build(m);
  KinematicsData kin(model);
  update_positions(model, kin, model.q0);
  std::map<std::string, Transform> poses{{"ground", Transform::identity()}};
  for (int i = 0; i < model.nbodies; ++i) poses[m.bodies[model.mechanism_body[i]].name] = kin.X_world[i];
  return poses;
}

class Writer {
 public:
  explicit Writer(const Mechanism& m) : m_(m), poses_(initial_poses(m)) {
    for (const JointSpec& j : m.joints) {
      if (j.type != JointType::revolute && j.type != JointType::prismatic)
        throw std::invalid_argument("mjcf_of: joint '" + j.name + "' is neither revolute nor prismatic");
      if (j.cut && j.type != JointType::revolute)
        throw std::invalid_argument("mjcf_of: loop-closing joint '" + j.name + "' is not revolute");
      if (!j.cut) children_[j.parent].push_back(&j);
    }
    for (const ForceSpec& f : m.forces) {
      if (const auto* p = std::get_if<PointSpringDamperSpec>(&f.element)) springs_.push_back(p);
      else if (!std::holds_alternative<JointForceSpec>(f.element) || f.profile)
        throw std::invalid_argument("mjcf_of: only point spring-dampers and constant joint forces are written");
    }
  }

  std::string text() {
    out_ << "<mujoco model=\"" << m_.name << "\">\n<compiler angle=\"radian\"/>\n"
         << "<option gravity=\"" << numbers(m_.gravity) << "\"><flag contact=\"disable\"/></option>\n<worldbody>\n";
    sites("ground");
    for (const JointSpec* j : children_["ground"]) body(*j);
    out_ << "</worldbody>\n<equality>\n";
    for (const JointSpec& j : m_.joints)
      if (j.cut)
        out_ << "<connect name=\"" << j.name << "\" body1=\"" << j.parent << "\" body2=\"" << j.child << "\" anchor=\""
             << numbers(j.parent_frame.p) << "\"/>\n";
    out_ << "</equality>\n<tendon>\n";
    for (std::size_t k = 0; k < springs_.size(); ++k)
      out_ << "<spatial stiffness=\"" << numbers(&springs_[k]->stiffness, 1) << "\" damping=\""
           << numbers(&springs_[k]->damping, 1) << "\" springlength=\"" << numbers(&springs_[k]->rest_length, 1)
           << "\"><site site=\"spring" << k << "a\"/><site site=\"spring" << k << "b\"/></spatial>\n";
    out_ << "</tendon>\n</mujoco>\n";
    return out_.str();
  }

 private:
  void body(const JointSpec& j) {
    const BodySpec& b = *std::find_if(m_.bodies.begin(), m_.bodies.end(), [&](const BodySpec& s) { return s.name == j.child; });
    const Transform X = poses_.at(j.parent).inverse() * poses_.at(j.child);  // the child in its parent
    const Eigen::Quaterniond r(X.R);
    const double quat[4] = {r.w(), r.x(), r.y(), r.z()};
    const double inertia[6] = {b.inertia(0, 0), b.inertia(1, 1), b.inertia(2, 2),
                               b.inertia(0, 1), b.inertia(0, 2), b.inertia(1, 2)};
    const double ref = initial_q(j);
    out_ << "<body name=\"" << b.name << "\" pos=\"" << numbers(X.p) << "\" quat=\"" << numbers(quat, 4) << "\">\n"
         << "<inertial pos=\"" << numbers(b.com) << "\" mass=\"" << numbers(&b.mass, 1) << "\" fullinertia=\""
         << numbers(inertia, 6) << "\"/>\n"
         << "<joint name=\"" << j.name << "\" type=\"" << (j.type == JointType::revolute ? "hinge" : "slide")
         << "\" pos=\"" << numbers(j.child_frame.p) << "\" axis=\"" << numbers(j.child_frame.R * j.axis.normalized())
         << "\" ref=\"" << numbers(&ref, 1) << "\"/>\n";
    sites(b.name);
    for (const JointSpec* c : children_[b.name]) body(*c);
    out_ << "</body>\n";
  }

  // The spring ends on this body.
  void sites(const std::string& name) {
    for (std::size_t k = 0; k < springs_.size(); ++k) {
      if (springs_[k]->body1 == name)
        out_ << "<site name=\"spring" << k << "a\" pos=\"" << numbers(springs_[k]->point1) << "\"/>\n";
      if (springs_[k]->body2 == name)
        out_ << "<site name=\"spring" << k << "b\" pos=\"" << numbers(springs_[k]->point2) << "\"/>\n";
    }
  }

  const Mechanism& m_;
  std::map<std::string, Transform> poses_;
  std::map<std::string, std::vector<const JointSpec*>> children_;
  std::vector<const PointSpringDamperSpec*> springs_;
  std::ostringstream out_;
};

struct ModelDeleter {
  void operator()(mjModel* m) const { mj_deleteModel(m); }
};
struct DataDeleter {
  void operator()(mjData* d) const { mj_deleteData(d); }
};

std::unique_ptr<mjModel, ModelDeleter> compile(const std::string& xml) {
  auto vfs = std::make_unique<mjVFS>();
  mj_defaultVFS(vfs.get());
  if (mj_makeEmptyFileVFS(vfs.get(), "model.xml", static_cast<int>(xml.size())) != 0)
    throw std::runtime_error("MuJoCo: cannot make the in-memory file");
  std::memcpy(vfs->filedata[mj_findFileVFS(vfs.get(), "model.xml")], xml.data(), xml.size());
  char error[1000] = "";
  std::unique_ptr<mjModel, ModelDeleter> m(mj_loadXML("model.xml", vfs.get(), error, sizeof error));
  mj_deleteVFS(vfs.get());
  if (!m) throw std::runtime_error(std::string("MuJoCo refused the model: ") + error);
  return m;
}

}  // namespace

std::string mjcf_of(const Mechanism& m) { return Writer(m).text(); }

const char* to_string(MujocoIntegrator i) {
  switch (i) {
    case MujocoIntegrator::euler: return "Euler";
    case MujocoIntegrator::rk4: return "RK4";
    case MujocoIntegrator::implicit: return "implicit";
  }
  return "?";
}

MujocoRun run_mujoco(const Mechanism& mech, const std::string& marker, double t_end, double output_dt, double timestep,
                     MujocoIntegrator integrator, double solref_timeconst) {
  // An unstable step makes MuJoCo reset the state and warn (to MUJOCO_LOG.TXT by default): counted
  // below from d->warning instead.
  mju_user_warning = [](const char*) {};
  const auto m = compile(mjcf_of(mech));
  m->opt.timestep = timestep;
  m->opt.integrator = integrator == MujocoIntegrator::euler ? mjINT_EULER
                      : integrator == MujocoIntegrator::rk4 ? mjINT_RK4
                                                            : mjINT_IMPLICIT;
  if (solref_timeconst > 0.0)
    for (int e = 0; e < m->neq; ++e) m->eq_solref[mjNREF * e] = solref_timeconst;
  std::unique_ptr<mjData, DataDeleter> d(mj_makeData(m.get()));
  for (const JointSpec& j : mech.joints) {
    if (j.cut) continue;
    const int id = mj_name2id(m.get(), mjOBJ_JOINT, j.name.c_str());
    d->qpos[m->jnt_qposadr[id]] = initial_q(j);
    d->qvel[m->jnt_dofadr[id]] = initial_u(j);
  }
  for (const ForceSpec& f : mech.forces)
    if (const auto* jf = std::get_if<JointForceSpec>(&f.element))
      d->qfrc_applied[m->jnt_dofadr[mj_name2id(m.get(), mjOBJ_JOINT, jf->joint.c_str())]] = jf->value.at(0);
  const MarkerSpec& p = *std::find_if(mech.markers.begin(), mech.markers.end(),
                                      [&](const MarkerSpec& k) { return k.name == marker; });
  const int body = mj_name2id(m.get(), mjOBJ_BODY, p.body.c_str());
  auto record = [&](MujocoRun& r) {
    mj_kinematics(m.get(), d.get());
    const Eigen::Map<const Eigen::Matrix<mjtNum, 3, 3, Eigen::RowMajor>> R(d->xmat + 9 * body);
    r.marker.push_back(Eigen::Map<const Vec3>(d->xpos + 3 * body) + R * p.point);
  };
  MujocoRun r;
  const long per_output = std::lround(output_dt / timestep);
  const long outputs = std::lround(t_end / output_dt);
  const auto start = std::chrono::steady_clock::now();
  record(r);
  for (long k = 0; k < outputs && r.finite; ++k) {
    for (long s = 0; s < per_output; ++s) mj_step(m.get(), d.get());
    r.steps += per_output;
    r.finite = d->warning[mjWARN_BADQACC].number == 0 && d->warning[mjWARN_BADQPOS].number == 0 &&
               d->warning[mjWARN_BADQVEL].number == 0;
    record(r);
  }
  r.cpu = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace loopdyn::bench
