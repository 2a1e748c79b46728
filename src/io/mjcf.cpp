// MJCF import (docs/model-format.md, "MJCF"): mj_loadXML compiles the file as MuJoCo does, then
// the mjModel is mapped onto a Mechanism.
//
// Joint frames. MuJoCo poses a body in its parent by body_pos/body_quat (B) and then applies its
// joints in order, each about or along its own axis through its own point p (body frame), by the
// joint value minus its reference qpos0: X = B · T(p) · J(q − qpos0) · T(−p). loopdyn's
// X = parent_frame · J(q) · child_frame⁻¹ (docs/model-format.md) then holds with
//   hinge: parent_frame = B · T(p) · Rot(axis, −qpos0), child_frame = T(p)
//   slide: parent_frame = B · T(p − qpos0 · axis),       child_frame = T(p)
//   ball:  parent_frame = B · T(p),                       child_frame = T(p)
//   free:  identity frames (MuJoCo's free body is placed by qpos alone)
// so that loopdyn's q equals MuJoCo's qpos joint by joint (springref, polycoef and keyframes
// keep their meaning). A ball joint's and a free joint's angular velocity are in the body frame
// in both; a free joint's linear velocity is world-frame in MuJoCo and body-frame in loopdyn.
//
// mjModel has no source lines: a tinyxml2 pass over the file finds the line of a named element
// and of the first element of a refused kind, for messages.
#include "loopdyn/io/mjcf.hpp"

#include <mujoco/mujoco.h>
#include <tinyxml2.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <regex>
#include <utility>

namespace loopdyn {

namespace {

struct ModelDeleter {
  void operator()(mjModel* m) const { mj_deleteModel(m); }
};
using ModelPtr = std::unique_ptr<mjModel, ModelDeleter>;

/// MuJoCo's multi-line message on one line, with the line number it names (0 when none).
std::pair<std::string, int> one_line(const char* text) {
  std::string s(text);
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  s = std::regex_replace(s, std::regex(" +"), " ");
  while (!s.empty() && s.back() == ' ') s.pop_back();
  std::smatch m;
  int line = 0;
  if (std::regex_search(s, m, std::regex("[Ll]ine(?: number)? ?=? ?([0-9]+)"))) line = std::stoi(m[1]);
  return {s, line};
}

std::string located(const std::string& path, int line) {
  return line > 0 ? path + ":" + std::to_string(line) : path;
}

/// Compiles the file with MuJoCo. Its error buffer is a local array and the model is owned by a
/// unique_ptr: nothing leaks on any path. The lock: mj_loadXML is not documented as thread-safe.
ModelPtr compile(const std::string& path, std::vector<std::string>* notes) {
  static std::mutex lock;
  std::array<char, 1024> error{};
  ModelPtr model;
  {
    const std::scoped_lock guard(lock);
    model.reset(mj_loadXML(path.c_str(), nullptr, error.data(), static_cast<int>(error.size())));
  }
  const auto [text, line] = one_line(error.data());
  if (!model) throw ModelError(located(path, line) + ": MuJoCo cannot compile it: " + text);
  if (!text.empty() && notes) notes->push_back(located(path, line) + ": MuJoCo: " + text);
  return model;
}

/// Lines of the file's elements: by (tag, name), and the first element of each tag.
class SourceLines {
 public:
  explicit SourceLines(const std::string& path) {
    tinyxml2::XMLDocument doc;
    if (doc.LoadFile(path.c_str()) == tinyxml2::XML_SUCCESS && doc.RootElement()) scan(*doc.RootElement());
  }
  int named(std::string_view tag, const std::string& name) const {
    const auto it = named_.find(std::string(tag) + ' ' + name);
    return it == named_.end() ? 0 : it->second;
  }
  int first(std::string_view tag) const {
    const auto it = first_.find(std::string(tag));
    return it == first_.end() ? 0 : it->second;
  }

