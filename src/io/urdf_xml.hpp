// The tinyxml2 side of the URDF reader (include/loopdyn/io/urdf.hpp): the document's element lines,
// which urdfdom does not report, and loopdyn's <loop_joint> elements, which urdfdom skips.
#pragma once

#include <tinyxml2.h>

#include <string>
#include <vector>

#include "loopdyn/core/mechanism.hpp"

namespace loopdyn::urdf_xml {

/// Throws ModelError "source:line: problem".
[[noreturn]] void fail(const std::string& source, int line, const std::string& problem);

/// A URDF file parsed by tinyxml2, for line numbers and the extension elements.
class Document {
 public:
  /// Throws ModelError with tinyxml2's line for malformed XML, or when the root is not <robot>.
  Document(const std::string& text, std::string source);
  Document(const Document&) = delete;
  Document& operator=(const Document&) = delete;

  const std::string& source() const { return source_; }
  const tinyxml2::XMLElement& robot() const { return *robot_; }
  /// The child <tag name="name"> of <robot>, nullptr when there is none.
  const tinyxml2::XMLElement* find(const char* tag, const std::string& name) const;
  /// Line of the first `child` element of <tag name="name"> (of the element itself when `child` is
  /// null or absent; of <robot> when there is no such element).
  int line(const char* tag, const std::string& name, const char* child = nullptr) const;
  /// "source:line" of <tag name="name">, for a spec's `where`.
  std::string where(const char* tag, const std::string& name) const;

 private:
  std::string source_;
  tinyxml2::XMLDocument doc_;
  const tinyxml2::XMLElement* robot_ = nullptr;
};

/// A <loop_joint> as written (docs/model-format.md, "URDF"; also in Isaac Sim's spelling with
/// <link1>/<link2>): links by name, each joint frame in its link's frame.
struct LoopJointXml {
  std::string name;
  JointType type = JointType::revolute;
  std::string parent, child;     ///< link names
  Transform origin;              ///< joint frame in the parent link frame
  Transform child_origin;        ///< joint frame in the child link frame
  Vec3 axis = Vec3::UnitX();     ///< URDF's default axis; the plane normal of a planar joint
  Vec3 axis2 = Vec3::UnitY();    ///< second axis of a universal joint
  int line = 0, parent_line = 0, child_line = 0;
};

/// Every <loop_joint> child of <robot>, in file order; ModelError for a malformed one.
std::vector<LoopJointXml> read_loop_joints(const Document& doc);

}  // namespace loopdyn::urdf_xml
