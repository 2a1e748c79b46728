// Model::build: the tree (src/core/model.cpp), then the loop structure (loop_structure.hpp), which
// depends on the tree's kinematics. The only file of the model that sees the layers above it.
#include <memory>
#include <stdexcept>

#include "loopdyn/core/errors.hpp"
#include "loopdyn/core/tree_dynamics.hpp"
#include "loopdyn/loops/loop_structure.hpp"
#include "core/model_tree.hpp"

namespace loopdyn {

namespace {

// A tree whose bodies have no inertia along a joint's motion (a body with its centre of mass on
// its revolute axis and no moment about it) has a singular mass matrix: no method can run it, so
// it is a model error, found here by the articulated-body factor at q0 (O(n)) rather than as the
// first evaluation's failure. With loops or couplings the constraints may hold such bodies: each
// method then says whether it can.
void check_tree_inertia(const Model& m) {
  if (!m.loop_joints.empty() || !m.couplings.empty()) return;
  AbaData d(m);
  try {
    aba_factor(m, d, m.q0);
  } catch (const std::runtime_error& e) {
    throw ModelError(std::string(e.what()) + ": the mass matrix is singular (at the initial configuration), so no "
                     "method can integrate it; give those bodies inertia about the joint's axis, or move their centre "
                     "of mass off it");
  }
}

}  // namespace

Model Model::build(const Mechanism& mechanism) {
  Model m = detail::build_tree(mechanism);
  m.loop_structure = std::make_shared<const LoopStructure>(m);
  check_tree_inertia(m);
  return m;
}

const LoopStructure& Model::loops() const {
  if (!loop_structure) throw std::logic_error("model '" + name + "' has no loop structure: build it with Model::build");
  return *loop_structure;
}

}  // namespace loopdyn
