#include "io/yaml_tree.hpp"

#include <yaml.h>

#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <string>

namespace loopdyn::yaml {

namespace {

// libyaml's parser and event, released on every path.
struct Parser {
  yaml_parser_t parser;
  Parser() {
    if (!yaml_parser_initialize(&parser)) throw std::bad_alloc();
  }
  ~Parser() { yaml_parser_delete(&parser); }
};
struct Event {
  yaml_event_t event{};
  ~Event() { yaml_event_delete(&event); }
};

bool is_null_text(std::string_view s) { return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL"; }

std::uint32_t index_of(std::size_t n) {
  if (n > std::numeric_limits<std::uint32_t>::max()) throw std::length_error("YAML document too large");
  return static_cast<std::uint32_t>(n);
}

// libyaml's scanner keeps its possible simple keys per flow level and walks them at every token:
// flow collections nested n deep cost n² (40,000 levels of `[`: 40 G instructions, 2.7 s, before
// its error; 100,000: 20 s). No model file nests them more than a few levels, so a text past
// kDeepestFlow is refused before libyaml reads it. Brackets inside quotes and comments are not
// counted; a quote that is not one (an apostrophe in a plain scalar) only makes the count lower.
constexpr int kDeepestFlow = 1000;

void check_flow_depth(std::string_view text) {
  int depth = 0, line = 0, column = 0;
  char quote = 0;
  bool comment = false, escaped = false;
  for (char c : text) {
    ++column;
    if (c == '\n') {
      ++line, column = 0, comment = false;
      continue;
    }
    if (comment) continue;
    if (quote) {
      if (escaped) escaped = false;
      else if (quote == '"' && c == '\\') escaped = true;
      else if (c == quote) quote = 0;
      continue;
    }
    if (c == '#') comment = true;
    else if (c == '"' || c == '\'') quote = c;
    else if ((c == '[' || c == '{') && ++depth > kDeepestFlow)
      throw ParseError({line, column - 1}, "flow collections ([...], {...}) nested more than " +
                                               std::to_string(kDeepestFlow) + " deep");
    else if ((c == ']' || c == '}') && depth > 0) --depth;
  }
}

}  // namespace

Tree Tree::parse(std::string_view text) {
  check_flow_depth(text);
  Tree tree;
  Parser p;
  yaml_parser_set_input_string(&p.parser, reinterpret_cast<const unsigned char*>(text.data()), text.size());
  // Containers being read: their ids and where their children start in `pending`, the ids of the
  // children read so far (moved to children_ when a container closes, so that each container's
  // children are contiguous; one buffer, no allocation per container).
  std::vector<std::pair<std::uint32_t, std::size_t>> open;
  std::vector<std::uint32_t> pending;
  std::map<std::string, std::uint32_t, std::less<>> anchors;
  tree.text_.reserve(text.size());  // scalars' text is part of the document's: one allocation
  auto add = [&](Kind kind, const yaml_mark_t& at, const yaml_char_t* anchor) {
    const std::uint32_t id = index_of(tree.items_.size());
    tree.items_.push_back({kind, index_of(at.line), index_of(at.column), 0, 0});
    if (!open.empty()) pending.push_back(id);
    if (anchor) anchors[reinterpret_cast<const char*>(anchor)] = id;
    return id;
  };
  for (bool done = false; !done;) {
    Event e;
    if (!yaml_parser_parse(&p.parser, &e.event)) {
      const yaml_mark_t& at = p.parser.problem_mark;
      std::string what = p.parser.problem ? p.parser.problem : "malformed YAML";
      if (p.parser.context) what = std::string(p.parser.context) + ": " + what;
      throw ParseError({static_cast<int>(at.line), static_cast<int>(at.column)}, what);
    }
    const yaml_event_t& ev = e.event;
    switch (ev.type) {
      case YAML_SCALAR_EVENT: {
        const std::string_view value(reinterpret_cast<const char*>(ev.data.scalar.value), ev.data.scalar.length);
        const bool plain = ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
        const std::uint32_t id = add(plain && is_null_text(value) ? Kind::null : Kind::scalar, ev.start_mark,
                                     ev.data.scalar.anchor);
        tree.items_[id].begin = index_of(tree.text_.size());
        tree.items_[id].count = index_of(value.size());
        tree.text_.append(value);
        break;
      }
      case YAML_SEQUENCE_START_EVENT:
      case YAML_MAPPING_START_EVENT: {
        const bool map = ev.type == YAML_MAPPING_START_EVENT;
        const std::uint32_t id = add(map ? Kind::map : Kind::sequence, ev.start_mark,
                                     map ? ev.data.mapping_start.anchor : ev.data.sequence_start.anchor);
        open.emplace_back(id, pending.size());  // after add(), which listed the id as its parent's child
        break;
      }
      case YAML_SEQUENCE_END_EVENT:
      case YAML_MAPPING_END_EVENT: {
        Item& item = tree.items_[open.back().first];
        const auto first = pending.begin() + static_cast<std::ptrdiff_t>(open.back().second);
        const std::size_t n = static_cast<std::size_t>(pending.end() - first);
        item.begin = index_of(tree.children_.size());
        item.count = index_of(item.kind == Kind::map ? n / 2 : n);
        tree.children_.insert(tree.children_.end(), first, pending.end());
        pending.erase(first, pending.end());
        open.pop_back();
        break;
      }
      case YAML_ALIAS_EVENT: {
        const auto it = anchors.find(reinterpret_cast<const char*>(ev.data.alias.anchor));
        if (it == anchors.end())
          throw ParseError({static_cast<int>(ev.start_mark.line), static_cast<int>(ev.start_mark.column)},
                           "unknown anchor '" + std::string(reinterpret_cast<const char*>(ev.data.alias.anchor)) + "'");
        if (!open.empty()) pending.push_back(it->second);
        break;
      }
      case YAML_DOCUMENT_END_EVENT: {
        // One document: a second one (after `---`, or text after `...`) was ignored without a word,
        // its keys unread and unchecked.
        Event next;
        if (!yaml_parser_parse(&p.parser, &next.event) || next.event.type != YAML_STREAM_END_EVENT) {
          const yaml_mark_t& at = next.event.type == YAML_NO_EVENT ? p.parser.problem_mark : next.event.start_mark;
          throw ParseError({static_cast<int>(at.line), static_cast<int>(at.column)},
                           "a second YAML document: a model file holds one (remove the `---` or `...` and what follows, "
                           "or merge it into the first)");
        }
        done = true;
        break;
      }
      case YAML_STREAM_END_EVENT:
        done = true;
        break;
      default:
        break;
    }
  }
  return tree;
}

std::string Node::Scalar() const { return std::string(text()); }

Mark Node::mark() const {
  if (!tree_) return {};
  const Tree::Item& item = tree_->items_[id_];
  return {static_cast<int>(item.line), static_cast<int>(item.column)};
}

bool decode_number(std::string_view text, double& value) {
  for (std::string_view inf : {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"})
    if (text == inf) return value = std::numeric_limits<double>::infinity(), true;
  for (std::string_view inf : {"-.inf", "-.Inf", "-.INF"})
    if (text == inf) return value = -std::numeric_limits<double>::infinity(), true;
  for (std::string_view nan : {".nan", ".NaN", ".NAN"})
    if (text == nan) return value = std::numeric_limits<double>::quiet_NaN(), true;
  if (!text.empty() && text[0] == '+') text.remove_prefix(1);
  if (text.empty() || text[0] == '+') return false;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size();
}

bool decode_flag(std::string_view text, bool& value) {
  static constexpr std::pair<std::string_view, bool> words[] = {
      {"true", true}, {"false", false}, {"yes", true}, {"no", false}, {"y", true}, {"n", false}, {"on", true}, {"off", false}};
  const auto upper = [](char c) { return static_cast<char>(c - 'a' + 'A'); };
  // `text` is the lower-case `word` with its first `capitals` letters in upper case.
  const auto spells = [&](std::string_view word, std::size_t capitals) {
    if (text.size() != word.size()) return false;
    for (std::size_t k = 0; k < word.size(); ++k)
      if (text[k] != (k < capitals ? upper(word[k]) : word[k])) return false;
    return true;
  };
  for (const auto& [word, meaning] : words)
    if (spells(word, 0) || spells(word, 1) || spells(word, word.size())) return value = meaning, true;
  return false;
}

}  // namespace loopdyn::yaml
