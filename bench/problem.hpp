// A mechanism and the state a results program starts it from (bench/*_results.cpp).
#pragma once

#include <string>
#include <utility>

#include "loopdyn/loops/assembly.hpp"
#include "loopdyn/io/model_file.hpp"
#include "loopdyn/loops/loop_structure.hpp"

namespace loopdyn::bench {

struct Problem {
  std::string name;
  Model model;
  VecX q, u;
};

/// models/<name>.yaml at its own initial state, assembled as `loopdyn simulate` does.
inline Problem from_file(const std::string& dir, const std::string& name) {
  Model m = Model::build(load_mechanism(dir + "/" + name + ".yaml"));
  const AssemblyResult a = assemble(m, m.loops().constraints, m.q0, m.u0);
  return {name, std::move(m), a.q, a.u};
}

/// A generated mechanism at the state it was generated with.
inline Problem generated(std::string name, const Mechanism& mechanism) {
  Model m = Model::build(mechanism);
  VecX q = m.q0, u = m.u0;
  return {std::move(name), std::move(m), q, u};
}

}  // namespace loopdyn::bench
