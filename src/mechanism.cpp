#include "loopdyn/mechanism.hpp"

#include <array>
#include <utility>

namespace loopdyn {

namespace {
constexpr std::array<std::pair<std::string_view, JointType>, 8> joint_type_names{{
    {"revolute", JointType::revolute},
    {"prismatic", JointType::prismatic},
    {"cylindrical", JointType::cylindrical},
    {"universal", JointType::universal},
    {"spherical", JointType::spherical},
    {"planar", JointType::planar},
    {"free", JointType::free},
    {"fixed", JointType::fixed},
}};
}  // namespace

std::optional<JointType> parse_joint_type(std::string_view name) {
  for (const auto& [text, type] : joint_type_names)
    if (text == name) return type;
  return std::nullopt;
}

std::string_view to_string(JointType type) {
  for (const auto& [text, t] : joint_type_names)
    if (t == type) return text;
  return "?";
}

BodySpec& Mechanism::add_body(std::string body_name, double mass, const Vec3& com, const Mat3& inertia) {
  bodies.push_back(BodySpec{std::move(body_name), mass, com, inertia, {}});
  return bodies.back();
}

JointSpec& Mechanism::add_joint(std::string joint_name, JointType type, std::string parent, std::string child,
                                const Transform& parent_frame, const Transform& child_frame) {
  JointSpec j;
  j.name = std::move(joint_name);
  j.type = type;
  j.parent = std::move(parent);
  j.child = std::move(child);
  j.parent_frame = parent_frame;
  j.child_frame = child_frame;
  joints.push_back(std::move(j));
  return joints.back();
}

}  // namespace loopdyn
