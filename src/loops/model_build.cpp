// Model::build: the tree (src/core/model.cpp), then the loop structure (loop_structure.hpp), which
// depends on the tree's kinematics. The only file of the model that sees the layers above it.
#include <memory>
#include <stdexcept>

#include "loopdyn/loops/loop_structure.hpp"
#include "core/model_tree.hpp"

namespace loopdyn {

Model Model::build(const Mechanism& mechanism) {
  Model m = detail::build_tree(mechanism);
  m.loop_structure = std::make_shared<const LoopStructure>(m);
  return m;
}

const LoopStructure& Model::loops() const {
  if (!loop_structure) throw std::logic_error("model '" + name + "' has no loop structure: build it with Model::build");
  return *loop_structure;
}

}  // namespace loopdyn
