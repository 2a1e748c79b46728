// YAML model file reader and writer (format: docs/model-format.md).
//
// The reader checks syntax and shape only: YAML well-formedness, known keys, required keys,
// value types, vector lengths and joint coordinate counts. Semantic checks (mass sign, inertia
// validity, names, axes, connectivity) belong to Model::build, which reports them at the `where`
// location ("file:line") stored in every spec. The writer emits what the reader reads, leaving out
// keys at their default.
#include "loopdyn/io/model_file.hpp"
#include "loopdyn/io/urdf.hpp"

#include <yaml-cpp/yaml.h>  // the writer

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <sstream>
#include <string_view>
#include <system_error>
#include <utility>
#include <variant>
#include <vector>

#include "loopdyn/io/mjcf.hpp"
#include "loopdyn/core/joints.hpp"
#include "loopdyn/core/model.hpp"
#include "loopdyn/core/names.hpp"
#include "io/yaml_tree.hpp"  // the reader

namespace loopdyn {

namespace {

using Keys = std::initializer_list<std::string_view>;

/// Coordinate counts and layouts of one joint type, as the model file spells them.
struct JointShape {
  JointType type;
  int nq, nv;
  std::string_view q_layout, u_layout;
  bool has_axis, has_axis2;
};

constexpr std::array<JointShape, 8> joint_shapes{{
    {JointType::revolute, Revolute::nq, Revolute::nv, "[angle]", "[rate]", true, false},
    {JointType::prismatic, Prismatic::nq, Prismatic::nv, "[d]", "[rate]", true, false},
    {JointType::cylindrical, Cylindrical::nq, Cylindrical::nv, "[d, angle]", "[d rate, angle rate]", true, false},
    {JointType::universal, Universal::nq, Universal::nv, "[a1, a2]", "[a1 rate, a2 rate]", true, true},
    {JointType::spherical, Spherical::nq, Spherical::nv, "[w, x, y, z]", "[wx, wy, wz]", false, false},
    {JointType::planar, Planar::nq, Planar::nv, "[x, y, theta]", "[x rate, y rate, theta rate]", false, false},
    {JointType::free, Free::nq, Free::nv, "[x, y, z, w, qx, qy, qz]", "[vx, vy, vz, wx, wy, wz]", false, false},
    {JointType::fixed, Fixed::nq, Fixed::nv, "[]", "[]", false, false},
}};

const JointShape& shape_of(JointType type) {
  for (const auto& s : joint_shapes)
    if (s.type == type) return s;
  return joint_shapes.back();  // unreachable: every JointType is listed
}

std::string joint_type_list() {
  std::string out;
  for (const auto& s : joint_shapes) out += (out.empty() ? "" : ", ") + std::string(to_string(s.type));
  return out;
}

constexpr std::string_view force_type_list =
    "joint_spring_damper, point_spring_damper, joint_force, body_force, body_torque, joint_pd";

constexpr std::string_view constraint_type_list = "gear, linear";

std::string join(Keys keys) {
  std::string out;
  for (const auto k : keys) {
    if (!out.empty()) out += ", ";
    out += k;
  }
  return out;
}

bool contains(Keys keys, std::string_view key) {
  for (const auto k : keys)
    if (k == key) return true;
  return false;
}

// Appended piecewise: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string at -O3.
std::string in_quotes(std::string_view s) {
  std::string out(1, '\'');
  out.append(s);
  out += '\'';
  return out;
}

std::string count_text(std::size_t n) { return std::to_string(n) + (n == 1 ? " number" : " numbers"); }

/// Reads the scalar value of `key` in a mapping without any checks; empty when unavailable.
std::optional<std::string> peek_scalar(const yaml::Node& map, std::string_view key) {
  if (!map.IsMap()) return std::nullopt;
  const yaml::Node value = map[key];
  if (!value.IsDefined() || !value.IsScalar()) return std::nullopt;
  return value.Scalar();
}

/// How a message names a value: a key of a labelled item ("'mass' of body 'b'") or a given text,
/// then an optional note ("(revolute)") and element number ("(element 2)"). It holds views and is
/// put together only when a message is written, so that reading a valid file builds no message
/// text (a 60,000-body file has a million values). Pass it down a call, never keep it.
class What {
 public:
  What(const std::string& text) : base_(text) {}  // NOLINT(google-explicit-constructor): any text names a value
  What(std::string_view key, const std::string& owner) : base_(key), owner_(&owner) {}
  What note(std::string_view note) const {
    What w = *this;
    w.note_ = note;
    return w;
  }
  What element(std::size_t index) const {
    What w = *this;
    w.element_ = index + 1;
    return w;
  }
  std::string str() const {
    std::string out = owner_ ? in_quotes(base_) + " of " + *owner_ : std::string(base_);
    if (!note_.empty()) out.append(" (").append(note_).append(")");
    if (element_ > 0) out.append(" (element ").append(std::to_string(element_)).append(")");
    return out;
  }
  friend std::string operator+(const What& what, std::string_view rest) { return what.str().append(rest); }

 private:
  std::string_view base_;
  const std::string* owner_ = nullptr;
  std::string_view note_;
  std::size_t element_ = 0;
};

class MapReader;

/// Converts YAML nodes into values, reporting problems as ModelError "source:line: problem".
class Parser {
 public:
  explicit Parser(std::string source) : source_(std::move(source)) {}

  Mechanism parse(const std::string& text) const;

  std::string where(const yaml::Node& node) const { return where(node.mark()); }
  std::string where(const yaml::Mark& mark) const { return source_ + ":" + std::to_string(std::max(mark.line, 0) + 1); }
  [[noreturn]] void fail(const yaml::Node& at, const std::string& problem) const { fail(at.mark(), problem); }
  [[noreturn]] void fail(const yaml::Mark& at, const std::string& problem) const {
    throw ModelError(where(at) + ": " + problem);
  }

