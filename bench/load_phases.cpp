// The phases of `loopdyn info` on one model file (bench/run_load.sh, docs/performance.md "Loading
// large models"): libyaml's scan of the file alone (every event parsed and freed, nothing kept:
// the floor of any reader built on it), then loopdyn's whole read into a Mechanism (the same scan,
// the compact tree, the reader's checks), Model::build, summarize() and the JSON that
// `info --json` prints. One Markdown row per phase, wall seconds, each timed once in this process.
//
//   load_phases MODEL.yaml
#include <yaml.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "loopdyn/core/model.hpp"
#include "loopdyn/io/model_file.hpp"
#include "loopdyn/io/model_info.hpp"

namespace {

/// Events in `text`, scanned by libyaml and freed one by one.
std::size_t scan(const std::string& text) {
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser)) throw std::bad_alloc();
  yaml_parser_set_input_string(&parser, reinterpret_cast<const unsigned char*>(text.data()), text.size());
  std::size_t events = 0;
  for (bool end = false; !end; ++events) {
    yaml_event_t event;
    if (!yaml_parser_parse(&parser, &event)) {
      yaml_parser_delete(&parser);
      throw std::runtime_error("libyaml: malformed YAML");
    }
    end = event.type == YAML_STREAM_END_EVENT;
    yaml_event_delete(&event);
  }
  yaml_parser_delete(&parser);
  return events;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: load_phases MODEL.yaml\n");
    return 2;
  }
  using clock = std::chrono::steady_clock;
  auto start = clock::now();
  const auto row = [&](const char* phase) {
    const auto now = clock::now();
    std::printf("| %s | %.2f |\n", phase, std::chrono::duration<double>(now - start).count());
    start = clock::now();
  };
  std::printf("| phase | wall [s] |\n|---|---|\n");
  std::ostringstream file;
  file << std::ifstream(argv[1]).rdbuf();
  const std::size_t events = scan(file.str());
  row(("libyaml's scan alone (" + std::to_string(events) + " events)").c_str());
  const loopdyn::Mechanism mechanism = loopdyn::load_mechanism(argv[1]);
  row("read into a Mechanism (the scan, the tree, the reader)");
  const loopdyn::Model model = loopdyn::Model::build(mechanism);
  row("Model::build");
  const loopdyn::ModelSummary summary = loopdyn::summarize(model);
  row("summarize()");
  const std::size_t size = loopdyn::describe(summary).dump(2).size();
  row(("its JSON (`info --json`, " + std::to_string(size / 1000000) + " MB)").c_str());
  return 0;
}
