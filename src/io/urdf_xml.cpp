#include "io/urdf_xml.hpp"

#include <charconv>
#include <cmath>
#include <cstring>
#include <string_view>

namespace loopdyn::urdf_xml {

void fail(const std::string& source, int line, const std::string& problem) {
  throw ModelError(source + ":" + std::to_string(line) + ": " + problem);
}

Document::Document(const std::string& text, std::string source) : source_(std::move(source)) {
  if (doc_.Parse(text.data(), text.size()) != tinyxml2::XML_SUCCESS) {
    // ErrorStr() is "Error=NAME ErrorID=n (0xn) Line number=n: detail"; the name and detail suffice.
    const std::string all = doc_.ErrorStr() ? doc_.ErrorStr() : "";
    const std::size_t colon = all.find(": ", all.find("Line number="));
    const std::string detail = colon == std::string::npos ? "" : ": " + all.substr(colon + 2);
    fail(source_, doc_.ErrorLineNum(), std::string("malformed XML (") + doc_.ErrorName() + detail + ")");
  }
  robot_ = doc_.RootElement();
  if (!robot_ || std::strcmp(robot_->Name(), "robot") != 0)
    fail(source_, robot_ ? robot_->GetLineNum() : 1, "the root element must be <robot> (a URDF file)");
}

const tinyxml2::XMLElement* Document::find(const char* tag, const std::string& name) const {
  for (const auto* e = robot_->FirstChildElement(tag); e; e = e->NextSiblingElement(tag)) {
    const char* n = e->Attribute("name");
    if (n && name == n) return e;
  }
  return nullptr;
}

int Document::line(const char* tag, const std::string& name, const char* child) const {
  const tinyxml2::XMLElement* e = find(tag, name);
  if (!e) return robot_->GetLineNum();
  const tinyxml2::XMLElement* c = child ? e->FirstChildElement(child) : nullptr;
  return (c ? c : e)->GetLineNum();
}

std::string Document::where(const char* tag, const std::string& name) const {
  return source_ + ":" + std::to_string(line(tag, name));
}

namespace {

// Reads one <loop_joint>, strictly: a misspelt attribute or element is an error, never skipped.
class LoopJointReader {
 public:
  LoopJointReader(const Document& doc, const tinyxml2::XMLElement& e) : doc_(doc), e_(e) {}
  LoopJointXml read();

 private:
  [[noreturn]] void fail_at(const tinyxml2::XMLElement& at, const std::string& problem) const {
    fail(doc_.source(), at.GetLineNum(), label_ + ": " + problem);
  }
  void allow_attributes(const tinyxml2::XMLElement& at, std::initializer_list<std::string_view> names) const;
  const tinyxml2::XMLElement* only(const char* tag) const;
  const tinyxml2::XMLElement& required(const char* tag) const;
  std::string required_attribute(const tinyxml2::XMLElement& at, const char* name) const;
  Vec3 vec3(const tinyxml2::XMLElement& at, const char* name, const Vec3& fallback) const;
  Transform pose_of(const tinyxml2::XMLElement& at) const;
  Transform pose(const char* tag) const;
  Transform side(const char* tag, std::initializer_list<std::string_view> attributes, std::string& link, int& line) const;
  Vec3 axis(const char* tag, const Vec3& fallback, bool applies, const char* types) const;

  const Document& doc_;
  const tinyxml2::XMLElement& e_;
  std::string label_ = "<loop_joint>";
};

void LoopJointReader::allow_attributes(const tinyxml2::XMLElement& at,
                                       std::initializer_list<std::string_view> names) const {
  for (const auto* a = at.FirstAttribute(); a; a = a->Next()) {
    bool known = false;
    for (std::string_view n : names) known = known || n == a->Name();
    if (!known) fail_at(at, "unknown attribute '" + std::string(a->Name()) + "' of <" + at.Name() + ">");
  }
}

// The one child <tag>, or null; a second one is an error (which of them was meant is not known).
const tinyxml2::XMLElement* LoopJointReader::only(const char* tag) const {
  const tinyxml2::XMLElement* c = e_.FirstChildElement(tag);
  if (c && c->NextSiblingElement(tag)) fail_at(*c->NextSiblingElement(tag), std::string("more than one <") + tag + ">");
  return c;
}

const tinyxml2::XMLElement& LoopJointReader::required(const char* tag) const {
  const tinyxml2::XMLElement* c = only(tag);
  if (!c) fail_at(e_, std::string("missing <") + tag + " link=\"...\"/>");
  return *c;
}

std::string LoopJointReader::required_attribute(const tinyxml2::XMLElement& at, const char* name) const {
  const char* v = at.Attribute(name);
  if (!v || !*v) fail_at(at, std::string("<") + at.Name() + "> needs a '" + name + "' attribute");
  return v;
}

// "x y z": three finite numbers separated by white space.
Vec3 LoopJointReader::vec3(const tinyxml2::XMLElement& at, const char* name, const Vec3& fallback) const {
  const char* text = at.Attribute(name);
  if (!text) return fallback;
  Vec3 v;
  std::string_view rest(text);
  int n = 0;
  for (; n < 4; ++n) {
    rest.remove_prefix(std::min(rest.find_first_not_of(" \t\r\n"), rest.size()));
    if (rest.empty()) break;
    const std::string_view token = rest.substr(0, rest.find_first_of(" \t\r\n"));
    double x = 0.0;
    const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), x);
    if (ec != std::errc() || end != token.data() + token.size() || !std::isfinite(x))
      fail_at(at, std::string("'") + name + "' of <" + at.Name() + "> has '" + std::string(token) +
                      "', not a finite number");
    if (n < 3) v(n) = x;
    rest.remove_prefix(token.size());
  }
  if (n != 3)
    fail_at(at, std::string("'") + name + "' of <" + at.Name() + "> must have 3 numbers, got '" + text + "'");
  return v;
}

