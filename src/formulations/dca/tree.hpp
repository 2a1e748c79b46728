// dca's constraints and its assembly tree (004 §2.2-2.3), built once from the model in named steps:
// the rows each joint and coupling adds and the bodies they join (constraint_set), then the nested
// dissection of the bodies, the node that eliminates each constraint, every node's handles and
// where its solve data lives (assembly_tree). Nothing here changes after the constructor
// (formulations/dca.hpp, "Divide and conquer").
#pragma once

#include <array>
#include <cstddef>
#include <utility>
#include <vector>

#include "loopdyn/loops/constraints.hpp"
#include "loopdyn/formulations/dca.hpp"
#include "loopdyn/core/model.hpp"

namespace loopdyn::dca {

constexpr int kMaxConstraintBodies = 4;  // a joint's two; a coupling of two joints' four

// A joint (tree or loop) or coupling: its rows act on the velocities of `bodies` (ground left out).
struct Constraint {
  enum class Source { tree_joint, loop_joint, coupling };
  Source source = Source::tree_joint;
  int index = -1;  ///< body (tree joint), loop joint or coupling
  int first_row = 0, rows = 0;
  std::array<int, kMaxConstraintBodies> bodies{};
  int nbodies = 0;
  int first_term = 0;  ///< couplings: index of its first term in the coupling coordinates
  const ModelJoint* joint = nullptr;  ///< joints

  int slot(int body) const {
    for (int k = 0; k < nbodies; ++k)
      if (bodies[k] == body) return k;
    return -1;
  }
  void add_body(int body) {
    if (body >= 0 && slot(body) < 0) bodies[nbodies++] = body;
  }
};

/// Every constraint and row of the model (tree joints, loop joints, couplings, in that order), and
/// where G's 6-blocks of each row and body are (Engine::Gblk_, one column per row and constraint body).
struct ConstraintSet {
  std::vector<Constraint> constraints;
  std::vector<ConstraintRow> rows;  ///< every row, ConstraintRow::loop = index in constraints
  std::vector<double> coupling_q0;  ///< first coordinate of every coupling term (the model's q0)
  int loop_rows = 0;                ///< rows of the loop joints and couplings, the last of rows
  std::vector<int> first_block;     ///< (rows + 1) first column of each row's blocks in Engine::Gblk_
  std::vector<int> block_body;      ///< the body of each column of Engine::Gblk_
  /// The (row, column of Engine::Gblk_) pairs of each body, rows ascending: body i's from
  /// body_blocks[body_first[i]] to body_blocks[body_first[i + 1]] (the gather of Gᵀλ).
  std::vector<int> body_first;
  std::vector<std::pair<int, int>> body_blocks;

  int size() const { return static_cast<int>(rows.size()); }
};

/// Step 1 of the constructor. Throws std::invalid_argument for a coupling of a joint with other
/// than one coordinate, or of more than kMaxConstraintBodies bodies.
ConstraintSet constraint_set(const Model& model);

// A node of the assembly tree (see the file comment of dca.hpp). What the sweeps read comes first,
// so that a visit touches little of the node itself.
struct Node {
  int left = -1, right = -1, parent = -1;
  int body = -1;                 ///< leaves
  int hc = 0, he = 0, rows = 0;  ///< handles kept, bodies eliminated here, rows eliminated here
  int blocks = 0;  ///< G's 6-blocks on the rows eliminated here (one per row and constraint body)
  /// In AssemblyTree::index, from here: keep (hc: positions in the children's handles H of this
  /// node's own handles), elim (he: those of the bodies eliminated here), row (rows: the global row
  /// of each local row), column (kMaxConstraintBodies per local row: the offset in K and R, 6 ·
  /// position in H, of each of its constraint's bodies, −1 past them).
  std::ptrdiff_t index = 0;
  // K = diag(children's K_C) + α GᵀG (6h x 6h, 004 eqs 9-10) lives only while the node is
  // factored, in the thread's Scratch, and so do the right-hand side R and the accelerations a_H of
  // the handles during a solve. What the solves read is kept in Solver's tree storage, one stretch
  // per node, the nodes in post order (their ids), at these offsets, in this order:
  std::ptrdiff_t G = 0;   ///< (6 x blocks) G's blocks of the rows eliminated here, copied when factored
  std::ptrdiff_t X = 0;   ///< (6e x 6c) L⁻¹ K_ek, L the Cholesky factor of K_ee
  std::ptrdiff_t L = 0;   ///< L, lower triangle packed by columns (6e (6e + 1) / 2)
  std::ptrdiff_t z = 0;   ///< (6e) L⁻¹ R_e
  std::ptrdiff_t RC = 0;  ///< (6c) R on the handles after the elimination (004 eqs 31-32)
  std::ptrdiff_t aC = 0;  ///< (6c) the handles' accelerations, from the parent
  /// (6c x 6c) K on the handles after the elimination (004 eqs 27-30), K_cc − XᵀX, read only by
  /// the parent's factor: in the Solver's kc storage when the parent's two subtrees may run as two
  /// tasks, else on the stack of the thread that factors the parent's whole subtree
  /// (Scratch::kc_stack), where it stays in the caches.
  std::ptrdiff_t KC = 0;
  bool kc_on_stack = false;
  int lo = 0, hi = 0;  ///< range in the body order
  std::vector<int> H;  ///< handles of the children (the body, at a leaf), in order
  std::vector<int> constraints;  ///< eliminated here

  int h() const { return hc + he; }
};

/// The nodes (in post order: children before parents), with the sizes of the storage their
/// offsets point into.
struct AssemblyTree {
  std::vector<Node> nodes;
  int root = -1;
  std::vector<int> leaf_of_body;
  std::vector<int> index;  ///< every node's handle positions, rows and columns (Node::index), in post order
  std::ptrdiff_t tree_size = 0;   ///< doubles of the solve data (Node::G .. Node::aC of every node)
  std::ptrdiff_t kc_size = 0;     ///< doubles of the K_C kept apart (Node::kc_on_stack false)
  std::ptrdiff_t stack_size = 0;  ///< doubles of a thread's K_C stack
  int largest_h6 = 0, largest_e6 = 0;  ///< 6 × the most handles, and eliminated bodies, of a node
};

/// Step 2 of the constructor: the assembly tree of `set`'s constraints on the model's bodies.
AssemblyTree assembly_tree(const Model& model, const ConstraintSet& set);

/// Dca::tree_shape of a tree (solve_bytes, kc_bytes and stack_bytes as AssemblyTree gives them).
Dca::TreeShape tree_shape(const AssemblyTree& tree, const ConstraintSet& set);

// A node's parts of AssemblyTree::index (Node::index).
struct NodeIndex {
  NodeIndex(const std::vector<int>& index, const Node& n)
      : keep(index.data() + n.index), elim(keep + n.hc), row(elim + n.he), column(row + n.rows) {}
  const int *keep, *elim, *row;
  const int* column;  ///< kMaxConstraintBodies per row
};

}  // namespace loopdyn::dca
