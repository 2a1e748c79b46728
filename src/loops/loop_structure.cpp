// The loop structure of a model, built once (loop_structure.hpp).
#include "loopdyn/loops/loop_structure.hpp"

#include <algorithm>

#include "loopdyn/core/linalg.hpp"
#include "loopdyn/loops/structural_rank.hpp"
#include "loops/sparse_qr.hpp"

namespace loopdyn {

LoopStructure::LoopStructure(const Model& model)
    : unreduced(Constraints::all_rows(model)),
      constraints(structural_reduction(model, unreduced.kept())),
      aggregation(aggregate(model)) {
  // A drive's row found dependent on the others prescribes a motion the loops (or another drive)
  // already fix: dropping it would ignore the drive, keeping it would over-determine the motion.
  for (const ConstraintRow& row : constraints.dropped())
    if (row.kind == ConstraintRow::Kind::coupling && model.couplings[row.loop].drive)
      throw ModelError("drive '" + model.couplings[row.loop].name +
                       "': the loops and the other drives and couplings already fix this joint's motion (its "
                       "constraint row depends on theirs); drive a joint that is free to move");
}

std::vector<int> LoopStructure::independent_speeds(const Model& model, const VecX& q) const {
  const Constraints& cons = constraints;
  const AggregatedTree& a = aggregation;
  KinematicsData kin(model);
  update_positions(model, kin, q);
  ConstraintData data(model);
  MatX G(cons.rows(), model.nv);
  constraint_jacobian(model, cons, kin, data, G);
  std::vector<int> out;
  for (std::size_t n = 0; n < a.nodes.size(); ++n) {
    const AggregatedBody& node = a.nodes[n];
    std::vector<int> rows, cols;
    for (int r = 0; r < cons.rows(); ++r) {
      const ConstraintRow& row = cons.kept()[r];
      const auto& owners = row.kind == ConstraintRow::Kind::coupling ? node.couplings : node.loop_joints;
      if (std::find(owners.begin(), owners.end(), row.loop) != owners.end()) rows.push_back(r);
    }
    for (int b : node.bodies) model.append_speeds(b, cols);
    out.push_back(node.nv - detail::jacobian_rank(G(rows, cols)).rank);
  }
  return out;
}

}  // namespace loopdyn
