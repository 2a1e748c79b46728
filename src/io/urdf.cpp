// URDF → Mechanism (include/loopdyn/io/urdf.hpp; the mapping is tabled in docs/model-format.md,
// "URDF"). urdfdom reads the standard elements, urdf_xml.cpp the line numbers and <loop_joint>.
#include "loopdyn/io/urdf.hpp"

#include <console_bridge/console.h>
#include <urdf_parser/urdf_parser.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <regex>
#include <string_view>

#include "loopdyn/core/names.hpp"
#include "loopdyn/io/model_file.hpp"
#include "io/urdf_xml.hpp"

namespace loopdyn {
namespace {

namespace fs = std::filesystem;
using urdf_xml::Document;
using urdf_xml::fail;

// ---------------------------------------------------------------------------------------------
// Elements that are not read

// Children of <robot> that neither urdfdom nor loopdyn reads (urdfdom skips them without a word):
// "file:line: <tag> is not read (why)" each, so that a misspelt <joitn> does not vanish unseen.
// <transmission> has its own note (Converter::convert).
std::vector<std::string> unread_elements(const Document& doc) {
  static constexpr std::string_view read[] = {"link", "joint", "material", "loop_joint"};
  std::vector<std::string> out;
  for (const auto* e = doc.robot().FirstChildElement(); e; e = e->NextSiblingElement()) {
    const std::string_view tag = e->Name();
    if (tag == "transmission" || std::find(std::begin(read), std::end(read), tag) != std::end(read)) continue;
    std::string why = "only link, joint, material, loop_joint and transmission are";
    if (tag == "gazebo") why = "Gazebo's simulation settings";
    for (std::string_view known : read)
      if (edit_distance(tag, known) <= 2) why = "a misspelt <" + std::string(known) + ">?";
    out.push_back(doc.source() + ":" + std::to_string(e->GetLineNum()) + ": <" + std::string(tag) + "> is not read (" +
                  why + ")");
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// urdfdom, with its messages caught

// urdfdom reports problems only through console_bridge's log: parseURDF returns null, or, for some
// (a malformed <inertial>), logs an error and keeps going without the element. Any logged error
// therefore fails the read.
class ErrorLog : public console_bridge::OutputHandler {
 public:
  void log(const std::string& text, console_bridge::LogLevel level, const char*, int) override {
    if (level >= console_bridge::CONSOLE_BRIDGE_LOG_ERROR) errors.push_back(text);
  }
  std::vector<std::string> errors;
};

// urdfdom's messages name the element in brackets or quotes ("Joint [j] has no known type [ball]",
// "link 'b' is not unique"): the line of the first joint, link or material so named, trying the
// kinds in that order among those the message mentions ("child link [c] of joint [j]" is joint j's
// problem); 0 when none matches.
int line_of_message(const Document& doc, const std::string& message) {
  static const std::regex quoted(R"(\[([^\]]*)\]|'([^']*)')");
  std::vector<std::string> names;
  for (auto it = std::sregex_iterator(message.begin(), message.end(), quoted); it != std::sregex_iterator(); ++it)
    names.push_back((*it)[1].matched ? (*it)[1].str() : (*it)[2].str());
  std::string lower = message;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* tag : {"joint", "link", "material"}) {
    if (lower.find(tag) == std::string::npos) continue;
    for (const std::string& name : names)
      if (doc.find(tag, name)) return doc.line(tag, name);
  }
  return 0;
}

// The first error, at the line of the first error that names an element (a bad <mass> is logged
// without its link, then "Could not parse inertial element for Link [a]"), which is added to the
// message when it is another one; <robot>'s line when none does.
[[noreturn]] void fail_with(const Document& doc, const std::vector<std::string>& errors) {
  std::string message = "urdfdom: " + errors.front();
  for (const std::string& e : errors) {
    const int line = line_of_message(doc, e);
    if (line == 0) continue;
    if (&e != &errors.front()) message += "; " + e;
    fail(doc.source(), line, message);
  }
  fail(doc.source(), doc.robot().GetLineNum(), message);
}

// Links on a cycle of joints apart from the root have a parent each: urdfdom keeps the file (and
// leaks the cycle's links), and the root never reaches them (the reader stopped on "map::at"
// without a line). Found before urdfdom reads the file: from each link, its parents (the first
// joint naming it as child, in file order) must end at a link without one.
void check_no_detached_cycle(const Document& doc) {
  std::map<std::string, std::string> parent;
  for (const auto* j = doc.robot().FirstChildElement("joint"); j; j = j->NextSiblingElement("joint")) {
    const auto *p = j->FirstChildElement("parent"), *c = j->FirstChildElement("child");
    const char *from = p ? p->Attribute("link") : nullptr, *to = c ? c->Attribute("link") : nullptr;
    if (from && to) parent.emplace(to, from);
  }
  for (const auto* e = doc.robot().FirstChildElement("link"); e; e = e->NextSiblingElement("link")) {
    const char* name = e->Attribute("name");
    if (!name) continue;
    std::string at = name;
    for (std::size_t hops = 0; parent.count(at); ++hops) {
      if (hops == parent.size())
        fail(doc.source(), e->GetLineNum(), "link '" + std::string(name) + "' hangs from a cycle of joints apart "
                                            "from the root (URDF links form a tree from one root; close a loop "
                                            "with <loop_joint>)");
      at = parent.at(at);
    }
  }
}

urdf::ModelInterfaceSharedPtr parse_with_urdfdom(const std::string& text, const Document& doc) {
  static std::mutex mutex;  // console_bridge's handler and level are process-wide
  const std::lock_guard lock(mutex);
  ErrorLog log;
  const console_bridge::LogLevel level = console_bridge::getLogLevel();
  console_bridge::setLogLevel(console_bridge::CONSOLE_BRIDGE_LOG_ERROR);
  console_bridge::useOutputHandler(&log);
  urdf::ModelInterfaceSharedPtr model;
  std::string thrown;
  try {
    model = urdf::parseURDF(text);
  } catch (const std::exception& e) {  // the version attribute's parser throws
    thrown = e.what();
  }
  console_bridge::restorePreviousOutputHandler();
  console_bridge::setLogLevel(level);
  if (!thrown.empty()) fail(doc.source(), doc.robot().GetLineNum(), "urdfdom: " + thrown);
  if (!log.errors.empty()) {
    // A misspelt element is a likely cause (a <joitn>'s child link is left a second root): named.
    for (const std::string& u : unread_elements(doc))
      if (u.find("misspelt") != std::string::npos) log.errors.front() += " (" + u + ")";
    fail_with(doc, log.errors);
  }
  if (!model) fail(doc.source(), doc.robot().GetLineNum(), "urdfdom could not read the robot");
  return model;
}

// ---------------------------------------------------------------------------------------------
// Small conversions

Vec3 vec3_of(const urdf::Vector3& v) { return {v.x, v.y, v.z}; }

Transform transform_of(const urdf::Pose& p) {
  const Quat q(p.rotation.w, p.rotation.x, p.rotation.y, p.rotation.z);
  return {q.normalized().toRotationMatrix(), vec3_of(p.position)};
}

// urdfdom keeps colours as float: the shortest decimal that reads back as that float is the number
// the file wrote (to float's 7 digits), so 0.8 stays 0.8 rather than 0.800000011920929.
double from_float(float x) {
  char buf[32];
  const auto end = std::to_chars(buf, buf + sizeof buf, x).ptr;
  double d = 0.0;
  std::from_chars(buf, end, d);
  return d;
}

bool has_mass(const urdf::Link& link) { return link.inertial && link.inertial->mass != 0.0; }

/// A rotation whose z axis is `normal`: the shortest arc from z, a half turn about x for −z. A
/// loopdyn planar joint moves in its frames' x-y plane, URDF's in the plane normal to its axis.
Mat3 plane_frame(const Vec3& normal) {
  const Vec3 n = normal.normalized();
  if (n.z() < -1.0 + 1e-12) return Vec3(1.0, -1.0, -1.0).asDiagonal();
  return Quat::FromTwoVectors(Vec3::UnitZ(), n).toRotationMatrix();
}

std::string type_name(int urdf_type) {
  switch (urdf_type) {
    case urdf::Joint::REVOLUTE: return "revolute";
    case urdf::Joint::CONTINUOUS: return "continuous";
    case urdf::Joint::PRISMATIC: return "prismatic";
    case urdf::Joint::FLOATING: return "floating";
    case urdf::Joint::PLANAR: return "planar";
    case urdf::Joint::FIXED: return "fixed";
    default: return "unknown";
  }
}

/// The absolute folder of the file `source` names: the working directory for a bare file name
/// ("robot.urdf", whose parent path is empty), against which relative and package:// meshes are
/// looked up.
fs::path folder_of(const std::string& source) {
  const fs::path parent = fs::path(source).parent_path();
  return parent.empty() ? fs::current_path() : fs::absolute(parent).lexically_normal();
}

// ---------------------------------------------------------------------------------------------
// The conversion

class Converter {
 public:
  Converter(const Document& doc, const urdf::ModelInterface& model, std::vector<std::string>* notes)
      : doc_(doc), model_(model), notes_(notes), folder_(folder_of(doc.source())) {}
  Mechanism convert();

 private:
  /// Where a link's frame is: on a body (its own, or the one a massless link was merged into) or
  /// on the ground, with the link frame in that body's frame.
  struct Place {
    std::string body;
    Transform pose;
  };

  void check_one_parent_each() const;
  void place_root(const urdf::Link& root);
  void place_children(const urdf::Link& link);
  const Place& place(const std::string& link, int line, const std::string& who) const;
  BodySpec body(const urdf::Link& link) const;
  void add_visuals(const urdf::Link& link, const tinyxml2::XMLElement& xml);
  VisualSpec visual(const urdf::Visual& v, const Transform& pose, const std::string& link, int line) const;
  std::array<double, 4> rgba(const urdf::Visual& v, const tinyxml2::XMLElement& xml, const std::string& link) const;
  std::string mesh_path(const std::string& uri, const std::string& link) const;
  Vec3 axis(const urdf::Joint& j) const;
  void add_joint(const urdf::Joint& j);
  void add_dynamics(const urdf::Joint& j, const JointSpec& spec);
  void add_loop_joint(const urdf_xml::LoopJointXml& x);
  void note(const std::string& text) const {
    if (notes_) notes_->push_back(doc_.source() + ": " + text);
  }

  [[noreturn]] void fail_at(int line, const std::string& problem) const { fail(doc_.source(), line, problem); }

  const Document& doc_;
  const urdf::ModelInterface& model_;
  std::vector<std::string>* notes_;
  fs::path folder_;  ///< absolute
  std::map<std::string, Place> places_;
  std::map<std::string, std::size_t> body_index_;
  Mechanism mech_;
};

// urdfdom 3.0 keeps a link that is the child of two joints (the last one read wins): a tree has one.
void Converter::check_one_parent_each() const {
  std::map<std::string, std::string> first;  // child link -> its first joint in file order
  for (const auto* e = doc_.robot().FirstChildElement("joint"); e; e = e->NextSiblingElement("joint")) {
    const urdf::JointConstSharedPtr j = model_.getJoint(e->Attribute("name"));
    const auto [it, added] = first.emplace(j->child_link_name, j->name);
    if (!added)
      fail_at(e->GetLineNum(), "joint '" + j->name + "': link '" + j->child_link_name + "' is already the child of joint '" +
                                   it->second + "' (URDF links form a tree; close a loop with <loop_joint>)");
  }
}

// A root named `world` is the ground (the Gazebo and ROS convention), as is a massless root (a
// `base_link` frame); any other root is a body fixed to the ground (Pinocchio's default).
void Converter::place_root(const urdf::Link& root) {
  if (root.name == "world" && root.inertial)
    fail_at(doc_.line("link", root.name, "inertial"),
            "link 'world' is the ground (the fixed world frame) and cannot have an <inertial>");
  places_[root.name] = {has_mass(root) && root.name != "world" ? root.name : std::string(ground_name), {}};
  if (root.name != "world" && !has_mass(root)) note("massless root link '" + root.name + "' is the ground");
  place_children(root);
}

// Massless links on fixed joints go into their parent's place; other links are their own bodies.
void Converter::place_children(const urdf::Link& link) {
  for (const urdf::LinkSharedPtr& child : link.child_links) {
    const urdf::Joint& j = *child->parent_joint;
    if (has_mass(*child)) {
      places_[child->name] = {child->name, {}};
    } else if (j.type == urdf::Joint::FIXED) {
      const Place& p = places_.at(link.name);
      places_[child->name] = {p.body, p.pose * transform_of(j.parent_to_joint_origin_transform)};
    } else {
      fail_at(doc_.line("link", child->name),
              "link '" + child->name + "' has no mass (no <inertial> or mass 0) but moves on " + type_name(j.type) +
                  " joint '" + j.name + "': give it an <inertial> with a positive mass (only links on fixed "
                  "joints can be merged into their parent)");
    }
    place_children(*child);
  }
}

const Converter::Place& Converter::place(const std::string& link, int line, const std::string& who) const {
  const auto it = places_.find(link);
  if (it == places_.end()) fail_at(line, who + ": unknown link '" + link + "'");
  return it->second;
}

// Mass, centre of mass and inertia: URDF gives the tensor in the <inertial> origin's axes, loopdyn
// in the body's, I_body = R I R^T with R the origin's rotation.
BodySpec Converter::body(const urdf::Link& link) const {
  const urdf::Inertial& in = *link.inertial;
  BodySpec b;
  b.name = link.name;
  b.where = doc_.where("link", link.name);
  if (!(in.mass > 0.0))
    fail_at(doc_.line("link", link.name, "inertial"),
            "link '" + link.name + "': mass must be positive, got " + exact_number(in.mass));
  b.mass = in.mass;
  const Transform c = transform_of(in.origin);
  Mat3 I;
  I << in.ixx, in.ixy, in.ixz, in.ixy, in.iyy, in.iyz, in.ixz, in.iyz, in.izz;
  b.com = c.p;
  b.inertia = c.R * I * c.R.transpose();
  return b;
}

// urdfdom keeps a link's visuals in file order, each one read or the file refused: the k-th of
// visual_array is the k-th <visual> element.
void Converter::add_visuals(const urdf::Link& link, const tinyxml2::XMLElement& xml) {
  const Place& p = places_.at(link.name);
  const tinyxml2::XMLElement* element = xml.FirstChildElement("visual");
  for (const urdf::VisualSharedPtr& v : link.visual_array) {
    if (p.body == ground_name) {
      note("the visual shapes of link '" + link.name + "' are not kept: it is the ground, which has none");
      return;
    }
    VisualSpec shape = visual(*v, p.pose, link.name, element->GetLineNum());
    shape.rgba = rgba(*v, *element, link.name);
    if (shape.shape == VisualSpec::Shape::mesh) shape.file = mesh_path(shape.file, link.name);
    mech_.bodies[body_index_.at(p.body)].visuals.push_back(shape);
    element = element->NextSiblingElement("visual");
  }
}

// urdfdom reads negative sizes as given; the model file refuses them (and `convert` would write a
// file that cannot be read back), so they are refused here, at the <visual>'s line.
VisualSpec Converter::visual(const urdf::Visual& v, const Transform& pose, const std::string& link, int line) const {
  const auto positive = [&](double x, const char* what) {
    if (!(x > 0.0)) fail_at(line, "link '" + link + "': <visual> " + what + " must be positive, got " + exact_number(x));
    return x;
  };
  VisualSpec s;
  s.origin = pose * transform_of(v.origin);
  switch (v.geometry->type) {
    case urdf::Geometry::SPHERE:
      s.shape = VisualSpec::Shape::sphere;
      s.radius = positive(static_cast<const urdf::Sphere&>(*v.geometry).radius, "sphere radius");
      break;
    case urdf::Geometry::BOX:
      s.shape = VisualSpec::Shape::box;
      s.size = vec3_of(static_cast<const urdf::Box&>(*v.geometry).dim);
      for (int k = 0; k < 3; ++k) positive(s.size(k), "box size");
      break;
    case urdf::Geometry::CYLINDER: {  // both along z, full length
      const auto& c = static_cast<const urdf::Cylinder&>(*v.geometry);
      s.shape = VisualSpec::Shape::cylinder;
      s.radius = positive(c.radius, "cylinder radius");
      s.length = positive(c.length, "cylinder length");
      break;
    }
    case urdf::Geometry::MESH: {
      const auto& m = static_cast<const urdf::Mesh&>(*v.geometry);
      s.shape = VisualSpec::Shape::mesh;
      s.file = m.filename;
      s.scale = vec3_of(m.scale);
      break;
    }
  }
  return s;
}

// A visual's colour: its material's <color>, or that of the top-level <material> it names. urdfdom
// leaves a material without one (a texture only, a name defined nowhere) at black, which cannot be
// told from a black written in the file: the XML tells; such a visual keeps loopdyn's grey.
std::array<double, 4> Converter::rgba(const urdf::Visual& v, const tinyxml2::XMLElement& xml, const std::string& link) const {
  const tinyxml2::XMLElement* material = xml.FirstChildElement("material");
  if (!material || !v.material) return VisualSpec().rgba;
  const char* name = material->Attribute("name");
  const tinyxml2::XMLElement* named = name ? doc_.find("material", name) : nullptr;
  if (!material->FirstChildElement("color") && !(named && named->FirstChildElement("color"))) {
    note("material '" + v.material->name + "' of link '" + link + "' has no colour (textures are not read): drawn grey");
    return VisualSpec().rgba;
  }
  const urdf::Color& c = v.material->color;
  return {from_float(c.r), from_float(c.g), from_float(c.b), from_float(c.a)};
}

// package://pkg/rest is looked up as <dir>/rest for the URDF's folder and each folder above it
// named pkg, then as <dir>/pkg/rest; file:// and relative paths from the URDF's folder. A file
// found is kept as its absolute path; one not found keeps the text as written, with a note.
std::string Converter::mesh_path(const std::string& uri, const std::string& link) const {
  const std::string package = "package://", file = "file://";
  std::vector<fs::path> candidates;
  if (uri.rfind(package, 0) == 0) {
    const std::string rest = uri.substr(package.size());
    const std::string pkg = rest.substr(0, rest.find('/'));
    const std::string inside = rest.size() > pkg.size() ? rest.substr(pkg.size() + 1) : "";
    for (fs::path dir = folder_; ; dir = dir.parent_path()) {
      if (dir.filename() == pkg) candidates.push_back(dir / inside);
      candidates.push_back(dir / pkg / inside);
      if (dir == dir.parent_path()) break;
    }
  } else {
    const fs::path p = uri.rfind(file, 0) == 0 ? fs::path(uri.substr(file.size())) : fs::path(uri);
    candidates.push_back(p.is_absolute() ? p : folder_ / p);
  }
  std::error_code ec;
  for (const fs::path& c : candidates)
    if (fs::is_regular_file(c, ec)) return fs::absolute(c).lexically_normal().string();
  note("mesh '" + uri + "' of link '" + link + "' not found: kept as written");
  return uri;
}

Vec3 Converter::axis(const urdf::Joint& j) const {
  const Vec3 a = vec3_of(j.axis);
  if (!a.allFinite() || a.isZero(0.0))
    fail_at(doc_.line("joint", j.name, "axis"), "joint '" + j.name + "': <axis> must be a non-zero vector");
  return a;
}

void Converter::add_joint(const urdf::Joint& j) {
  const Place& parent = places_.at(j.parent_link_name);
  const Place& child = places_.at(j.child_link_name);
  if (child.body != j.child_link_name) return;  // a massless link merged into its parent
  JointSpec s;
  s.name = j.name;
  s.parent = parent.body;
  s.child = child.body;
  s.parent_frame = parent.pose * transform_of(j.parent_to_joint_origin_transform);
  s.where = doc_.where("joint", j.name);
  switch (j.type) {
    case urdf::Joint::REVOLUTE:
    case urdf::Joint::CONTINUOUS:
      s.type = JointType::revolute;
      s.axis = axis(j);
      break;
    case urdf::Joint::PRISMATIC:
      s.type = JointType::prismatic;
      s.axis = axis(j);
      break;
    case urdf::Joint::FLOATING: s.type = JointType::free; break;
    case urdf::Joint::FIXED: s.type = JointType::fixed; break;
    case urdf::Joint::PLANAR: {
      s.type = JointType::planar;
      const Transform R = Transform::rotation(plane_frame(axis(j)));
      s.parent_frame = s.parent_frame * R;
      s.child_frame = R;
      break;
    }
    default: fail_at(doc_.line("joint", j.name), "joint '" + j.name + "': unsupported type");
  }
  // <limit effort>: the actuator limit the controllers on the joint respect (JointSpec::effort);
  // position and velocity limits are not modelled. 0 is URDF's "not given"; a negative one is a
  // typo that, dropped, would leave the joint without the limit the file asks for.
  if (j.limits && j.limits->effort < 0.0)
    fail_at(doc_.line("joint", j.name, "limit"),
            "joint '" + j.name + "': <limit effort> must not be negative, got " + exact_number(j.limits->effort));
  if (j.limits && j.limits->effort > 0.0 && (s.type == JointType::revolute || s.type == JointType::prismatic))
    s.effort = j.limits->effort;
  mech_.joints.push_back(s);
  add_dynamics(j, s);
}

// <dynamics damping> is a joint damper (a spring-damper of zero stiffness) on 1-coordinate joints;
// <mimic> is the coupling q(this) = multiplier · q(joint) + offset.
void Converter::add_dynamics(const urdf::Joint& j, const JointSpec& spec) {
  const bool one_coordinate = spec.type == JointType::revolute || spec.type == JointType::prismatic;
  if (j.dynamics && j.dynamics->damping != 0.0) {
    if (!(j.dynamics->damping > 0.0))
      fail_at(doc_.line("joint", j.name, "dynamics"), "joint '" + j.name + "': damping must not be negative");
    if (one_coordinate)
      mech_.forces.push_back({JointSpringDamperSpec{j.name, 0.0, j.dynamics->damping, 0.0}, spec.where});
    else
      note("damping of " + type_name(j.type) + " joint '" + j.name + "' ignored (only 1-coordinate joints have one)");
  }
  if (j.dynamics && j.dynamics->friction != 0.0) note("friction of joint '" + j.name + "' ignored");
  if (j.mimic)
    mech_.couplings.push_back(
        {"mimic_" + j.name, {{j.mimic->joint_name, j.mimic->multiplier}, {j.name, -1.0}}, -j.mimic->offset, spec.where});
}

void Converter::add_loop_joint(const urdf_xml::LoopJointXml& x) {
  const std::string who = "loop_joint '" + x.name + "'";
  const bool taken = model_.getJoint(x.name) ||
                     std::any_of(mech_.joints.begin(), mech_.joints.end(), [&](const JointSpec& j) { return j.name == x.name; });
  if (taken) fail_at(x.line, who + ": another joint has that name");
  const Place& parent = place(x.parent, x.parent_line, who);
  const Place& child = place(x.child, x.child_line, who);
  JointSpec s;
  s.name = x.name;
  s.type = x.type;
  s.parent = parent.body;
  s.child = child.body;
  s.parent_frame = parent.pose * x.origin;
  s.child_frame = child.pose * x.child_origin;
  if (x.type != JointType::spherical && x.type != JointType::fixed) s.axis = x.axis;  // else loopdyn's default
  if (x.type == JointType::universal) s.axis2 = x.axis2;
  if (x.type == JointType::planar) {
    const Transform R = Transform::rotation(plane_frame(x.axis));
    s.parent_frame = s.parent_frame * R;
    s.child_frame = s.child_frame * R;
    s.axis = Vec3::UnitZ();
  }
  s.cut = true;
  s.where = doc_.source() + ":" + std::to_string(x.line);
  mech_.joints.push_back(s);
}

// Bodies and joints in file order (the order the file's author reads); a massive root's anchor
// first, loop joints last.
Mechanism Converter::convert() {
  mech_.name = model_.getName();
  check_one_parent_each();
  const urdf::LinkConstSharedPtr root = model_.getRoot();
  place_root(*root);
  const tinyxml2::XMLElement& robot = doc_.robot();
  for (const auto* e = robot.FirstChildElement("link"); e; e = e->NextSiblingElement("link")) {
    const urdf::LinkConstSharedPtr link = model_.getLink(e->Attribute("name"));
    if (places_.at(link->name).body != link->name) continue;
    body_index_[link->name] = mech_.bodies.size();
    mech_.bodies.push_back(body(*link));
  }
  if (places_.at(root->name).body == root->name) {
    const std::string anchor = "ground_to_" + root->name;
    if (model_.getJoint(anchor)) fail_at(doc_.line("joint", anchor), "joint '" + anchor + "': the name loopdyn gives the "
                                                                       "fixed joint of the root link to the ground is taken");
    mech_.add_joint(anchor, JointType::fixed, std::string(ground_name), root->name).where = doc_.where("link", root->name);
  }
  for (const auto* e = robot.FirstChildElement("link"); e; e = e->NextSiblingElement("link"))
    add_visuals(*model_.getLink(e->Attribute("name")), *e);
  for (const auto* e = robot.FirstChildElement("joint"); e; e = e->NextSiblingElement("joint"))
    add_joint(*model_.getJoint(e->Attribute("name")));
  for (const urdf_xml::LoopJointXml& x : urdf_xml::read_loop_joints(doc_)) add_loop_joint(x);
  int transmissions = 0;
  for (const auto* e = robot.FirstChildElement("transmission"); e; e = e->NextSiblingElement("transmission")) ++transmissions;
  if (transmissions > 0) note(std::to_string(transmissions) + " <transmission> element(s) ignored");
  if (notes_) {
    const std::vector<std::string> unread = unread_elements(doc_);
    notes_->insert(notes_->end(), unread.begin(), unread.end());
  }
  return mech_;
}

}  // namespace

bool is_urdf_path(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext == ".urdf";
}

Mechanism parse_urdf(const std::string& text, const std::string& source, std::vector<std::string>* notes) {
  const Document doc(text, source);
  check_no_detached_cycle(doc);
  const urdf::ModelInterfaceSharedPtr model = parse_with_urdfdom(text, doc);
  return Converter(doc, *model, notes).convert();
}

Mechanism load_urdf(const std::string& path, std::vector<std::string>* notes) {
  return parse_urdf(read_model_text(path), path, notes);
}

}  // namespace loopdyn