  // Value conversions; `what` names the value in messages ("'mass' of body 'b'").
  std::string to_text(const yaml::Node& node, const What& what) const;
  double to_number(const yaml::Node& node, const What& what) const;
  std::vector<double> to_numbers(const yaml::Node& node, const What& what, bool allow_scalar) const;
  std::vector<double> to_numbers(const yaml::Node& node, const What& what, std::size_t count,
                                 std::string_view layout, bool allow_scalar) const;
  Vec3 to_vec3(const yaml::Node& node, const What& what) const;
  bool to_flag(const yaml::Node& node, const What& what) const;
  Transform to_frame(const yaml::Node& node, const What& what) const;
  Mat3 to_inertia(const yaml::Node& node, const What& what) const;

 private:
  /// Calls `item(node, index)` for every element of the top-level list `key` (absent or empty = none).
  template <class F>
  void for_each_item(const yaml::Node& root, std::string_view key, F&& item) const;

  BodySpec body(const yaml::Node& node, int index) const;
  VisualSpec visual(const yaml::Node& node, const std::string& label) const;
  JointSpec joint(const yaml::Node& node, int index) const;
  MarkerSpec marker(const yaml::Node& node, int index) const;
  ForceSpec force(const yaml::Node& node, int index) const;
  CouplingSpec coupling(const yaml::Node& node, int index) const;
  DriveSpec drive(const yaml::Node& node, int index, const std::vector<JointSpec>& joints) const;
  TimeFunction motion(const MapReader& m, const yaml::Node& node, const JointSpec* joint) const;

  std::string source_;
};

/// A YAML mapping being read: checks that it is a mapping, rejects unknown and duplicate keys and
/// hands out its fields by name, naming itself (`label`, e.g. "body 'link1'") in messages.
class MapReader {
 public:
  MapReader(const Parser& parser, const yaml::Node& node, std::string label)
      : parser_(parser), node_(node), label_(std::move(label)) {
    if (!node.IsMap()) parser.fail(node, label_ + " must be a mapping of keys to values");
  }

  /// Renames the map after its `name` field when it has a plain one ("body #2" -> "body 'arm'").
  void name_by(std::string_view kind) {
    if (const auto name = peek_scalar(node_, "name")) label_ = std::string(kind) + " " + in_quotes(*name);
  }

  /// Fails on the first key not in `allowed`, given twice, or without a value (unless it is one of
  /// `may_be_empty`). An empty value is reported here, at its key.
  void allow(Keys allowed, Keys may_be_empty = {}) const {
    for (std::size_t n = 0; n < node_.size(); ++n) {
      const auto entry = node_.entry(n);
      const yaml::Node& key = entry.first;
      if (!key.IsScalar()) parser_.fail(key, "keys of " + label_ + " must be plain names");
      const std::string_view k = key.text();
      if (!contains(allowed, k))
        parser_.fail(key,
                     "unknown key " + in_quotes(k) + " in " + label_ + " (expected one of: " + join(allowed) + ")");
      for (std::size_t before = 0; before < n; ++before)  // a mapping has a handful of keys
        if (node_.entry(before).first.text() == k)
          parser_.fail(key, "duplicate key " + in_quotes(k) + " in " + label_);
      if (entry.second.IsNull() && !contains(may_be_empty, k)) parser_.fail(key, field(k) + " has no value");
    }
  }

  const std::string& label() const { return label_; }
  What field(std::string_view key) const { return What(key, label_); }

  yaml::Node optional(std::string_view key) const { return node_[key]; }
  yaml::Node required(std::string_view key) const {
    yaml::Node value = optional(key);
    if (!value.IsDefined()) parser_.fail(node_, label_ + " is missing required key " + in_quotes(key));
    return value;
  }

  std::string text(std::string_view key) const { return parser_.to_text(required(key), field(key)); }
  double number(std::string_view key) const { return parser_.to_number(required(key), field(key)); }
  double number(std::string_view key, double fallback) const {
    const yaml::Node v = optional(key);
    return v.IsDefined() ? parser_.to_number(v, field(key)) : fallback;
  }
  Vec3 vec3(std::string_view key) const { return parser_.to_vec3(required(key), field(key)); }
  Vec3 vec3(std::string_view key, const Vec3& fallback) const {
    const yaml::Node v = optional(key);
    return v.IsDefined() ? parser_.to_vec3(v, field(key)) : fallback;
  }
  bool flag(std::string_view key, bool fallback) const {
    const yaml::Node v = optional(key);
    return v.IsDefined() ? parser_.to_flag(v, field(key)) : fallback;
  }
  Transform frame(std::string_view key) const {
    const yaml::Node v = optional(key);
    return v.IsDefined() ? parser_.to_frame(v, field(key)) : Transform{};
  }