Transform LoopJointReader::pose_of(const tinyxml2::XMLElement& at) const {
  return {rpy_rotation(vec3(at, "rpy", Vec3::Zero())), vec3(at, "xyz", Vec3::Zero())};
}

Transform LoopJointReader::pose(const char* tag) const {
  const tinyxml2::XMLElement* c = only(tag);
  if (!c) return {};
  allow_attributes(*c, {"xyz", "rpy"});
  return pose_of(*c);
}

// One side of the joint: the required <tag link="..."/> (its name and line), and the pose its
// xyz and rpy attributes give when `attributes` allows them (identity otherwise).
Transform LoopJointReader::side(const char* tag, std::initializer_list<std::string_view> attributes, std::string& link,
                                int& line) const {
  const tinyxml2::XMLElement& e = required(tag);
  allow_attributes(e, attributes);
  link = required_attribute(e, "link");
  line = e.GetLineNum();
  return pose_of(e);
}

Vec3 LoopJointReader::axis(const char* tag, const Vec3& fallback, bool applies, const char* types) const {
  const tinyxml2::XMLElement* c = only(tag);
  if (!c) return fallback;
  if (!applies) fail_at(*c, std::string("<") + tag + "> does not apply to a " + e_.Attribute("type") + " joint (" + types + ")");
  allow_attributes(*c, {"xyz"});
  const Vec3 a = vec3(*c, "xyz", Vec3::Zero());
  if (a.isZero(0.0)) fail_at(*c, std::string("<") + tag + "> must not be zero");
  return a;
}

LoopJointXml LoopJointReader::read() {
  LoopJointXml j;
  j.line = e_.GetLineNum();
  j.name = required_attribute(e_, "name");
  label_ = "loop_joint '" + j.name + "'";
  allow_attributes(e_, {"name", "type"});
  const std::string type = required_attribute(e_, "type");
  const auto parsed = parse_joint_type(type);
  if (!parsed || *parsed == JointType::free)
    fail_at(e_, "unknown type '" + type +
                    "' (expected one of: revolute, prismatic, cylindrical, universal, spherical, planar, fixed)");
  j.type = *parsed;
  for (const auto* c = e_.FirstChildElement(); c; c = c->NextSiblingElement()) {
    const std::string_view tag = c->Name();
    if (tag != "parent" && tag != "child" && tag != "origin" && tag != "child_origin" && tag != "axis" &&
        tag != "axis2" && tag != "link1" && tag != "link2")
      fail_at(*c, "unknown element <" + std::string(tag) +
                      "> (expected parent, child, origin, child_origin, axis, axis2; or link1, link2)");
  }
  if (e_.FirstChildElement("link1") || e_.FirstChildElement("link2")) {
    // Isaac Sim's spelling: <link1 link xyz rpy/> is <parent> with <origin>, <link2> <child> with
    // <child_origin>. Mixed with loopdyn's, which frame was meant is not known.
    for (const char* tag : {"parent", "child", "origin", "child_origin"})
      if (const auto* c = e_.FirstChildElement(tag))
        fail_at(*c, std::string("<") + tag + "> cannot be mixed with <link1>/<link2> (two spellings of the same)");
    j.origin = side("link1", {"link", "xyz", "rpy"}, j.parent, j.parent_line);
    j.child_origin = side("link2", {"link", "xyz", "rpy"}, j.child, j.child_line);
  } else {
    side("parent", {"link"}, j.parent, j.parent_line);
    side("child", {"link"}, j.child, j.child_line);
    j.origin = pose("origin");
    j.child_origin = pose("child_origin");
  }
  const bool has_axis = j.type != JointType::spherical && j.type != JointType::fixed;
  j.axis = axis("axis", j.axis, has_axis, "only revolute, prismatic, cylindrical, universal and planar joints have one");
  j.axis2 = axis("axis2", j.axis2, j.type == JointType::universal, "only universal joints have a second axis");
  return j;
}

}  // namespace

std::vector<LoopJointXml> read_loop_joints(const Document& doc) {
  std::vector<LoopJointXml> out;
  for (const auto* e = doc.robot().FirstChildElement("loop_joint"); e; e = e->NextSiblingElement("loop_joint"))
    out.push_back(LoopJointReader(doc, *e).read());
  return out;
}

}  // namespace loopdyn::urdf_xml
