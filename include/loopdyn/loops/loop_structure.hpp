// LoopStructure: what the loops of a model are, independent of the state. The constraint rows of
// every loop-closing joint and coupling, the structurally independent ones among them (the rank
// check of structural_rank.hpp runs Newton solves at sampled closed configurations), and the
// aggregated tree of constraint embedding (aggregation.hpp). Model::build builds it once, after
// the tree; every formulation, the Simulator, projection, reactions and the CLI read it through
// Model::loops() by const reference.
#pragma once

#include "loopdyn/loops/aggregation.hpp"
#include "loopdyn/loops/constraints.hpp"

namespace loopdyn {

struct LoopStructure {
  explicit LoopStructure(const Model& model);
  /// Every row (Constraints::all_rows), none dropped: diagnostics, assembly's branch check.
  Constraints unreduced;
  /// The rows the formulations evaluate, with the structurally redundant ones as dropped().
  Constraints constraints;
  AggregatedTree aggregation;

  /// Independent speeds of each node at q (its degrees of freedom relative to its parent node):
  /// nv − rank of the node's kept constraint rows (those of its loop joints and couplings) on its
  /// own speeds, with the rank rule of constraint_rank. A single body keeps all its speeds.
  std::vector<int> independent_speeds(const Model& model, const VecX& q) const;
};

}  // namespace loopdyn
