#include "loopdyn/core/mechanism.hpp"

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
constexpr std::array<std::pair<std::string_view, VisualSpec::Shape>, 5> visual_shape_names{{
    {"box", VisualSpec::Shape::box},
    {"sphere", VisualSpec::Shape::sphere},
    {"cylinder", VisualSpec::Shape::cylinder},
    {"capsule", VisualSpec::Shape::capsule},
    {"mesh", VisualSpec::Shape::mesh},
}};

template <class E, std::size_t N>
std::optional<E> value_named(const std::array<std::pair<std::string_view, E>, N>& names, std::string_view name) {
  for (const auto& [text, value] : names)
    if (text == name) return value;
  return std::nullopt;
}

template <class E, std::size_t N>
std::string_view name_of(const std::array<std::pair<std::string_view, E>, N>& names, E value) {
  for (const auto& [text, v] : names)
    if (v == value) return text;
  return "?";
}
}  // namespace

std::optional<JointType> parse_joint_type(std::string_view name) { return value_named(joint_type_names, name); }
std::string_view to_string(JointType type) { return name_of(joint_type_names, type); }
std::optional<VisualSpec::Shape> parse_visual_shape(std::string_view name) {
  return value_named(visual_shape_names, name);
}
std::string_view to_string(VisualSpec::Shape shape) { return name_of(visual_shape_names, shape); }

BodySpec& Mechanism::add_body(std::string body_name, double mass, const Vec3& com, const Mat3& inertia) {
  bodies.push_back(BodySpec{std::move(body_name), mass, com, inertia, {}, {}});
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
