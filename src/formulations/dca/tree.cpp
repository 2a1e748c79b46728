#include "formulations/dca/tree.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

#include <metis.h>

#include "loops/constraint_rows.hpp"
#include "loopdyn/loops/loop_structure.hpp"

namespace loopdyn::dca {

namespace {

using Kind = ConstraintRow::Kind;

// Balanced bisections of sets of bodies on the graph whose edges join the bodies of each constraint,
// by METIS's multilevel recursive bisection: two parts of equal body count (within METIS's default
// tolerance) with the fewest edges between them. Applied to each node's bodies in turn, from the
// root, this is a nested dissection: on a net a node's handles are the perimeter of its patch, of
// O(√n) bodies, where the bisection of one fixed order by count keeps the whole wave front of O(√n)
// at every node of the upper levels (George 1973; Karypis and Kumar 1998).
class Bisection {
 public:
  explicit Bisection(const std::vector<std::vector<int>>& adjacency)
      : adjacency_(adjacency), local_(adjacency.size(), -1) {}

  /// Reorders the bodies [first, last) (at least two) so that the first part comes first, each part
  /// in the order given; returns the first part's size.
  std::ptrdiff_t split(std::vector<int>::iterator first, std::vector<int>::iterator last) {
    const std::vector<int> bodies(first, last);
    idx_t count = static_cast<idx_t>(bodies.size()), constraints = 1, parts = 2, cut = 0;
    for (idx_t k = 0; k < count; ++k) local_[bodies[k]] = k;
    xadj_.assign(1, 0);
    adjncy_.clear();
    for (int b : bodies) {
      for (int n : adjacency_[b])
        if (local_[n] >= 0) adjncy_.push_back(local_[n]);
      xadj_.push_back(static_cast<idx_t>(adjncy_.size()));
    }
    for (int b : bodies) local_[b] = -1;
    part_.assign(bodies.size(), 0);
    idx_t options[METIS_NOPTIONS];
    METIS_SetDefaultOptions(options);
    options[METIS_OPTION_SEED] = 1;  // the same tree at every run
    const int status = METIS_PartGraphRecursive(&count, &constraints, xadj_.data(), adjncy_.data(), nullptr, nullptr,
                                                nullptr, &parts, nullptr, nullptr, options, &cut, part_.data());
    if (status != METIS_OK)
      throw std::runtime_error("dca: METIS could not bisect " + std::to_string(count) + " bodies of the assembly tree (status " +
                               std::to_string(status) + ")");
    const std::ptrdiff_t size = std::count(part_.begin(), part_.end(), 0);
    if (size == 0 || size == count) return count / 2;  // bodies without joints between them: any half
    for (int p : {0, 1})
      for (idx_t k = 0; k < count; ++k)
        if (part_[k] == p) *first++ = bodies[k];
    return size;
  }