 private:
  // A named child of <actuator>, <tendon>, <equality> or <sensor> is also found under that tag,
  // whatever its own (position, fixed, connect, ...): mjModel knows it by that group only.
  void scan(const tinyxml2::XMLElement& e, const std::string& group = "") {
    const std::string tag = e.Name();
    first_.emplace(tag, e.GetLineNum());
    if (const char* name = e.Attribute("name")) {
      named_.emplace(tag + ' ' + name, e.GetLineNum());
      if (!group.empty()) named_.emplace(group + ' ' + name, e.GetLineNum());
    }
    const bool grouping = tag == "actuator" || tag == "tendon" || tag == "equality" || tag == "sensor";
    for (const auto* c = e.FirstChildElement(); c; c = c->NextSiblingElement()) scan(*c, grouping ? tag : "");
  }
  std::map<std::string, int> named_, first_;
};

Vec3 vec3(const mjtNum* v) { return Vec3(v[0], v[1], v[2]); }
Mat3 rotation(const mjtNum* wxyz) { return Quat(wxyz[0], wxyz[1], wxyz[2], wxyz[3]).normalized().toRotationMatrix(); }
Transform pose(const mjtNum* pos, const mjtNum* wxyz) { return {rotation(wxyz), vec3(pos)}; }

std::string_view mj_type_name(int type) {
  switch (type) {
    case mjJNT_FREE: return "free";
    case mjJNT_BALL: return "ball";
    case mjJNT_SLIDE: return "slide";
    default: return "hinge";
  }
}

/// Maps one compiled model onto a Mechanism (the mapping is in the file comment above).
class Importer {
 public:
  Importer(std::string path, const mjModel& m, std::vector<std::string>* notes)
      : path_(std::move(path)), m_(m), lines_(path_), notes_(notes) {}

  Mechanism run();

 private:
  std::string name(mjtObj type, int id, std::string_view fallback) const;
  std::string body_name(int b) const { return b <= 0 ? std::string(ground_name) : name(mjOBJ_BODY, b, "body"); }
  std::string joint_name(int j) const { return name(mjOBJ_JOINT, j, "joint"); }
  std::string where(std::string_view tag, const std::string& name) const;
  std::string joint_where(int j) const;
  [[noreturn]] void refuse(const std::string& where, const std::string& problem) const {
    throw ModelError(where + ": " + problem);
  }
  void note(const std::string& where, const std::string& text) const {
    if (notes_) notes_->push_back(where + ": " + text);
  }
  bool disabled(int flag) const { return (m_.opt.disableflags & flag) != 0; }

  void check_options() const;
  void check_actuators() const;
  void note_unmodelled() const;
  BodySpec body(int b) const;
  void add_visual(BodySpec& body, int g) const;
  void add_joints(int b, Mechanism& out) const;
  JointSpec single_joint(int b, int j, const Transform& B) const;
  JointSpec universal_joint(int b, int j1, int j2, const Transform& B) const;
  void check_dof_terms(int j, bool springs_allowed) const;
  void add_spring_damper(int j, Mechanism& out) const;
  void add_equality(int e, Mechanism& out) const;

