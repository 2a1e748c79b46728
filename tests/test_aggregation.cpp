// Aggregated bodies of paper 002 §4.2 (aggregate): the structure on hand-built mechanisms whose
// aggregation is known (four-bars, the planar ladder in every layout, a gear, a cut-edge to
// ground), and the defining properties on random mechanisms with coupled loops.
#include "loopdyn/loops/aggregation.hpp"

#include <algorithm>
#include <set>

#include "loopdyn/mechanisms/generators.hpp"
#include "loopdyn/loops/loop_structure.hpp"
#include "test_support.hpp"

namespace loopdyn {
namespace {

std::set<std::string> names(const Model& m, const AggregatedBody& node) {
  std::set<std::string> out;
  for (int b : node.bodies) out.insert(m.body_name[b]);
  return out;
}

int lowest_common_ancestor(const Model& m, int a, int b) {
  while (a != b) (a > b ? a : b) = m.parent[a > b ? a : b];
  return a;
}

// The properties every aggregation must have, whatever the mechanism:
//  * every body in exactly one node, nodes listed parents first, bodies ascending;
//  * a node is closed under the tree inside it: each body's parent is in the node or is the
//    node's parent_body, which belongs to the parent node (or is ground);
//  * each loop joint sits in one node, which holds both of its sides except their common ancestor;
//  * each coupling's joints are all in its node;
//  * minimal: every body of an aggregated node lies on the tree path of one of its loop joints
//    (common ancestor excluded) or couplings (common ancestor included only if it is coupled);
//  * nv adds up the speeds of the node's bodies.
void expect_valid(const Model& m, const AggregatedTree& a) {
  ASSERT_EQ(static_cast<int>(a.node_of_body.size()), m.nbodies);
  std::vector<int> seen(m.nbodies, 0);
  for (std::size_t n = 0; n < a.nodes.size(); ++n) {
    const AggregatedBody& node = a.nodes[n];
    ASSERT_FALSE(node.bodies.empty());
    EXPECT_TRUE(std::is_sorted(node.bodies.begin(), node.bodies.end()));
    EXPECT_LT(node.parent, static_cast<int>(n));
    EXPECT_EQ(node.parent, node.parent_body < 0 ? -1 : a.node_of_body[node.parent_body]);
    int nv = 0;
    for (int b : node.bodies) {
      ++seen[b];
      EXPECT_EQ(a.node_of_body[b], static_cast<int>(n));
      const int p = m.parent[b];
      EXPECT_TRUE(p == node.parent_body || (p >= 0 && a.node_of_body[p] == static_cast<int>(n)))
          << m.body_name[b] << " hangs from outside its node";
      nv += m.nv_joint[b];
    }
    EXPECT_EQ(node.nv, nv);
    EXPECT_EQ(node.aggregated(), !node.loop_joints.empty() || !node.couplings.empty());
    for (int k : node.loop_joints) {
      const ModelJoint& lj = m.loop_joints[k];
      const int c = lowest_common_ancestor(m, lj.parent, lj.child);
      for (int side : {lj.parent, lj.child})
        if (side != c) {
          EXPECT_EQ(a.node_of_body[side], static_cast<int>(n)) << lj.name;
        }
    }
    for (int k : node.couplings)
      for (const ModelCoupling::Term& t : m.couplings[k].terms) EXPECT_EQ(a.node_of_body[t.joint], static_cast<int>(n));
    if (!node.aggregated()) {
      EXPECT_EQ(node.bodies.size(), 1u);
      continue;
    }
    std::set<int> needed;
    auto add_path = [&](int body, int top) {
      for (int i = body; i != top; i = m.parent[i]) needed.insert(i);
    };
    for (int k : node.loop_joints) {
      const ModelJoint& lj = m.loop_joints[k];
      const int c = lowest_common_ancestor(m, lj.parent, lj.child);
      add_path(lj.parent, c);
      add_path(lj.child, c);
    }
    for (int k : node.couplings) {
      const auto& terms = m.couplings[k].terms;
      int c = terms.front().joint;
      for (const auto& t : terms) c = lowest_common_ancestor(m, c, t.joint);
      for (const auto& t : terms) add_path(t.joint, t.joint == c ? m.parent[c] : c);
    }
    EXPECT_EQ(needed, std::set<int>(node.bodies.begin(), node.bodies.end())) << "node " << n;
  }
  for (int b = 0; b < m.nbodies; ++b) EXPECT_EQ(seen[b], 1) << m.body_name[b];
  int loops = 0;
  for (const AggregatedBody& node : a.nodes) loops += static_cast<int>(node.loop_joints.size());
  EXPECT_EQ(loops, static_cast<int>(m.loop_joints.size()));
}

TEST(AggregatedTree, TreeKeepsEverySingleBody) {
  const Model m = Model::build(test::random_tree(3, 9, 2));
  const AggregatedTree a = m.loops().aggregation;
  expect_valid(m, a);
  ASSERT_EQ(static_cast<int>(a.nodes.size()), m.nbodies);
  for (int b = 0; b < m.nbodies; ++b) {
    EXPECT_FALSE(a.nodes[b].aggregated());
    EXPECT_EQ(a.nodes[b].parent_body, m.parent[b]);
  }
  EXPECT_EQ(a.largest_nv(), 0);
}

// 002 Fig. 4: a cut-edge to ground aggregates every ancestor of the other body.
TEST(AggregatedTree, CutEdgeToGroundAggregatesTheWholeChain) {
  const Model m = test::load_model("fourbar_anderson");  // ground-crank-coupler-rocker, rocker cut to ground
  const AggregatedTree a = m.loops().aggregation;
  expect_valid(m, a);
  ASSERT_EQ(a.nodes.size(), 1u);
  EXPECT_EQ(names(m, a.nodes[0]), (std::set<std::string>{"crank", "coupler", "rocker"}));
  EXPECT_EQ(a.nodes[0].parent, -1);
  EXPECT_EQ(a.nodes[0].nv, 3);
}

// The parallelogram four-bar cut between coupler and rocker (cousins under ground), and a pendulum
// hanging from its coupler: the loop aggregates crank, coupler and rocker; the pendulum stays a
// single body whose parent node is the aggregated one.
TEST(AggregatedTree, BodiesOutsideTheLoopStaySingleAndHangFromTheAggregate) {
  Mechanism mech = test::parallelogram_four_bar(true);
  mech.add_body("bob", 1.0, Vec3(0, -0.5, 0), Mat3::Identity() * 0.01);
  mech.add_joint("bob_pin", JointType::revolute, mech.joints[1].child, "bob").axis = Vec3::UnitZ();
  const Model m = Model::build(mech);
  const AggregatedTree a = m.loops().aggregation;
  expect_valid(m, a);
  ASSERT_EQ(a.nodes.size(), 2u);
  EXPECT_EQ(a.nodes[0].bodies.size(), 3u);
  EXPECT_EQ(a.nodes[0].loop_joints, std::vector<int>{0});
  EXPECT_EQ(names(m, a.nodes[1]), std::set<std::string>{"bob"});
  EXPECT_EQ(a.nodes[1].parent, 0);
}

// benchmarks.md's planar ladder: every cell (lp_k, rung_k, rp_k) is one aggregated body hanging
// from the previous cell's rung (ground for k = 0), in both layouts and in the parents-first
// listing; the cost of embedding is then linear in L with 3-speed aggregated bodies.
TEST(AggregatedTree, PlanarLadderAggregatesEachCellOnItsOwn) {
  for (LadderLayout layout : {LadderLayout::serial, LadderLayout::comb, LadderLayout::comb_parents_first}) {
    for (int cells : {1, 2, 5, 16}) {
      const Model m = Model::build(ladder_mechanism(cells, layout));
      const AggregatedTree a = m.loops().aggregation;
      expect_valid(m, a);
      ASSERT_EQ(static_cast<int>(a.nodes.size()), cells) << cells;
      EXPECT_EQ(a.largest_nv(), 3);
      for (int k = 0; k < cells; ++k) {
        const std::string id = std::to_string(k);
        const int node = a.node_of_body[m.body_index("rung" + id)];
        std::string lp = "lp", rp = "rp", rung = "rung";
        EXPECT_EQ(names(m, a.nodes[node]), (std::set<std::string>{lp.append(id), rp.append(id), rung.append(id)}));
        EXPECT_EQ(a.nodes[node].loop_joints.size(), 1u);
        const int below = k == 0 ? -1 : a.node_of_body[m.body_index("rung" + std::to_string(k - 1))];
        EXPECT_EQ(a.nodes[node].parent, below) << "cell " << k;
      }
    }
  }
}

// A gear between two wheels on ground (002 §5.1): both axles in one aggregated body.
TEST(AggregatedTree, GearCouplesItsJointsIntoOneAggregate) {
  const Model m = test::load_model("geared_pair");
  const AggregatedTree a = m.loops().aggregation;
  expect_valid(m, a);
  ASSERT_EQ(a.nodes.size(), 1u);
  EXPECT_EQ(a.nodes[0].couplings, std::vector<int>{0});
  EXPECT_EQ(a.nodes[0].nv, 2);
}

// A gear between a joint and its parent's joint includes the parent (its own joint is coupled).
TEST(AggregatedTree, GearOnParentAndChildJointsIncludesTheParent) {
  Mechanism mech;
  const Mat3 I = Mat3::Identity() * 0.01;
  mech.add_body("a", 1.0, Vec3::Zero(), I);
  mech.add_body("b", 1.0, Vec3::Zero(), I);
  mech.add_body("c", 1.0, Vec3::Zero(), I);
  mech.add_joint("ja", JointType::revolute, "ground", "a");
  mech.add_joint("jb", JointType::revolute, "a", "b", Transform::translation(Vec3(1, 0, 0)));
  mech.add_joint("jc", JointType::revolute, "b", "c", Transform::translation(Vec3(1, 0, 0)));
  CouplingSpec gear;
  gear.name = "g";
  gear.terms = {{"jb", 1.0}, {"jc", 2.0}};
  mech.couplings.push_back(gear);
  const Model m = Model::build(mech);
  const AggregatedTree a = m.loops().aggregation;
  expect_valid(m, a);
  ASSERT_EQ(a.nodes.size(), 2u);
  EXPECT_EQ(names(m, a.nodes[0]), std::set<std::string>{"a"});
  EXPECT_EQ(names(m, a.nodes[1]), (std::set<std::string>{"b", "c"}));
  EXPECT_EQ(a.nodes[1].parent, 0);
}

// Loops whose sub-graphs share bodies merge into one aggregated body (the random two-loop case of
// the trajectory tests shares three bodies); random mechanisms keep every property.
TEST(AggregatedTree, CoupledLoopsMergeAndRandomMechanismsStayValid) {
  const test::ClosedCase coupled = test::closed_loops(7, 7, 2, 0);
  const Model m = Model::build(coupled.mechanism);
  const AggregatedTree a = m.loops().aggregation;
  expect_valid(m, a);
  const int node = a.node_of_body[m.loop_joints[0].child >= 0 ? m.loop_joints[0].child : m.loop_joints[0].parent];
  EXPECT_EQ(a.nodes[node].loop_joints.size(), 2u);
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const Model r = Model::build(test::closed_loops(seed, 12, 1 + static_cast<int>(seed % 4), static_cast<int>(seed)).mechanism);
    expect_valid(r, r.loops().aggregation);
  }
}

}  // namespace
}  // namespace loopdyn