 private:
  const std::vector<std::vector<int>>& adjacency_;
  std::vector<idx_t> local_, xadj_, adjncy_, part_;
};

// The constraint graph: each body's neighbours, the bodies it shares a constraint with.
std::vector<std::vector<int>> adjacency_of(int nb, const ConstraintSet& set) {
  std::vector<std::vector<int>> adjacency(nb);
  for (const Constraint& c : set.constraints)
    for (int a = 0; a < c.nbodies; ++a)
      for (int b = 0; b < c.nbodies; ++b)
        if (a != b) adjacency[c.bodies[a]].push_back(c.bodies[b]);
  for (auto& adj : adjacency) {
    std::sort(adj.begin(), adj.end());
    adj.erase(std::unique(adj.begin(), adj.end()), adj.end());
  }
  return adjacency;
}

// The nodes of the nested dissection (each node's bodies into its children's by Bisection), in
// post order, with the root, the leaves and each body's position in the order of the leaves.
void bisect(int nb, const ConstraintSet& set, AssemblyTree& tree, std::vector<int>& position) {
  const std::vector<std::vector<int>> adjacency = adjacency_of(nb, set);
  std::vector<int> order(nb);
  std::iota(order.begin(), order.end(), 0);
  Bisection bisection(adjacency);
  std::vector<Node>& nodes = tree.nodes;
  tree.leaf_of_body.assign(nb, -1);
  nodes.reserve(2 * nb);
  auto build = [&](auto& self, int lo, int hi) -> int {
    int left = -1, right = -1;
    if (hi - lo > 1) {
      const int mid = lo + static_cast<int>(bisection.split(order.begin() + lo, order.begin() + hi));
      left = self(self, lo, mid);
      right = self(self, mid, hi);
    }
    Node& n = nodes.emplace_back();
    n.lo = lo;
    n.hi = hi;
    n.left = left;
    n.right = right;
    if (left < 0) n.body = order[lo];
    const int id = static_cast<int>(nodes.size()) - 1;
    if (nodes[id].body >= 0) tree.leaf_of_body[nodes[id].body] = id;
    else nodes[nodes[id].left].parent = nodes[nodes[id].right].parent = id;
    return id;
  };
  if (nb > 0) tree.root = build(build, 0, nb);
  position.assign(nb, 0);
  for (int k = 0; k < nb; ++k) position[order[k]] = k;
}

// Each constraint to the smallest node holding its bodies (Node::constraints); returns, per node,
// the marks of the bodies it is a handle of (those of constraints eliminated higher up; empty: none).
std::vector<std::vector<char>> place_constraints(int nb, const ConstraintSet& set, const std::vector<int>& position,
                                                 AssemblyTree& tree) {
  std::vector<Node>& nodes = tree.nodes;
  std::vector<std::vector<char>> handle(nodes.size());
  for (int k = 0; k < static_cast<int>(set.constraints.size()); ++k) {
    const Constraint& c = set.constraints[k];
    int lo = nb, hi = -1;
    for (int j = 0; j < c.nbodies; ++j) {
      lo = std::min(lo, position[c.bodies[j]]);
      hi = std::max(hi, position[c.bodies[j]]);
    }
    int node = tree.root;
    for (;;) {
      const Node& n = nodes[node];
      if (n.body >= 0) break;
      if (hi < nodes[n.left].hi) node = n.left;
      else if (lo >= nodes[n.right].lo) node = n.right;
      else break;
    }
    nodes[node].constraints.push_back(k);
    for (int j = 0; j < c.nbodies; ++j)
      for (int n = tree.leaf_of_body[c.bodies[j]]; n != node; n = nodes[n].parent) {
        auto& mark = handle[n];
        if (mark.empty()) mark.assign(nb, 0);
        mark[c.bodies[j]] = 1;
      }
  }
  return handle;
}

// Handles (children before parents: the nodes are in post order), rows and columns, and the
// offsets of every node's solve data and K_C.
void lay_out(const ConstraintSet& set, const std::vector<std::vector<char>>& handle, AssemblyTree& tree) {
  std::vector<Node>& nodes = tree.nodes;
  std::ptrdiff_t tree_size = 0, kc_size = 0, stack_top = 0, stack_size = 0;
  std::vector<std::vector<int>> keep(nodes.size());
  for (int id = 0; id < static_cast<int>(nodes.size()); ++id) {
    Node& n = nodes[id];
    if (n.body >= 0) {
      n.H = {n.body};
    } else {
      for (int child : {n.left, n.right})
        for (int k : keep[child]) n.H.push_back(nodes[child].H[k]);
    }
    std::vector<int> elim, row, column;
    for (int k = 0; k < static_cast<int>(n.H.size()); ++k)
      (!handle[id].empty() && handle[id][n.H[k]] ? keep[id] : elim).push_back(k);
    for (int k : n.constraints) {
      const Constraint& c = set.constraints[k];
      for (int r = 0; r < c.rows; ++r) {
        row.push_back(c.first_row + r);
        for (int j = 0; j < kMaxConstraintBodies; ++j)
          column.push_back(j < c.nbodies ? 6 * static_cast<int>(std::find(n.H.begin(), n.H.end(), c.bodies[j]) - n.H.begin()) : -1);
        n.blocks += c.nbodies;
      }
    }
    n.hc = static_cast<int>(keep[id].size());
    n.he = static_cast<int>(elim.size());
    n.rows = static_cast<int>(row.size());
    n.index = static_cast<std::ptrdiff_t>(tree.index.size());
    for (const std::vector<int>* part : {&keep[id], &elim, &row, &column})
      tree.index.insert(tree.index.end(), part->begin(), part->end());
    const std::ptrdiff_t h6 = 6 * n.h(), c6 = 6 * n.hc, e6 = 6 * n.he;
    tree.largest_h6 = std::max(tree.largest_h6, static_cast<int>(h6));
    tree.largest_e6 = std::max(tree.largest_e6, static_cast<int>(e6));
    // The node's stretch of the solve data, from a cache line (8 doubles).
    std::ptrdiff_t at = (static_cast<std::ptrdiff_t>(tree_size) + 7) / 8 * 8;
    for (auto [offset, size] : {std::pair{&n.G, 6 * static_cast<std::ptrdiff_t>(n.blocks)}, std::pair{&n.X, e6 * c6},
                                std::pair{&n.L, e6 * (e6 + 1) / 2}, std::pair{&n.z, e6}, std::pair{&n.RC, c6},
                                std::pair{&n.aC, c6}}) {
      *offset = at;
      at += size;
    }
    tree_size = at;
    // K_C: on the thread's stack where the parent's children run one after the other in the same
    // task (post_order), pushed here and popped by the parent, so that a subtree below the grain
    // leaves the stack as it found it; else apart.
    if (n.body < 0)
      for (int child : {n.right, n.left})
        if (nodes[child].kc_on_stack) stack_top = nodes[child].KC;
    n.kc_on_stack = n.parent >= 0 && nodes[n.parent].hi - nodes[n.parent].lo < Dca::kParallelGrain;
    std::ptrdiff_t& top = n.kc_on_stack ? stack_top : kc_size;
    n.KC = top;
    top += c6 * c6;
    stack_size = std::max(stack_size, stack_top);
  }
  if (tree.root >= 0 && nodes[tree.root].hc != 0) throw std::logic_error("dca: the root of the assembly tree has handles");
  tree.tree_size = tree_size;
  tree.kc_size = kc_size;
  tree.stack_size = stack_size;
}

// Row r's 6-blocks, one per body of its constraint, from column first_block[r] of Engine::Gblk_, and
// each body's blocks.
void index_blocks(int nb, ConstraintSet& set) {
  const int m = set.size();
  const std::vector<Constraint>& constraints = set.constraints;
  const std::vector<ConstraintRow>& rows = set.rows;
  set.first_block.assign(m + 1, 0);
  for (int r = 0; r < m; ++r) set.first_block[r + 1] = set.first_block[r] + constraints[rows[r].loop].nbodies;
  set.block_body.resize(set.first_block[m]);
  for (int r = 0; r < m; ++r)
    for (int j = 0; j < constraints[rows[r].loop].nbodies; ++j)
      set.block_body[set.first_block[r] + j] = constraints[rows[r].loop].bodies[j];
  set.body_first.assign(nb + 1, 0);
  for (int r = 0; r < m; ++r)
    for (int j = 0; j < constraints[rows[r].loop].nbodies; ++j) ++set.body_first[constraints[rows[r].loop].bodies[j] + 1];
  for (int i = 0; i < nb; ++i) set.body_first[i + 1] += set.body_first[i];
  set.body_blocks.resize(set.body_first[nb]);
  std::vector<int> filled(set.body_first.begin(), set.body_first.end() - 1);
  for (int r = 0; r < m; ++r)
    for (int j = 0; j < constraints[rows[r].loop].nbodies; ++j)
      set.body_blocks[filled[constraints[rows[r].loop].bodies[j]]++] = {r, set.first_block[r] + j};
}

}  // namespace

ConstraintSet constraint_set(const Model& model) {
  ConstraintSet set;
  std::vector<Constraint>& constraints = set.constraints;
  std::vector<ConstraintRow>& rows = set.rows;
  // Tree joints, loop joints, couplings.
  auto add_joint = [&](Constraint::Source source, int index, const ModelJoint& mj) {
    Constraint c;
    c.source = source;
    c.index = index;
    c.joint = &mj;
    c.add_body(mj.parent);
    c.add_body(mj.child);
    c.first_row = static_cast<int>(rows.size());
    detail::joint_rows(mj, static_cast<int>(constraints.size()), rows);
    c.rows = static_cast<int>(rows.size()) - c.first_row;
    if (c.rows > 0) constraints.push_back(c);
  };
  for (int i = 0; i < model.nbodies; ++i) add_joint(Constraint::Source::tree_joint, i, model.joints[i]);
  for (int k = 0; k < static_cast<int>(model.loop_joints.size()); ++k)
    add_joint(Constraint::Source::loop_joint, k, model.loop_joints[k]);
  for (int k = 0; k < static_cast<int>(model.couplings.size()); ++k) {
    Constraint c;
    c.source = Constraint::Source::coupling;
    c.index = k;
    c.first_row = static_cast<int>(rows.size());
    c.rows = 1;
    c.first_term = static_cast<int>(set.coupling_q0.size());
    for (const ModelCoupling::Term& t : model.couplings[k].terms) {
      if (model.nq_joint[t.joint] != 1 || model.nv_joint[t.joint] != 1)
        throw std::invalid_argument("dca: coupling '" + model.couplings[k].name + "' couples joint '" +
                                    model.joints[t.joint].name + "', which has not one coordinate");
      c.add_body(model.parent[t.joint]);
      c.add_body(t.joint);
      set.coupling_q0.push_back(model.q0(t.q_index));
    }
    if (c.nbodies > kMaxConstraintBodies)
      throw std::invalid_argument("dca: coupling '" + model.couplings[k].name + "' acts on more than " +
                                  std::to_string(kMaxConstraintBodies) + " bodies");
    rows.push_back({Kind::coupling, static_cast<int>(constraints.size()), Vec3::Zero(), Vec3::Zero(),
                    model.couplings[k].name});
    constraints.push_back(c);
  }
  // The rows of the loop joints and couplings come last, in the order of Constraints::all_rows.
  set.loop_rows = model.loops().unreduced.rows();
  index_blocks(model.nbodies, set);
  return set;
}

AssemblyTree assembly_tree(const Model& model, const ConstraintSet& set) {
  AssemblyTree tree;
  std::vector<int> position;
  bisect(model.nbodies, set, tree, position);
  const std::vector<std::vector<char>> handle = place_constraints(model.nbodies, set, position, tree);
  lay_out(set, handle, tree);
  return tree;
}

Dca::TreeShape tree_shape(const AssemblyTree& tree, const ConstraintSet& set) {
  const std::vector<Node>& nodes = tree.nodes;
  Dca::TreeShape s;
  s.nodes = static_cast<int>(nodes.size());
  s.rows = set.size();
  s.solve_bytes = static_cast<std::size_t>(tree.tree_size) * sizeof(double) + tree.index.size() * sizeof(int);
  s.kc_bytes = static_cast<std::size_t>(tree.kc_size) * sizeof(double);
  s.stack_bytes = static_cast<std::size_t>(tree.stack_size) * sizeof(double);
  // Children before parents (ids in post order): work[id] = the subtree's multiply-adds,
  // path[id] = its critical path.
  std::vector<double> work(nodes.size()), path(nodes.size());
  for (int id = 0; id < s.nodes; ++id) {
    const Node& n = nodes[id];
    s.max_handles = std::max(s.max_handles, n.hc);
    const double e = 6.0 * n.he, c = 6.0 * n.hc;
    const double own = e * e * e / 3.0 + e * e * c + e * c * c;
    s.factor_madds += own;
    work[id] = path[id] = own;
    if (n.body < 0) {
      work[id] += work[n.left] + work[n.right];
      path[id] = n.hi - n.lo >= Dca::kParallelGrain ? own + std::max(path[n.left], path[n.right]) : work[id];
    }
    int depth = 0;
    for (int k = id; nodes[k].parent >= 0; k = nodes[k].parent) ++depth;
    s.depth = std::max(s.depth, depth);
  }
  s.critical_madds = s.nodes ? path[tree.root] : 0.0;
  return s;
}

}  // namespace loopdyn::dca
