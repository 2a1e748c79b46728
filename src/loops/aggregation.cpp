// Aggregated bodies of paper 002 §4.2 (aggregation.hpp has the rules).
#include "loopdyn/loops/aggregation.hpp"

#include <algorithm>
#include <numeric>


namespace loopdyn {

namespace {

// Lowest common ancestor of a and b (−1 = ground); parent[i] < i.
int common_ancestor(const Model& m, int a, int b) {
  while (a != b) {
    if (a > b) a = m.parent[a];
    else b = m.parent[b];
  }
  return a;
}

// Appends the bodies on the path from `body` up to `top` (exclusive).
void add_path(const Model& m, int body, int top, std::vector<int>& out) {
  for (int i = body; i != top; i = m.parent[i]) out.push_back(i);
}

Subgraph sorted(Subgraph g) {
  std::sort(g.bodies.begin(), g.bodies.end());
  g.bodies.erase(std::unique(g.bodies.begin(), g.bodies.end()), g.bodies.end());
  return g;
}

// Union-find over bodies.
struct Sets {
  std::vector<int> up;
  explicit Sets(int n) : up(n) { std::iota(up.begin(), up.end(), 0); }
  int find(int i) { return up[i] == i ? i : up[i] = find(up[i]); }
  void join(int a, int b) { up[find(a)] = find(b); }
};

}  // namespace

Subgraph loop_subgraph(const Model& m, int loop_joint) {
  const ModelJoint& lj = m.loop_joints[loop_joint];
  Subgraph g;
  g.base = common_ancestor(m, lj.parent, lj.child);
  add_path(m, lj.parent, g.base, g.bodies);
  add_path(m, lj.child, g.base, g.bodies);
  return sorted(std::move(g));
}

Subgraph coupling_subgraph(const Model& m, int coupling) {
  const ModelCoupling& cp = m.couplings[coupling];
  Subgraph g;
  g.base = cp.terms.front().joint;
  for (const ModelCoupling::Term& t : cp.terms) g.base = common_ancestor(m, g.base, t.joint);
  for (const ModelCoupling::Term& t : cp.terms) add_path(m, t.joint, g.base, g.bodies);
  // A coupled joint of the common ancestor itself belongs to the sub-graph.
  if (g.base >= 0 && std::any_of(cp.terms.begin(), cp.terms.end(), [&](const auto& t) { return t.joint == g.base; })) {
    g.bodies.push_back(g.base);
    g.base = m.parent[g.base];
  }
  return sorted(std::move(g));
}

int AggregatedTree::largest_nv() const {
  int n = 0;
  for (const AggregatedBody& node : nodes)
    if (node.aggregated()) n = std::max(n, node.nv);
  return n;
}

AggregatedTree aggregate(const Model& m) {
  const int nb = m.nbodies;
  std::vector<char> member(nb, 0);  // body belongs to some sub-graph
  Sets sets(nb);
  // Each sub-graph: mark it and join its bodies.
  auto add_subgraph = [&](const Subgraph& g) {
    for (int i : g.bodies) {
      member[i] = 1;
      sets.join(i, g.bodies.front());
    }
  };
  for (int k = 0; k < static_cast<int>(m.loop_joints.size()); ++k) add_subgraph(loop_subgraph(m, k));
  for (int k = 0; k < static_cast<int>(m.couplings.size()); ++k) add_subgraph(coupling_subgraph(m, k));
  // Nodes: one per set and one per single body, in order of their first (topmost) body.
  AggregatedTree out;
  out.node_of_body.assign(nb, -1);
  std::vector<int> node_of_set(nb, -1);
  for (int i = 0; i < nb; ++i) {
    const int key = member[i] ? sets.find(i) : -1;
    int node = key >= 0 ? node_of_set[key] : -1;
    if (node < 0) {
      node = static_cast<int>(out.nodes.size());
      out.nodes.emplace_back();
      const int p = m.parent[i];
      out.nodes[node].parent_body = p;
      out.nodes[node].parent = p < 0 ? -1 : out.node_of_body[p];
      if (key >= 0) node_of_set[key] = node;
    }
    out.node_of_body[i] = node;
    out.nodes[node].bodies.push_back(i);
    out.nodes[node].nv += m.nv_joint[i];
  }
  for (std::size_t k = 0; k < m.loop_joints.size(); ++k) {
    // The side that is not the common ancestor lies in the cut-edge's sub-graph.
    const ModelJoint& lj = m.loop_joints[k];
    const int body = lj.child == common_ancestor(m, lj.parent, lj.child) ? lj.parent : lj.child;
    out.nodes[out.node_of_body[body]].loop_joints.push_back(static_cast<int>(k));
  }
  for (std::size_t k = 0; k < m.couplings.size(); ++k)
    out.nodes[out.node_of_body[m.couplings[k].terms.front().joint]].couplings.push_back(static_cast<int>(k));
  return out;
}

}  // namespace loopdyn
