// Aggregation of closed loops into aggregated bodies (paper 002 §4.2, Figs. 3-4): the tree of
// single and aggregated bodies over which constraint embedding (002 §4.3-8) runs the
// articulated-body algorithm. A view of the Model, not a second model of the mechanism.
//
// For each loop-closing joint (cut-edge) between bodies a and b, the aggregation sub-graph is the
// smallest sub-tree containing both, minus its root: the tree paths from a and from b up to their
// lowest common ancestor c, without c. A cut-edge to ground (c = ground) therefore aggregates all
// ancestors of the other body (002 Fig. 4). A coordinate coupling (gear, linear) embeds with a
// constant X (002 §5.1, eq 37) and needs its joints' bodies in one aggregated body: its sub-graph is
// the paths from its bodies up to their common ancestor c, with c included when it is one of them
// (its own joint is coupled).
//
// Sub-graphs that share a body are merged; bodies in no sub-graph remain single bodies. A merged
// set hangs from one body (its node's parent in the aggregated tree): each sub-graph's top bodies
// hang from its c, and when two share a body x, both c's are ancestors of x, so the lower one lies
// in the other's sub-graph (it is on the path from x up to the higher one).
#pragma once

#include <string>
#include <vector>

#include "loopdyn/core/model.hpp"

namespace loopdyn {

/// A body of the aggregated tree: one model body, or several joined by the loop joints and
/// couplings embedded in them (aggregated()). Its sweep workspace is AggregatedBodyData
/// (tree_dynamics.hpp), as KinematicsData is the Model's.
struct AggregatedBody {
  std::vector<int> bodies;       ///< model body indices, ascending (parents before children)
  std::vector<int> loop_joints;  ///< indices into Model::loop_joints embedded here
  std::vector<int> couplings;    ///< indices into Model::couplings embedded here
  int parent = -1;               ///< parent node, -1 = ground
  int parent_body = -1;          ///< the body all top bodies hang from, -1 = ground
  int nv = 0;                    ///< speeds of the tree joints of `bodies`
  bool aggregated() const { return !loop_joints.empty() || !couplings.empty(); }
};

/// The bodies of the aggregated tree and, per model body, the one that holds it.
struct AggregatedTree {
  std::vector<AggregatedBody> nodes;  ///< parents before children
  std::vector<int> node_of_body;      ///< (nbodies)
  /// Largest number of speeds of one aggregated body (0 without loops or couplings).
  int largest_nv() const;
};

/// The aggregated tree of a model (see the file comment).
AggregatedTree aggregate(const Model& model);

/// The sub-graph of one loop-closing joint or coupling (see the file comment): its bodies,
/// ascending, and the common ancestor they hang from, which is the loop base body 0_i of paper 000
/// §3.1 (−1 = ground).
struct Subgraph {
  std::vector<int> bodies;
  int base = -1;
};
Subgraph loop_subgraph(const Model& model, int loop_joint);
Subgraph coupling_subgraph(const Model& model, int coupling);

}  // namespace loopdyn