 private:
  const Parser& parser_;
  yaml::Node node_;
  std::string label_;
};

// ---------------------------------------------------------------------------------------------
// Value conversions

std::string Parser::to_text(const yaml::Node& node, const What& what) const {
  if (!node.IsScalar()) fail(node, what + " must be a plain text value");
  return node.Scalar();
}

double Parser::to_number(const yaml::Node& node, const What& what) const {
  if (node.IsNull()) fail(node, what + " must be a number, got an empty value");
  if (!node.IsScalar()) fail(node, what + " must be a number, got a " + (node.IsSequence() ? "list" : "mapping"));
  double value = 0.0;
  if (!yaml::decode_number(node.text(), value))
    fail(node, what + " must be a number, got " + in_quotes(node.Scalar()));
  if (!std::isfinite(value)) fail(node, what + " must be a finite number, got " + in_quotes(node.Scalar()));
  return value;
}

std::vector<double> Parser::to_numbers(const yaml::Node& node, const What& what, bool allow_scalar) const {
  if (allow_scalar && node.IsScalar()) return {to_number(node, what)};
  if (!node.IsSequence()) fail(node, what + " must be a list of numbers ([a, b, ...])");
  std::vector<double> values;
  values.reserve(node.size());
  for (std::size_t k = 0; k < node.size(); ++k) values.push_back(to_number(node[k], what.element(k)));
  return values;
}

std::vector<double> Parser::to_numbers(const yaml::Node& node, const What& what, std::size_t count,
                                       std::string_view layout, bool allow_scalar) const {
  if (node.IsScalar() && !allow_scalar)
    fail(node, what + " must be a list of " + count_text(count) + " " + std::string(layout) + ", got a single value");
  std::vector<double> values = to_numbers(node, what, allow_scalar);
  if (values.size() != count)
    fail(node, what + " must have " + count_text(count) + " " + std::string(layout) + ", got " +
                   std::to_string(values.size()));
  return values;
}

Vec3 Parser::to_vec3(const yaml::Node& node, const What& what) const {
  const std::vector<double> v = to_numbers(node, what, 3, "[x, y, z]", false);
  return Vec3(v[0], v[1], v[2]);
}

bool Parser::to_flag(const yaml::Node& node, const What& what) const {
  bool value = false;
  if (!node.IsScalar() || !yaml::decode_flag(node.text(), value)) fail(node, what + " must be true or false");
  return value;
}

Transform Parser::to_frame(const yaml::Node& node, const What& what) const {
  const MapReader m(*this, node, what.str());
  m.allow({"xyz", "rpy"});
  return {rpy_rotation(m.vec3("rpy", Vec3::Zero())), m.vec3("xyz", Vec3::Zero())};
}

// [Ixx, Iyy, Izz] or [Ixx, Iyy, Izz, Ixy, Ixz, Iyz]: plain tensor components (I(0,1) = Ixy); or
// the matrix itself, three rows of three (its symmetry is Model::build's check, as the rest).
Mat3 Parser::to_inertia(const yaml::Node& node, const What& what) const {
  if (node.IsSequence() && node.size() > 0 && node[0].IsSequence()) {
    if (node.size() != 3)
      fail(node, what + " as a matrix must have 3 rows of 3 numbers, got " + std::to_string(node.size()) + " rows");
    Mat3 I;
    for (std::size_t r = 0; r < 3; ++r) {
      const std::vector<double> row = to_numbers(node[r], what.element(r), 3, "(a row of the matrix)", false);
      for (int c = 0; c < 3; ++c) I(static_cast<int>(r), c) = row[c];
    }
    return I;
  }
  const std::vector<double> v = to_numbers(node, what, false);
  if (v.size() != 3 && v.size() != 6)
    fail(node, what + " must have 3 numbers [Ixx, Iyy, Izz], 6 numbers [Ixx, Iyy, Izz, Ixy, Ixz, Iyz] or 3 rows " +
                   "of 3, got " + std::to_string(v.size()) + " numbers");
  const double xy = v.size() == 6 ? v[3] : 0.0, xz = v.size() == 6 ? v[4] : 0.0, yz = v.size() == 6 ? v[5] : 0.0;
  Mat3 I;
  I << v[0], xy, xz, xy, v[1], yz, xz, yz, v[2];
  return I;
}

// ---------------------------------------------------------------------------------------------
// Items

BodySpec Parser::body(const yaml::Node& node, int index) const {
  MapReader m(*this, node, "body #" + std::to_string(index + 1));
  m.name_by("body");
  m.allow({"name", "mass", "com", "inertia", "visuals"}, {"visuals"});
  BodySpec b;
  b.name = m.text("name");
  b.mass = m.number("mass");
  b.com = m.vec3("com", Vec3::Zero());
  b.inertia = to_inertia(m.required("inertia"), m.field("inertia"));
  if (const yaml::Node v = m.optional("visuals"); v.IsDefined() && !v.IsNull()) {
    if (!v.IsSequence()) fail(v, m.field("visuals") + " must be a list of shapes");
    for (std::size_t k = 0; k < v.size(); ++k)
      b.visuals.push_back(visual(v[k], "visual #" + std::to_string(k + 1) + " of " + m.label()));
  }
  b.where = where(node);
  return b;
}

// One shape: `shape` names it and decides which of size, radius, length, file, scale apply.
VisualSpec Parser::visual(const yaml::Node& node, const std::string& label) const {
  const MapReader m(*this, node, label);
  const yaml::Node shape_node = m.required("shape");
  const std::string shape_name = to_text(shape_node, m.field("shape"));
  const auto shape = parse_visual_shape(shape_name);
  if (!shape)
    fail(shape_node, "unknown shape " + in_quotes(shape_name) + " in " + label +
                         " (expected one of: box, sphere, cylinder, capsule, mesh)");
  VisualSpec v;
  v.shape = *shape;
  const auto positive = [&](std::string_view key) {
    const double x = m.number(key);
    if (x <= 0.0) fail(m.required(key), m.field(key) + " must be positive, got " + exact_number(x));
    return x;
  };
  switch (v.shape) {
    case VisualSpec::Shape::box:
      m.allow({"shape", "size", "origin", "rgba"});
      v.size = m.vec3("size");
      if ((v.size.array() <= 0.0).any()) fail(m.required("size"), m.field("size") + " must have three positive edge lengths");
      break;
    case VisualSpec::Shape::sphere:
      m.allow({"shape", "radius", "origin", "rgba"});
      v.radius = positive("radius");
      break;
    case VisualSpec::Shape::cylinder:
    case VisualSpec::Shape::capsule:
      m.allow({"shape", "radius", "length", "origin", "rgba"});
      v.radius = positive("radius");
      v.length = positive("length");
      break;
    case VisualSpec::Shape::mesh:
      m.allow({"shape", "file", "scale", "origin", "rgba"});
      v.file = m.text("file");
      v.scale = m.vec3("scale", v.scale);
      break;
  }
  v.origin = m.frame("origin");
  if (const yaml::Node c = m.optional("rgba"); c.IsDefined()) {
    const std::vector<double> rgba = to_numbers(c, m.field("rgba"), 4, "[red, green, blue, alpha]", false);
    for (std::size_t k = 0; k < 4; ++k) {
      if (rgba[k] < 0.0 || rgba[k] > 1.0) fail(c, m.field("rgba") + " must have values in [0, 1]");
      v.rgba[k] = rgba[k];
    }
  }
  return v;
}

JointSpec Parser::joint(const yaml::Node& node, int index) const {
  MapReader m(*this, node, "joint #" + std::to_string(index + 1));
  m.name_by("joint");
  m.allow({"name", "type", "parent", "child", "parent_frame", "child_frame", "axis", "axis2", "q", "u", "cut", "independent",
           "effort"});
  JointSpec j;
  j.name = m.text("name");
  const yaml::Node type_node = m.required("type");
  const std::string type_name = to_text(type_node, m.field("type"));
  const auto type = parse_joint_type(type_name);
  if (!type)
    fail(type_node, "unknown joint type " + in_quotes(type_name) + " in " + m.label() +
                        " (expected one of: " + joint_type_list() + ")");
  j.type = *type;
  const JointShape& shape = shape_of(j.type);
  j.parent = m.text("parent");
  j.child = m.text("child");
  j.parent_frame = m.frame("parent_frame");
  j.child_frame = m.frame("child_frame");
  struct AxisKey {
    const char* key;
    bool applies;
    const char* users;
  };
  for (const AxisKey& a : {AxisKey{"axis", shape.has_axis, "revolute, prismatic, cylindrical and universal joints"},
                           AxisKey{"axis2", shape.has_axis2, "universal joints only"}}) {
    const yaml::Node v = m.optional(a.key);
    if (v.IsDefined() && !a.applies)
      fail(v, in_quotes(a.key) + " does not apply to " + type_name + " " + m.label() + " (it is for " + a.users + ")");
  }
  j.axis = m.vec3("axis", j.axis);
  j.axis2 = m.vec3("axis2", j.axis2);
  const bool one_q = shape.nq == 1, one_u = shape.nv == 1;
  if (const yaml::Node q = m.optional("q"); q.IsDefined())
    j.q = to_numbers(q, m.field("q").note(type_name), shape.nq, shape.q_layout, one_q);
  if (const yaml::Node u = m.optional("u"); u.IsDefined())
    j.u = to_numbers(u, m.field("u").note(type_name), shape.nv, shape.u_layout, one_u);
  j.cut = m.flag("cut", false);
  j.independent = m.flag("independent", false);
  j.effort = m.number("effort", j.effort);
  j.where = where(node);
  return j;
}

MarkerSpec Parser::marker(const yaml::Node& node, int index) const {
  MapReader m(*this, node, "marker #" + std::to_string(index + 1));
  m.name_by("marker");
  m.allow({"name", "body", "xyz"});
  MarkerSpec mk;
  mk.name = m.text("name");
  mk.body = m.text("body");
  mk.point = m.vec3("xyz", Vec3::Zero());
  mk.where = where(node);
  return mk;
}

ForceSpec Parser::force(const yaml::Node& node, int index) const {
  const MapReader probe(*this, node, "force #" + std::to_string(index + 1));
  const yaml::Node type_node = probe.required("type");
  const std::string type = to_text(type_node, probe.field("type"));
  const std::string& label = probe.label();
  const MapReader m(*this, node, label + " (" + type + ")");
  ForceSpec f;
  if (type == "joint_spring_damper") {
    m.allow({"type", "joint", "stiffness", "damping", "rest"});
    f.element = JointSpringDamperSpec{m.text("joint"), m.number("stiffness", 0.0), m.number("damping", 0.0),
                                      m.number("rest", 0.0)};
  } else if (type == "point_spring_damper") {
    m.allow({"type", "body1", "point1", "body2", "point2", "stiffness", "damping", "rest_length"});
    f.element = PointSpringDamperSpec{m.text("body1"),
                                      m.text("body2"),
                                      m.vec3("point1", Vec3::Zero()),
                                      m.vec3("point2", Vec3::Zero()),
                                      m.number("stiffness", 0.0),
                                      m.number("damping", 0.0),
                                      m.number("rest_length", 0.0)};
  } else if (type == "joint_force") {
    m.allow({"type", "joint", "value", "profile"});
    f.element = JointForceSpec{m.text("joint"), to_numbers(m.required("value"), m.field("value"), true)};
  } else if (type == "body_force") {
    m.allow({"type", "body", "point", "force", "profile"});
    f.element = BodyForceSpec{m.text("body"), m.vec3("point", Vec3::Zero()), m.vec3("force")};
  } else if (type == "body_torque") {
    m.allow({"type", "body", "torque", "profile"});
    f.element = BodyTorqueSpec{m.text("body"), m.vec3("torque")};
  } else if (type == "joint_pd") {
    m.allow({"type", "joint", "stiffness", "damping", "target", "effort"});
    JointPdSpec pd{m.text("joint"), m.number("stiffness"), m.number("damping", 0.0), {}, {}};
    const yaml::Node target = m.required("target");
    if (target.IsScalar()) {
      pd.target = TimeFunction::constant(to_number(target, m.field("target")));
    } else {
      const MapReader tm(*this, target, m.field("target").str());
      tm.allow({"polynomial", "sine", "table", "expression", "rate", "acceleration"});
      pd.target = motion(tm, target, nullptr);
    }
    if (m.optional("effort").IsDefined()) pd.effort = m.number("effort");
    f.element = std::move(pd);
  } else {
    fail(type_node, "unknown force type " + in_quotes(type) + " in " + label +
                        " (expected one of: " + std::string(force_type_list) + ")");
  }
  if (const yaml::Node p = m.optional("profile"); p.IsDefined()) {
    const MapReader pm(*this, p, m.field("profile").str());
    pm.allow({"polynomial", "sine", "table", "expression", "rate", "acceleration"});
    f.profile = motion(pm, p, nullptr);
  }
  f.where = where(node);
  return f;
}

// A `constraints:` item: a gear `q(joint2) = ratio · q(joint1) + offset`, stored as the coupling
// ratio · q(joint1) − q(joint2) = −offset, or a linear coupling Σ coefficient · q(joint) = value.
// Joint names are resolved (and checked to be one-coordinate tree joints) by Model::build.
CouplingSpec Parser::coupling(const yaml::Node& node, int index) const {
  MapReader probe(*this, node, "constraint #" + std::to_string(index + 1));
  probe.name_by("constraint");
  const yaml::Node type_node = probe.required("type");
  const std::string type = to_text(type_node, probe.field("type"));
  const std::string& label = probe.label();
  const MapReader m(*this, node, label + " (" + type + ")");
  CouplingSpec c;
  if (type == "gear") {
    m.allow({"type", "name", "joint1", "joint2", "ratio", "offset"});
    c.name = m.text("name");
    const std::string joint1 = m.text("joint1"), joint2 = m.text("joint2");
    const double ratio = m.number("ratio");
    c.terms = {{joint1, ratio}, {joint2, -1.0}};
    c.value = -m.number("offset", 0.0);
  } else if (type == "linear") {
    m.allow({"type", "name", "terms", "value"});
    c.name = m.text("name");
    const yaml::Node terms = m.required("terms");
    if (!terms.IsSequence())
      fail(terms, m.field("terms") + " must be a list of {joint, coefficient} items");
    if (terms.size() == 0) fail(terms, m.field("terms") + " is empty (give at least one {joint, coefficient})");
    for (std::size_t k = 0; k < terms.size(); ++k) {
      const MapReader t(*this, terms[k], "term #" + std::to_string(k + 1) + " of " + m.label());
      t.allow({"joint", "coefficient"});
      c.terms.push_back({t.text("joint"), t.number("coefficient")});
    }
    c.value = m.number("value", 0.0);
  } else {
    fail(type_node, "unknown constraint type " + in_quotes(type) + " in " + label +
                        " (expected one of: " + std::string(constraint_type_list) + ")");
  }
  c.where = where(node);
  return c;
}

// A `drives:` item: a joint and its motion q(t), given by exactly one of `speed` (q = q0 + speed t,
// q0 the joint's initial coordinate), `polynomial`, `sine`, `table` or `expression` (with optional
// `rate` and `acceleration` expressions). Model::build resolves and checks the joint.
DriveSpec Parser::drive(const yaml::Node& node, int index, const std::vector<JointSpec>& joints) const {
  MapReader probe(*this, node, "drive #" + std::to_string(index + 1));
  const std::optional<std::string> name = peek_scalar(node, "joint");
  const MapReader m(*this, node, name ? "drive on joint " + in_quotes(*name) : probe.label());
  m.allow({"joint", "speed", "polynomial", "sine", "table", "expression", "rate", "acceleration"});
  DriveSpec d;
  d.joint = m.text("joint");
  const auto it = std::find_if(joints.begin(), joints.end(), [&](const JointSpec& j) { return j.name == d.joint; });
  d.motion = motion(m, node, it == joints.end() ? nullptr : &*it);
  d.where = where(node);
  return d;
}

TimeFunction Parser::motion(const MapReader& m, const yaml::Node& node, const JointSpec* joint) const {
  static constexpr std::string_view kinds[] = {"speed", "polynomial", "sine", "table", "expression"};
  std::string kind;
  for (std::string_view k : kinds)
    if (m.optional(k).IsDefined()) {
      if (!kind.empty()) fail(node, m.label() + " gives both " + in_quotes(kind) + " and " + in_quotes(k) + "; give one motion");
      kind = k;
    }
  if (kind.empty()) fail(node, m.label() + " has no motion: give one of speed, polynomial, sine, table, expression");
  if (kind != "expression")
    for (std::string_view k : {"rate", "acceleration"})
      if (m.optional(k).IsDefined()) fail(node, m.field(k) + " goes with `expression` only");
  const yaml::Node v = m.optional(kind);
  try {
    if (kind == "speed") {
      const double q0 = joint && !joint->q.empty() ? joint->q[0] : 0.0;
      return TimeFunction::polynomial({q0, m.number("speed")});
    }
    if (kind == "polynomial") return TimeFunction::polynomial(to_numbers(v, m.field("polynomial"), true));
    if (kind == "sine") {
      const MapReader s(*this, v, m.field("sine").str());
      s.allow({"amplitude", "frequency", "phase", "offset"});
      return TimeFunction::sine(s.number("amplitude"), s.number("frequency"), s.number("phase", 0.0), s.number("offset", 0.0));
    }
    if (kind == "table") {
      if (!v.IsSequence()) fail(v, m.field("table") + " must be a list of [t, q] pairs");
      std::vector<double> times, values;
      for (std::size_t k = 0; k < v.size(); ++k) {
        const std::vector<double> p = to_numbers(v[k], m.field("table") + " (point " + std::to_string(k + 1) + ")", 2, "[t, q]", false);
        times.push_back(p[0]);
        values.push_back(p[1]);
      }
      return TimeFunction::table(std::move(times), std::move(values));
    }
    const auto optional_text = [&](std::string_view k) { return m.optional(k).IsDefined() ? m.text(k) : std::string(); };
    return TimeFunction::expression(m.text("expression"), optional_text("rate"), optional_text("acceleration"));
  } catch (const std::invalid_argument& e) {
    if (dynamic_cast<const ModelError*>(&e)) throw;
    fail(v, m.field(kind) + ": " + e.what());
  }
}

// ---------------------------------------------------------------------------------------------
// Document

template <class F>
void Parser::for_each_item(const yaml::Node& root, std::string_view key, F&& item) const {
  const yaml::Node list = root[key];
  if (!list.IsDefined() || list.IsNull()) return;
  if (!list.IsSequence()) fail(list, in_quotes(key) + " must be a list (items starting with '- ')");
  for (std::size_t k = 0; k < list.size(); ++k) item(list[k], static_cast<int>(k));
}

Mechanism Parser::parse(const std::string& text) const {
  yaml::Tree tree;
  try {
    tree = yaml::Tree::parse(text);
  } catch (const yaml::ParseError& e) {
    fail(e.mark, std::string("malformed YAML: ") + e.what());
  }
  const yaml::Node root = tree.root();
  if (!root.IsDefined() || root.IsNull()) throw ModelError(source_ + ":1: model file is empty");
  const MapReader top(*this, root, "the model file");
  top.allow({"name", "gravity", "bodies", "joints", "markers", "forces", "constraints", "drives"},
            {"bodies", "joints", "markers", "forces", "constraints", "drives"});

  Mechanism mech;
  if (top.optional("name").IsDefined()) mech.name = top.text("name");
  mech.gravity = top.vec3("gravity", mech.gravity);
  for_each_item(root, "bodies", [&](const yaml::Node& n, int k) { mech.bodies.push_back(body(n, k)); });
  for_each_item(root, "joints", [&](const yaml::Node& n, int k) { mech.joints.push_back(joint(n, k)); });
  for_each_item(root, "markers", [&](const yaml::Node& n, int k) { mech.markers.push_back(marker(n, k)); });
  for_each_item(root, "forces", [&](const yaml::Node& n, int k) { mech.forces.push_back(force(n, k)); });
  for_each_item(root, "constraints", [&](const yaml::Node& n, int k) { mech.couplings.push_back(coupling(n, k)); });
  for_each_item(root, "drives", [&](const yaml::Node& n, int k) { mech.drives.push_back(drive(n, k, mech.joints)); });
  return mech;
}

// ---------------------------------------------------------------------------------------------
// Writer

/// Roll, pitch, yaw with R = Rz(yaw) Ry(pitch) Rx(roll), pitch in [−π/2, π/2]. Roll and pitch are
/// taken from Rz(−yaw) R = Ry(pitch) Rx(roll), so they absorb any error of yaw (at pitch ±π/2,
/// where yaw is arbitrary).
Vec3 rpy_of(const Mat3& R) {
  const double yaw = std::atan2(R(1, 0), R(0, 0));
  const Mat3 M = Eigen::AngleAxisd(-yaw, Vec3::UnitZ()).toRotationMatrix() * R;
  return {std::atan2(-M(1, 2), M(1, 1)), std::atan2(-M(2, 0), M(0, 0)), yaw};
}

/// Model-file YAML through yaml-cpp's emitter: block mappings for items, flow style for vectors
/// and poses; keys at the reader's default are left out.
class Writer {
 public:
  std::string write(const Mechanism& m);