  std::string path_;
  const mjModel& m_;
  SourceLines lines_;
  std::vector<std::string>* notes_;
};

std::string Importer::name(mjtObj type, int id, std::string_view fallback) const {
  const char* n = mj_id2name(&m_, type, id);
  if (n && *n) return n;
  return std::string(fallback) + std::to_string(id);  // MuJoCo's own numbering of unnamed elements
}

std::string Importer::where(std::string_view tag, const std::string& name) const {
  return located(path_, lines_.named(tag, name));
}

std::string Importer::joint_where(int j) const {
  const std::string n = joint_name(j);
  const int line = lines_.named("joint", n);
  return located(path_, line ? line : lines_.named("freejoint", n));
}

Mechanism Importer::run() {
  check_options();
  check_actuators();
  if (const int line = lines_.first("composite"))
    refuse(located(path_, line), "<composite> is not read: MuJoCo expands it into bodies, tendons and soft "
                                 "constraints that loopdyn does not represent");
  if (m_.ntendon > 0) {
    const std::string t = name(mjOBJ_TENDON, 0, "tendon");
    const int line = lines_.named("tendon", t);
    refuse(located(path_, line ? line : lines_.first("tendon")),
           "tendon '" + t + "': tendons are not read (their springs, limits and equalities would be missing)");
  }
  note_unmodelled();
  Mechanism out;
  out.name = m_.names[0] ? std::string(m_.names) : std::filesystem::path(path_).stem().string();
  out.gravity = disabled(mjDSBL_GRAVITY) ? Vec3::Zero() : vec3(m_.opt.gravity);
  for (int b = 1; b < m_.nbody; ++b) {
    out.bodies.push_back(body(b));
    add_joints(b, out);
  }
  if (!disabled(mjDSBL_EQUALITY) && !disabled(mjDSBL_CONSTRAINT))
    for (int e = 0; e < m_.neq; ++e) add_equality(e, out);
  else if (m_.neq > 0)
    note(path_, "equality constraints are disabled by <flag>: not read");
  return out;
}

// Options that change the passive dynamics beyond gravity.
void Importer::check_options() const {
  const bool fluid = m_.opt.density > 0.0 || m_.opt.viscosity > 0.0;
  if (fluid && !disabled(mjDSBL_PASSIVE))
    refuse(located(path_, lines_.first("option")),
           "<option> density or viscosity: fluid forces are not modelled by loopdyn (set them to 0)");
}

// Actuators at zero control: a bias (servo, muscle) pushes without a command, so its physics
// would be missing; a pure gain acts on the command only and is left out with a note.
void Importer::check_actuators() const {
  if (m_.nu == 0 || disabled(mjDSBL_ACTUATION)) return;
  for (int a = 0; a < m_.nu; ++a) {
    const mjtNum* bias = m_.actuator_biasprm + a * mjNBIAS;
    const bool pushes = std::any_of(bias, bias + mjNBIAS, [](mjtNum v) { return v != 0.0; });
    const std::string n = name(mjOBJ_ACTUATOR, a, "actuator");
    if (m_.actuator_biastype[a] != mjBIAS_NONE && pushes)
      refuse(located(path_, lines_.named("actuator", n) ? lines_.named("actuator", n) : lines_.first("actuator")),
             "actuator '" + n + "' exerts a force at zero control (position or velocity servo, muscle): "
             "actuators are not read, so that force would be missing");
  }
  note(located(path_, lines_.first("actuator")),
       std::to_string(m_.nu) + " actuator(s) not read: at zero control they exert no force");
}

// What loopdyn leaves out without refusing: it acts only on contact, at a limit, or not at all.
void Importer::note_unmodelled() const {
  int colliding = 0;
  for (int g = 0; g < m_.ngeom; ++g) colliding += (m_.geom_contype[g] | m_.geom_conaffinity[g]) != 0;
  if ((colliding > 0 || m_.npair > 0) && !disabled(mjDSBL_CONTACT) && !disabled(mjDSBL_CONSTRAINT))
    note(path_, "contacts are not modelled: " + std::to_string(colliding) +
                    " geom(s) collide in MuJoCo (disable with <option><flag contact=\"disable\"/>)");
  int limited = 0;
  for (int j = 0; j < m_.njnt; ++j) limited += m_.jnt_limited[j] != 0;
  if (limited > 0 && !disabled(mjDSBL_LIMIT) && !disabled(mjDSBL_CONSTRAINT))
    note(path_, "joint limits are not enforced: " + std::to_string(limited) + " limited joint(s)");
  if (m_.nsensor > 0) note(located(path_, lines_.first("sensor")), "sensors are not read");
  if (m_.nkey > 0)
    note(located(path_, lines_.first("key")), "keyframes are not read: the initial state is the reference pose (qpos0)");
}

// Mass, centre of mass and inertia: MuJoCo's principal inertia rotated into body axes.
BodySpec Importer::body(int b) const {
  BodySpec s;
  s.name = body_name(b);
  s.where = where("body", s.name);
  s.mass = m_.body_mass[b];
  s.com = vec3(m_.body_ipos + 3 * b);
  const Mat3 R = rotation(m_.body_iquat + 4 * b);
  s.inertia = R * vec3(m_.body_inertia + 3 * b).asDiagonal() * R.transpose();
  for (int g = 0; g < m_.ngeom; ++g)
    if (m_.geom_bodyid[g] == b && m_.geom_group[g] < 3) add_visual(s, g);  // MuJoCo shows groups 0-2
  return s;
}

// A geom as a viewer shape (MuJoCo sizes are half-sizes); shapes without a VisualSpec are noted.
void Importer::add_visual(BodySpec& body, int g) const {
  const mjtNum* size = m_.geom_size + 3 * g;
  VisualSpec v;
  switch (m_.geom_type[g]) {
    case mjGEOM_SPHERE: v.shape = VisualSpec::Shape::sphere; v.radius = size[0]; break;
    case mjGEOM_CAPSULE: v.shape = VisualSpec::Shape::capsule; v.radius = size[0]; v.length = 2.0 * size[1]; break;
    case mjGEOM_CYLINDER: v.shape = VisualSpec::Shape::cylinder; v.radius = size[0]; v.length = 2.0 * size[1]; break;
    case mjGEOM_BOX: v.shape = VisualSpec::Shape::box; v.size = 2.0 * vec3(size); break;
    default:
      // Meshes too: MuJoCo 2.2 moves a mesh into its own inertial frame and keeps no offset back
      // to the file's coordinates, so the file could not be placed.
      note(where("geom", name(mjOBJ_GEOM, g, "geom")),
           "geom '" + name(mjOBJ_GEOM, g, "geom") + "' of body '" + body.name + "' is not drawn (plane, height "
           "field, ellipsoid and mesh geoms have no loopdyn visual)");
      return;
  }
  v.origin = pose(m_.geom_pos + 3 * g, m_.geom_quat + 4 * g);
  const int mat = m_.geom_matid[g];
  const float* rgba = mat >= 0 ? m_.mat_rgba + 4 * mat : m_.geom_rgba + 4 * g;
  std::copy(rgba, rgba + 4, v.rgba.begin());
  body.visuals.push_back(v);
}

// The body's joints as one loopdyn joint (fixed when there are none), plus its spring-dampers.
void Importer::add_joints(int b, Mechanism& out) const {
  const Transform B = pose(m_.body_pos + 3 * b, m_.body_quat + 4 * b);
  const int n = m_.body_jntnum[b], j0 = m_.body_jntadr[b];
  if (n == 0) {
    JointSpec& j = out.add_joint(body_name(b) + "_weld", JointType::fixed, body_name(m_.body_parentid[b]),
                                 body_name(b), B);
    j.where = where("body", body_name(b));
    return;
  }
  if (n == 1) {
    out.joints.push_back(single_joint(b, j0, B));
    add_spring_damper(j0, out);
    return;
  }
  if (n == 2) {
    out.joints.push_back(universal_joint(b, j0, j0 + 1, B));
    return;
  }
  refuse(where("body", body_name(b)), "body '" + body_name(b) + "' has " + std::to_string(n) +
                                          " joints: loopdyn takes one joint per body, or two hinges through one "
                                          "point with perpendicular axes (a universal joint)");
}

JointSpec Importer::single_joint(int b, int j, const Transform& B) const {
  const int type = m_.jnt_type[j];
  check_dof_terms(j, type == mjJNT_HINGE || type == mjJNT_SLIDE);
  JointSpec s;
  s.name = joint_name(j);
  s.where = joint_where(j);
  s.parent = body_name(m_.body_parentid[b]);
  s.child = body_name(b);
  const Vec3 p = vec3(m_.jnt_pos + 3 * j), axis = vec3(m_.jnt_axis + 3 * j);
  const mjtNum* qpos0 = m_.qpos0 + m_.jnt_qposadr[j];
  s.axis = axis;
  s.child_frame = Transform::translation(p);
  switch (type) {
    case mjJNT_FREE:
      s.type = JointType::free;
      s.child_frame = Transform{};
      s.q.assign(qpos0, qpos0 + 7);
      return s;
    case mjJNT_BALL:
      s.type = JointType::spherical;
      s.parent_frame = B * Transform::translation(p);
      s.q.assign(qpos0, qpos0 + 4);
      return s;
    case mjJNT_SLIDE:
      s.type = JointType::prismatic;
      s.parent_frame = B * Transform::translation(p - qpos0[0] * axis);
      break;
    default:
      s.type = JointType::revolute;
      s.parent_frame = B * Transform{axis_rotation(axis, -qpos0[0]), p};
  }
  s.q = {qpos0[0]};
  return s;
}

// Two hinges through one point with perpendicular axes: Rot(a1, q1 − r1) Rot(a2, q2 − r2) is a
// universal joint with parent_frame = B · T(p) · Rot(a1, −r1) and child_frame = T(p) · Rot(a2, r2).
JointSpec Importer::universal_joint(int b, int j1, int j2, const Transform& B) const {
  const Vec3 p1 = vec3(m_.jnt_pos + 3 * j1), p2 = vec3(m_.jnt_pos + 3 * j2);
  const Vec3 a1 = vec3(m_.jnt_axis + 3 * j1), a2 = vec3(m_.jnt_axis + 3 * j2);
  const bool hinges = m_.jnt_type[j1] == mjJNT_HINGE && m_.jnt_type[j2] == mjJNT_HINGE;
  const double scale = std::max({1.0, p1.norm(), p2.norm()});
  if (!hinges || (p1 - p2).norm() > 1e-12 * scale || std::abs(a1.dot(a2)) > 1e-9)
    refuse(where("body", body_name(b)),
           "body '" + body_name(b) + "' has joints '" + joint_name(j1) + "' (" + std::string(mj_type_name(m_.jnt_type[j1])) +
               ") and '" + joint_name(j2) + "' (" + std::string(mj_type_name(m_.jnt_type[j2])) +
               "): two joints in one body are read only as two hinges through one point with perpendicular "
               "axes (a universal joint)");
  check_dof_terms(j1, false);
  check_dof_terms(j2, false);
  const double r1 = m_.qpos0[m_.jnt_qposadr[j1]], r2 = m_.qpos0[m_.jnt_qposadr[j2]];
  JointSpec s;
  s.name = joint_name(j1) + "+" + joint_name(j2);
  s.type = JointType::universal;
  s.where = joint_where(j1);
  s.parent = body_name(m_.body_parentid[b]);
  s.child = body_name(b);
  s.parent_frame = B * Transform{axis_rotation(a1, -r1), p1};
  s.child_frame = Transform{axis_rotation(a2, r2), p1};
  s.axis = a1;
  s.axis2 = a2;
  s.q = {r1, r2};
  return s;
}

// Per-dof terms loopdyn has no counterpart for (armature, dry friction), and springs or dampers
// where no joint_spring_damper can carry them (ball, free, universal).
void Importer::check_dof_terms(int j, bool springs_allowed) const {
  const int nv = m_.jnt_type[j] == mjJNT_FREE ? 6 : m_.jnt_type[j] == mjJNT_BALL ? 3 : 1;
  const int d0 = m_.jnt_dofadr[j];
  const std::string label = "joint '" + joint_name(j) + "' (" + std::string(mj_type_name(m_.jnt_type[j])) + ")";
  for (int d = d0; d < d0 + nv; ++d) {
    if (m_.dof_armature[d] != 0.0)
      refuse(joint_where(j), label + ": armature is not modelled by loopdyn (its inertia would be missing)");
    if (m_.dof_frictionloss[d] != 0.0 && !disabled(mjDSBL_FRICTIONLOSS) && !disabled(mjDSBL_CONSTRAINT))
      refuse(joint_where(j), label + ": frictionloss (dry friction) is not modelled by loopdyn");
    const bool passive = m_.dof_damping[d] != 0.0 || m_.jnt_stiffness[j] != 0.0;
    if (passive && !springs_allowed && !disabled(mjDSBL_PASSIVE))
      refuse(joint_where(j), label + ": stiffness and damping are read only on a body's single hinge or slide "
                                     "joint (loopdyn's joint_spring_damper)");
  }
}

// stiffness, springref and damping of a hinge or slide: τ = k (springref − q) − c q̇.
void Importer::add_spring_damper(int j, Mechanism& out) const {
  if (disabled(mjDSBL_PASSIVE)) return;
  const int type = m_.jnt_type[j];
  if (type != mjJNT_HINGE && type != mjJNT_SLIDE) return;
  const double k = m_.jnt_stiffness[j], c = m_.dof_damping[m_.jnt_dofadr[j]];
  if (k == 0.0 && c == 0.0) return;
  out.forces.push_back({JointSpringDamperSpec{joint_name(j), k, c, m_.qpos_spring[m_.jnt_qposadr[j]]}, joint_where(j)});
}

// connect: the anchor (eq_data[0:3] in body1, [3:6] in body2 as compiled at qpos0) is a spherical
// loop-closing joint; weld: body2 at relpose (eq_data[3:10]) in body1 is a fixed one; joint: the
// linear part of q1 − r1 = Σ c_k (q2 − r2)^k, refused when a higher coefficient is nonzero.
void Importer::add_equality(int e, Mechanism& out) const {
  const mjtNum* data = m_.eq_data + e * mjNEQDATA;
  const std::string n = name(mjOBJ_EQUALITY, e, "equality");
  const int type = m_.eq_type[e], o1 = m_.eq_obj1id[e], o2 = m_.eq_obj2id[e];
  static constexpr std::array<std::string_view, 5> tags{"connect", "weld", "joint", "tendon", "distance"};
  const int line = lines_.named("equality", n);
  const std::string at = located(path_, line ? line : lines_.first("equality"));
  if (!m_.eq_active[e]) {
    note(at, "equality '" + n + "' is inactive: not read");
    return;
  }
  if (type == mjEQ_CONNECT || type == mjEQ_WELD) {
    JointSpec j;
    j.name = n;
    j.where = at;
    j.cut = true;
    j.parent = body_name(o1);
    j.child = body_name(o2);
    if (type == mjEQ_CONNECT) {
      j.type = JointType::spherical;
      j.parent_frame = Transform::translation(vec3(data));
      j.child_frame = Transform::translation(vec3(data + 3));
    } else {
      j.type = JointType::fixed;
      j.parent_frame = pose(data + 3, data + 6);
    }
    out.joints.push_back(j);
    return;
  }
  if (type != mjEQ_JOINT)
    refuse(at, "equality '" + n + "' (" + std::string(tags[std::clamp(type, 0, 4)]) +
                   "): only connect, weld and joint equalities are read");
  if (std::any_of(data + 2, data + 5, [](mjtNum c) { return c != 0.0; }))
    refuse(at, "equality '" + n + "' (joint): polycoef has a nonzero quadratic or higher coefficient; loopdyn "
                                  "couples joints linearly only");
  const double r1 = m_.qpos0[m_.jnt_qposadr[o1]];
  CouplingSpec c{n, {{joint_name(o1), 1.0}}, data[0] + r1, at};
  if (o2 >= 0) {
    const double r2 = m_.qpos0[m_.jnt_qposadr[o2]];
    c.terms.push_back({joint_name(o2), -data[1]});  // q1 − c1 q2 = c0 + r1 − c1 r2
    c.value -= data[1] * r2;
  }
  out.couplings.push_back(c);
}

}  // namespace

bool is_mjcf_path(std::string_view path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext == ".xml" || ext == ".mjcf";
}

Mechanism load_mjcf(const std::string& path, std::vector<std::string>* notes) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw ModelError("cannot open model file '" + path + "'");
  const ModelPtr model = compile(path, notes);
  return Importer(path, *model, notes).run();
}

}  // namespace loopdyn
