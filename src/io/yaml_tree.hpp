// A YAML document read by libyaml (the reference C parser) into a compact tree: every node is 20
// bytes in one array, every scalar's text in one string, so that a 60,000-body model file takes
// tens of megabytes and a fraction of a second (yaml-cpp's node tree took 1.2 GB and 9 s). The
// model-file reader (model_file.cpp) reads it through Node, whose names follow yaml-cpp's (which
// still writes model files). Lines and columns count from 0, as libyaml's marks do.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace loopdyn::yaml {

struct Mark {
  int line = -1, column = -1;
};

/// Malformed YAML: libyaml's problem and where it found it.
class ParseError : public std::runtime_error {
 public:
  ParseError(Mark at, const std::string& what) : std::runtime_error(what), mark(at) {}
  Mark mark;
};

class Tree;

/// A node of a Tree, or an undefined node (a key that is not there). Cheap to copy; valid while
/// its Tree lives.
class Node {
 public:
  Node() = default;
  bool IsDefined() const { return tree_ != nullptr; }
  /// An empty value, or a plain ~, null, Null, NULL (YAML's null).
  bool IsNull() const;
  bool IsScalar() const;
  bool IsSequence() const;
  bool IsMap() const;
  std::string Scalar() const;
  /// The scalar's text without a copy (empty for other kinds): valid while the Tree lives.
  std::string_view text() const;
  /// Items of a sequence, entries of a map, 0 otherwise.
  std::size_t size() const;
  /// Item k of a sequence (undefined past its end or for another kind).
  Node operator[](std::size_t k) const;
  /// The value of the first entry whose key is the scalar `key` (undefined when none).
  Node operator[](std::string_view key) const;
  /// Entry k of a map: (key, value).
  std::pair<Node, Node> entry(std::size_t k) const;
  Mark mark() const;

 private:
  friend class Tree;
  Node(const Tree* tree, std::uint32_t id) : tree_(tree), id_(id) {}
  const Tree* tree_ = nullptr;
  std::uint32_t id_ = 0;
};

/// Reads a YAML number as yaml-cpp's convert<double> does: decimal and exponent forms, a leading
/// sign, .inf/.Inf/.INF and .nan/.NaN/.NAN; false for anything else.
bool decode_number(std::string_view text, double& value);
/// true/false, yes/no, y/n, on/off in lower case, Capitalized or UPPER CASE (yaml-cpp's set).
bool decode_flag(std::string_view text, bool& value);

class Tree {
 public:
  /// The first document of `text`; throws ParseError for malformed YAML. An empty text gives an
  /// undefined root.
  static Tree parse(std::string_view text);
  Node root() const { return items_.empty() ? Node() : Node(this, 0); }

 private:
  friend class Node;
  enum class Kind : std::uint8_t { null, scalar, sequence, map };
  struct Item {
    Kind kind;
    std::uint32_t line, column;
    std::uint32_t begin, count;  ///< scalar: its bytes in text_; sequence, map: its ids in children_
  };
  std::vector<Item> items_;
  std::vector<std::uint32_t> children_;  ///< a map's as key, value, key, value, ...
  std::string text_;
};

// Node's accessors are inline: the model-file reader calls them tens of millions of times on a
// large file.
inline bool Node::IsNull() const { return tree_ && tree_->items_[id_].kind == Tree::Kind::null; }
inline bool Node::IsScalar() const { return tree_ && tree_->items_[id_].kind == Tree::Kind::scalar; }
inline bool Node::IsSequence() const { return tree_ && tree_->items_[id_].kind == Tree::Kind::sequence; }
inline bool Node::IsMap() const { return tree_ && tree_->items_[id_].kind == Tree::Kind::map; }

inline std::string_view Node::text() const {
  if (!IsScalar() && !IsNull()) return {};
  const Tree::Item& item = tree_->items_[id_];
  return std::string_view(tree_->text_).substr(item.begin, item.count);
}

inline std::size_t Node::size() const { return IsSequence() || IsMap() ? tree_->items_[id_].count : 0; }

inline Node Node::operator[](std::size_t k) const {
  if (!IsSequence() || k >= size()) return {};
  return {tree_, tree_->children_[tree_->items_[id_].begin + k]};
}

inline std::pair<Node, Node> Node::entry(std::size_t k) const {
  if (!IsMap() || k >= size()) return {};
  const std::uint32_t at = tree_->items_[id_].begin + 2 * static_cast<std::uint32_t>(k);
  return {Node(tree_, tree_->children_[at]), Node(tree_, tree_->children_[at + 1])};
}

inline Node Node::operator[](std::string_view key) const {
  if (!IsMap()) return {};
  const Tree::Item& map = tree_->items_[id_];
  for (std::uint32_t k = 0; k < map.count; ++k) {
    const Node name(tree_, tree_->children_[map.begin + 2 * k]);
    if ((name.IsScalar() || name.IsNull()) && name.text() == key) return {tree_, tree_->children_[map.begin + 2 * k + 1]};
  }
  return {};
}

}  // namespace loopdyn::yaml