 private:
  YAML::Emitter& key(std::string_view k) { return out_ << YAML::Key << std::string(k) << YAML::Value; }
  void text(std::string_view k, const std::string& v) { key(k) << v; }
  void number(std::string_view k, double v, std::optional<double> fallback = std::nullopt) {
    if (!fallback || v != *fallback) key(k) << exact_number(v);
  }
  void numbers(const double* v, std::size_t n) {
    out_ << YAML::Flow << YAML::BeginSeq;
    for (std::size_t k = 0; k < n; ++k) out_ << exact_number(v[k]);
    out_ << YAML::EndSeq;
  }
  void vec3(std::string_view k, const Vec3& v, std::optional<Vec3> fallback = std::nullopt) {
    if (fallback && v == *fallback) return;
    key(k);
    numbers(v.data(), 3);
  }
  /// A list of numbers; one number is written as a scalar (the reader accepts both where it matters).
  void list(std::string_view k, const std::vector<double>& v) {
    if (v.empty()) return;
    if (v.size() == 1) return number(k, v[0]);
    key(k);
    numbers(v.data(), v.size());
  }
  void flag(std::string_view k, bool v) {
    if (v) key(k) << true;
  }
  void frame(std::string_view k, const Transform& X) {
    const bool moved = !X.p.isZero(0.0), rotated = !X.R.isIdentity(0.0);
    if (!moved && !rotated) return;
    key(k) << YAML::Flow << YAML::BeginMap;
    if (moved) vec3("xyz", X.p);
    if (rotated) vec3("rpy", rpy_of(X.R));
    out_ << YAML::EndMap;
  }

  void body(const BodySpec& b);
  void visual(const VisualSpec& v);
  void joint(const JointSpec& j);
  void marker(const MarkerSpec& mk);
  void force(const ForceSpec& f);
  void coupling(const CouplingSpec& c);
  void drive(const DriveSpec& d);
  void motion(const TimeFunction& function);

  /// `k:` followed by a block list of `items`, each written by `item`; nothing when empty.
  template <class T, class F>
  void section(std::string_view k, const std::vector<T>& items, F item) {
    if (items.empty()) return;
    key(k) << YAML::BeginSeq;
    for (const T& x : items) {
      out_ << YAML::BeginMap;
      (this->*item)(x);
      out_ << YAML::EndMap;
    }
    out_ << YAML::EndSeq;
  }

  YAML::Emitter out_;
};

void Writer::body(const BodySpec& b) {
  text("name", b.name);
  number("mass", b.mass);
  vec3("com", b.com, Vec3::Zero());
  const Mat3& I = b.inertia;
  const std::array<double, 6> v{I(0, 0), I(1, 1), I(2, 2), I(0, 1), I(0, 2), I(1, 2)};
  key("inertia");
  numbers(v.data(), v[3] == 0.0 && v[4] == 0.0 && v[5] == 0.0 ? 3 : 6);
  if (b.visuals.empty()) return;
  key("visuals") << YAML::BeginSeq;
  for (const VisualSpec& shape : b.visuals) {
    out_ << YAML::Flow << YAML::BeginMap;
    visual(shape);
    out_ << YAML::EndMap;
  }
  out_ << YAML::EndSeq;
}

void Writer::visual(const VisualSpec& v) {
  text("shape", std::string(to_string(v.shape)));
  switch (v.shape) {
    case VisualSpec::Shape::box: vec3("size", v.size); break;
    case VisualSpec::Shape::sphere: number("radius", v.radius); break;
    case VisualSpec::Shape::cylinder:
    case VisualSpec::Shape::capsule:
      number("radius", v.radius);
      number("length", v.length);
      break;
    case VisualSpec::Shape::mesh:
      text("file", v.file);
      vec3("scale", v.scale, Vec3::Ones());
      break;
  }
  frame("origin", v.origin);
  if (v.rgba != VisualSpec{}.rgba) {
    key("rgba");
    numbers(v.rgba.data(), 4);
  }
}

void Writer::joint(const JointSpec& j) {
  const JointShape& shape = shape_of(j.type);
  text("name", j.name);
  text("type", std::string(to_string(j.type)));
  text("parent", j.parent);
  text("child", j.child);
  frame("parent_frame", j.parent_frame);
  frame("child_frame", j.child_frame);
  const JointSpec defaults;
  if (shape.has_axis) vec3("axis", j.axis, defaults.axis);
  if (shape.has_axis2) vec3("axis2", j.axis2, defaults.axis2);
  list("q", j.q);
  list("u", j.u);
  flag("cut", j.cut);
  flag("independent", j.independent);
  if (std::isfinite(j.effort)) number("effort", j.effort);
}

void Writer::marker(const MarkerSpec& mk) {
  text("name", mk.name);
  text("body", mk.body);
  vec3("xyz", mk.point, Vec3::Zero());
}

void Writer::force(const ForceSpec& f) {
  if (const auto* s = std::get_if<JointSpringDamperSpec>(&f.element)) {
    text("type", "joint_spring_damper");
    text("joint", s->joint);
    number("stiffness", s->stiffness, 0.0);
    number("damping", s->damping, 0.0);
    number("rest", s->rest, 0.0);
  } else if (const auto* s = std::get_if<PointSpringDamperSpec>(&f.element)) {
    text("type", "point_spring_damper");
    text("body1", s->body1);
    vec3("point1", s->point1, Vec3::Zero());
    text("body2", s->body2);
    vec3("point2", s->point2, Vec3::Zero());
    number("stiffness", s->stiffness, 0.0);
    number("damping", s->damping, 0.0);
    number("rest_length", s->rest_length, 0.0);
  } else if (const auto* s = std::get_if<JointForceSpec>(&f.element)) {
    text("type", "joint_force");
    text("joint", s->joint);
    key("value");
    numbers(s->value.data(), s->value.size());
  } else if (const auto* s = std::get_if<BodyForceSpec>(&f.element)) {
    text("type", "body_force");
    text("body", s->body);
    vec3("point", s->point, Vec3::Zero());
    vec3("force", s->force);
  } else if (const auto* s = std::get_if<BodyTorqueSpec>(&f.element)) {
    text("type", "body_torque");
    text("body", s->body);
    vec3("torque", s->torque);
  } else if (const auto* s = std::get_if<JointPdSpec>(&f.element)) {
    text("type", "joint_pd");
    text("joint", s->joint);
    number("stiffness", s->stiffness);
    number("damping", s->damping, 0.0);
    key("target") << YAML::BeginMap;
    motion(s->target);
    out_ << YAML::EndMap;
    if (s->effort) number("effort", *s->effort);
  }
  if (f.profile) {
    key("profile") << YAML::BeginMap;
    motion(*f.profile);
    out_ << YAML::EndMap;
  }
}

// Terms {(joint1, ratio), (joint2, −1)} = −offset are written as a gear, anything else as linear.
// A drive as its motion was given; `speed` is written as the polynomial it stands for.
void Writer::drive(const DriveSpec& d) {
  text("joint", d.joint);
  motion(d.motion);
}

// The keys of a function of time in the current mapping (`drives:` items, `profile:`).
void Writer::motion(const TimeFunction& function) {
  const TimeFunction::Form f = function.form();
  if (f.kind == "polynomial") {
    key("polynomial");
    numbers(f.numbers.data(), f.numbers.size());
  } else if (f.kind == "sine") {
    key("sine") << YAML::Flow << YAML::BeginMap;
    number("amplitude", f.numbers[0]);
    number("frequency", f.numbers[1]);
    number("phase", f.numbers[2], 0.0);
    number("offset", f.numbers[3], 0.0);
    out_ << YAML::EndMap;
  } else if (f.kind == "table") {
    key("table") << YAML::BeginSeq;
    for (std::size_t k = 0; k < f.numbers.size(); k += 2) numbers(&f.numbers[k], 2);
    out_ << YAML::EndSeq;
  } else {
    text("expression", f.texts[0]);
    if (!f.texts[1].empty()) text("rate", f.texts[1]);
    if (!f.texts[2].empty()) text("acceleration", f.texts[2]);
  }
}

void Writer::coupling(const CouplingSpec& c) {
  if (c.terms.size() == 2 && c.terms[1].coefficient == -1.0) {
    text("type", "gear");
    text("name", c.name);
    text("joint1", c.terms[0].joint);
    text("joint2", c.terms[1].joint);
    number("ratio", c.terms[0].coefficient);
    number("offset", -c.value, 0.0);
    return;
  }
  text("type", "linear");
  text("name", c.name);
  key("terms") << YAML::BeginSeq;
  for (const CouplingSpec::Term& t : c.terms) {
    out_ << YAML::Flow << YAML::BeginMap;
    text("joint", t.joint);
    number("coefficient", t.coefficient);
    out_ << YAML::EndMap;
  }
  out_ << YAML::EndSeq;
  number("value", c.value, 0.0);
}

std::string Writer::write(const Mechanism& m) {
  if (!m.callbacks.empty()) {
    std::string which;
    for (std::size_t k = 0; k < m.callbacks.size(); ++k)
      which.append(k ? ", " : "").append("Mechanism::callbacks[").append(std::to_string(k)).append("]");
    throw ModelError("cannot write mechanism " + in_quotes(m.name) + " to a model file: it has C++ force callbacks (" +
                     which + "), which a model file cannot hold; add them after loading the file instead");
  }
  out_ << YAML::BeginMap;
  text("name", m.name);
  vec3("gravity", m.gravity);
  section("bodies", m.bodies, &Writer::body);
  section("joints", m.joints, &Writer::joint);
  section("markers", m.markers, &Writer::marker);
  section("forces", m.forces, &Writer::force);
  section("constraints", m.couplings, &Writer::coupling);
  section("drives", m.drives, &Writer::drive);
  out_ << YAML::EndMap;
  if (!out_.good()) throw ModelError("cannot write mechanism " + in_quotes(m.name) + ": " + out_.GetLastError());
  return std::string(out_.c_str()) + "\n";
}

}  // namespace

Mechanism parse_mechanism(const std::string& text, const std::string& source) { return Parser(source).parse(text); }

std::string read_model_text(const std::string& path, std::size_t most) {
  std::error_code ec;
  std::ifstream in(path, std::ios::binary);
  if (!in || std::filesystem::is_directory(path, ec)) throw ModelError("cannot open model file '" + path + "'");
  std::string text;
  std::array<char, 1 << 16> chunk;
  while (in.read(chunk.data(), chunk.size()) || in.gcount() > 0) {
    text.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
    if (text.size() > most)
      throw ModelError("model file '" + path + "' is longer than " + std::to_string(most) +
                       " bytes, the most loopdyn reads (is it a model file?)");
  }
  if (in.bad()) throw ModelError("cannot read model file '" + path + "'");
  return text;
}

Mechanism load_mechanism(const std::string& path, std::vector<std::string>* notes) {
  if (is_mjcf_path(path)) return load_mjcf(path, notes);
  if (is_urdf_path(path)) return load_urdf(path, notes);  // docs/model-format.md, "URDF"
  Mechanism m = parse_mechanism(read_model_text(path), path);
  // A whole file (not a fragment parsed for a test or a tool) must describe something to build.
  if (m.bodies.empty())
    throw ModelError(path + ": no bodies: a mechanism needs at least one body under `bodies:` (the ground is implicit)");
  return m;
}

std::string write_mechanism(const Mechanism& m) { return Writer().write(m); }

void save_mechanism(const Mechanism& m, const std::string& path) {
  Mechanism relative = m;
  const std::filesystem::path folder = std::filesystem::absolute(path).parent_path();
  for (BodySpec& b : relative.bodies)
    for (VisualSpec& v : b.visuals)
      if (v.shape == VisualSpec::Shape::mesh && std::filesystem::path(v.file).is_absolute()) {
        const std::filesystem::path p = std::filesystem::path(v.file).lexically_relative(folder);
        if (!p.empty()) v.file = p.generic_string();  // empty: another root (kept absolute)
      }
  const std::string text = write_mechanism(relative);
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) throw ModelError("cannot write model file '" + path + "'");
}

void refuse_overwriting(const std::string& input, const std::string& out, const std::string& what) {
  std::error_code ec;  // false without it where either file does not exist
  if (!out.empty() && std::filesystem::equivalent(input, out, ec))
    throw std::invalid_argument(what + " '" + out + "' is the input file '" + input +
                                "' itself, which writing it would overwrite: write it elsewhere");
}

std::string convert_model_file(const std::string& path, const std::string& out, std::vector<std::string>* notes) {
  refuse_overwriting(path, out, "the output file");
  const Mechanism m = load_mechanism(path, notes);
  (void)Model::build(m);
  if (!out.empty()) save_mechanism(m, out);
  return write_mechanism(m);
}

}  // namespace loopdyn
