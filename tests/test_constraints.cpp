// Loop-closure constraints: Φ, G and γ against each other by finite differences, and against the
// joints' own motion (a loop joint that duplicates a tree joint is satisfied identically).
#include <Eigen/Eigenvalues>
#include <algorithm>

#include "loopdyn/loops/loop_structure.hpp"
#include "loopdyn/loops/row_gram.hpp"
#include "loopdyn/core/tree_dynamics.hpp"
#include "loopdyn/mechanisms/generators.hpp"
#include "loopdyn/mechanisms/square_nets.hpp"
#include "test_support.hpp"

namespace loopdyn {
namespace {

using test::near;

// Random tree plus one loop-closing joint of every type between random bodies (or ground), with
// random frames: the loops are not closed, which the derivative identities do not need.
Mechanism random_loops(std::uint64_t seed) {
  Mechanism mech = test::random_tree(seed, 8, static_cast<int>(seed % 8));
  std::mt19937_64 rng(seed + 1000);
  for (int t = 0; t < 8; ++t) {
    const int a = std::uniform_int_distribution<int>(-1, 7)(rng);
    int b = std::uniform_int_distribution<int>(0, 7)(rng);
    if (b == a) b = (b + 1) % 8;
    JointSpec& j = mech.add_joint(test::indexed("loop", t), static_cast<JointType>(t),
                                  a < 0 ? std::string("ground") : test::indexed("b", a), test::indexed("b", b),
                                  Transform{test::random_rotation(rng), test::random_vec(rng, 0.3)},
                                  Transform{test::random_rotation(rng), test::random_vec(rng, 0.3)});
    j.cut = true;
    j.axis = test::random_vec(rng, 1.0).normalized();
    j.axis2 = j.axis.unitOrthogonal();
  }
  return mech;
}

struct Eval {
  const Model& m;
  Constraints cons;
  ConstraintData d;
  KinematicsData kin;
  Eval(const Model& model, Constraints c) : m(model), cons(std::move(c)), d(model), kin(model) {}
  void at(const VecX& q, const VecX& u) {
    update_positions(m, kin, q);
    update_velocities(m, kin, q, u);
  }
  VecX phi(const VecX& q) {
    at(q, VecX::Zero(m.nv));
    VecX out(cons.rows());
    constraint_position(m, cons, kin, 0.0, d, out);
    return out;
  }
  MatX G(const VecX& q) {
    at(q, VecX::Zero(m.nv));
    MatX out(cons.rows(), m.nv);
    constraint_jacobian(m, cons, kin, d, out);
    return out;
  }
  VecX gamma(const VecX& q, const VecX& u) {
    at(q, u);
    VecX out(cons.rows());
    constraint_bias(m, cons, kin, 0.0, d, out);
    return out;
  }
};

// Central differences, h = 1e-6: truncation O(h²) ≈ 1e-12, round-off ≈ 1e-16/h = 1e-10 on O(1)
// values; 1e-7 leaves margin.
constexpr double h = 1e-6, fd_tol = 1e-7;

TEST(Constraints, JacobianIsTheDerivativeOfThePositionError) {
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    const Model m = Model::build(random_loops(seed));
    Eval e(m, m.loops().unreduced);
    ASSERT_EQ(e.cons.rows(), 5 + 5 + 4 + 4 + 3 + 3 + 0 + 6);
    std::mt19937_64 rng(seed);
    const VecX q = test::random_q(m, rng);
    const MatX G = e.G(q);
    for (int k = 0; k < m.nv; ++k) {
      const VecX dir = VecX::Unit(m.nv, k);
      const VecX fd = (e.phi(test::moved(m, q, dir, h)) - e.phi(test::moved(m, q, dir, -h))) / (2 * h);
      EXPECT_TRUE(near(G.col(k), fd, fd_tol)) << "seed " << seed << " speed " << k;
    }
  }
}

// Φ̈ = G u̇ − γ along q̇ = q̇(q, u), u̇: d/dt (G u) at u̇ = 0 equals −γ.
TEST(Constraints, BiasIsTheVelocityProductOfTheSecondDerivative) {
  for (std::uint64_t seed = 20; seed < 32; ++seed) {
    const Model m = Model::build(random_loops(seed));
    Eval e(m, m.loops().unreduced);
    std::mt19937_64 rng(seed);
    const VecX q = test::random_q(m, rng), u = test::random_vector(m.nv, rng);
    const VecX fd = (e.G(test::moved(m, q, u, h)) * u - e.G(test::moved(m, q, u, -h)) * u) / (2 * h);
    EXPECT_TRUE(near(e.gamma(q, u), -fd, fd_tol)) << "seed " << seed;
  }
}

// constraint_velocity reads G u from the two joint frames of each row: equal to the dense G times u
// (both exact; 1e-12 covers the round-off of O(1) products summed over a few bodies).
TEST(Constraints, VelocityFromTheJointFramesIsGTimesU) {
  for (std::uint64_t seed = 40; seed < 52; ++seed) {
    const Model m = Model::build(random_loops(seed));
    Eval e(m, m.loops().unreduced);
    std::mt19937_64 rng(seed);
    const VecX q = test::random_q(m, rng), u = test::random_vector(m.nv, rng);
    const MatX G = e.G(q);
    e.at(q, u);
    VecX phidot(e.cons.rows());
    constraint_velocity(m, e.cons, e.kin, e.d, u, phidot);
    EXPECT_TRUE(near(phidot, G * u, 1e-12)) << "seed " << seed;
  }
}

// constraint_forces applies −Gᵀλ as body wrenches and coupling joint forces: the generalized force
// of those wrenches (Jᵀ f, by the Newton-Euler pass at rest without gravity: τ = −Jᵀ f) plus the
// joint forces equals −Gᵀλ (1e-12 as above). The geared chain covers the coupling rows.
TEST(Constraints, ForcesOnTheBodiesAreGTransposeLambda) {
  std::vector<Model> models;
  for (std::uint64_t seed = 60; seed < 68; ++seed) models.push_back(Model::build(random_loops(seed)));
  models.push_back(test::load_model("geared_chain"));
  std::uint64_t seed = 0;
  for (Model& m : models) {
    m.gravity = Vec3::Zero();
    Eval e(m, m.loops().unreduced);
    std::mt19937_64 rng(++seed);
    const VecX q = test::random_q(m, rng), zero = VecX::Zero(m.nv);
    const VecX lambda = test::random_vector(e.cons.rows(), rng);
    const MatX G = e.G(q);
    Mat6X loop_wrench(6, m.loop_joints.size()), fext = Mat6X::Zero(6, m.nbodies);
    VecX tau = VecX::Zero(m.nv), inverse(m.nv);
    constraint_forces(m, e.cons, e.kin, e.d, lambda, loop_wrench, fext, &tau);
    RneaData rnea_data(m);
    rnea(m, rnea_data, q, zero, zero, &fext, inverse);
    EXPECT_TRUE(near(tau - inverse, -G.transpose() * lambda, 1e-12)) << m.name;
  }
}

// The bodies on a loop joint's tree path, below the common ancestor of its two bodies (ascending),
// from ancestor sets: independent of the library's own walk.
std::vector<int> path_of(const Model& m, const ModelJoint& lj) {
  const auto ancestors = [&](int body) {
    std::vector<int> out;
    for (; body >= 0; body = m.parent[body]) out.push_back(body);
    return out;
  };
  const std::vector<int> a = ancestors(lj.parent), b = ancestors(lj.child);
  std::vector<int> path;
  for (int body : a)
    if (std::find(b.begin(), b.end(), body) == b.end()) path.push_back(body);
  for (int body : b)
    if (std::find(a.begin(), a.end(), body) == a.end()) path.push_back(body);
  std::sort(path.begin(), path.end());
  return path;
}

// A block's Φ and G (block_position_jacobian, which forms each path speed's world column once for
// all rows) are the whole model's rows and columns (constraint_jacobian, checked by finite
// differences above): the whole block at once, and each loop joint's rows on its path's bodies
// alone, whose G has no other nonzero column. Both sides evaluate each entry with the same
// arithmetic (loop_row_entry), from a column formed once or per row: equal up to the compiler's
// contraction of products, far below 1e-13 on O(1) entries. The geared chain adds coupling rows.
TEST(Constraints, BlockJacobianIsTheWholeJacobiansRowsAndColumns) {
  std::vector<Model> models;
  for (std::uint64_t seed = 70; seed < 78; ++seed) models.push_back(Model::build(random_loops(seed)));
  models.push_back(test::load_model("geared_chain"));
  std::uint64_t seed = 0;
  for (const Model& m : models) {
    Eval e(m, m.loops().unreduced);
    std::mt19937_64 rng(++seed);
    const VecX q = test::random_q(m, rng);
    const VecX phi = e.phi(q);
    const MatX G = e.G(q);
    const ConstraintBlock whole = ConstraintBlock::whole(m, e.cons);
    VecX block_phi(whole.rows.size());
    MatX block_G(whole.rows.size(), whole.columns);
    block_position_jacobian(m, e.cons, whole, e.kin, 0.0, e.d, block_phi, block_G);
    EXPECT_TRUE(near(block_phi, phi, 1e-13)) << m.name;
    EXPECT_TRUE(near(block_G, G, 1e-13)) << m.name;
    for (int k = 0; k < static_cast<int>(m.loop_joints.size()); ++k) {
      const std::vector<int> path = path_of(m, m.loop_joints[k]);
      if (path.empty()) continue;
      const ConstraintBlock block = ConstraintBlock::of(m, e.cons, path, {k}, {});
      VecX loop_phi(block.rows.size());
      MatX loop_G(block.rows.size(), block.columns);
      block_position_jacobian(m, e.cons, block, e.kin, 0.0, e.d, loop_phi, loop_G);
      const std::vector<int> speeds = block.speeds(m);
      for (std::size_t r = 0; r < block.rows.size(); ++r) {
        EXPECT_NEAR(loop_phi(r), phi(block.rows[r]), 1e-13) << m.name << " loop " << k;
        VecX row = G.row(block.rows[r]);
        for (std::size_t c = 0; c < speeds.size(); ++c) {
          EXPECT_NEAR(loop_G(r, c), row(speeds[c]), 1e-13) << m.name << " loop " << k;
          row(speeds[c]) = 0.0;
        }
        EXPECT_EQ(row.cwiseAbs().maxCoeff(), 0.0) << m.name << " loop " << k << ": G off the path";
      }
      // A block without one of the path's bodies cannot hold the loop's rows.
      if (!block.rows.empty()) {
        std::vector<int> short_path(path.begin() + 1, path.end());
        EXPECT_THROW(ConstraintBlock::of(m, e.cons, short_path, {k}, {}), std::logic_error) << m.name;
      }
    }
  }
}

// A loop joint identical to a tree joint allows exactly the motion the tree joint makes: Φ = 0,
// G u = 0 and γ = 0 at every q and u, for every joint type.
TEST(Constraints, DuplicateOfATreeJointIsSatisfiedIdentically) {
  for (std::uint64_t seed = 40; seed < 48; ++seed) {
    Mechanism mech = test::random_tree(seed, 8, static_cast<int>(seed % 8));
    const std::size_t tree_joints = mech.joints.size();
    for (std::size_t k = 0; k < tree_joints; ++k) {
      JointSpec copy = mech.joints[k];
      copy.name += "_copy";
      copy.cut = true;
      copy.q.clear();
      copy.u.clear();
      mech.joints.push_back(copy);
    }
    const Model m = Model::build(mech);
    ASSERT_EQ(m.loop_joints.size(), tree_joints);
    Eval e(m, m.loops().unreduced);
    std::mt19937_64 rng(seed);
    const VecX q = test::random_q(m, rng), u = test::random_vector(m.nv, rng);
    EXPECT_TRUE(near(e.phi(q), VecX::Zero(e.cons.rows()), 1e-14)) << "seed " << seed;
    EXPECT_TRUE(near(e.G(q) * u, VecX::Zero(e.cons.rows()), 1e-13)) << "seed " << seed;
    EXPECT_TRUE(near(e.gamma(q, u), VecX::Zero(e.cons.rows()), 1e-13)) << "seed " << seed;
    // Every row is dependent (G ≡ 0): all are structurally redundant.
    EXPECT_EQ(m.loops().constraints.rows(), 0) << "seed " << seed;
  }
}

TEST(Constraints, DroppingRedundantRowsKeepsTheRank) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const Model m = Model::build(random_loops(seed));
    const Constraints& cons = m.loops().constraints;
    std::mt19937_64 rng(seed);
    const VecX q = test::random_q(m, rng);
    const int full = constraint_rank(m, m.loops().unreduced, q).rank;
    EXPECT_EQ(constraint_rank(m, cons, q).rank, full) << "seed " << seed;
    EXPECT_EQ(cons.rows(), full) << "seed " << seed;  // kept rows are independent
    EXPECT_EQ(cons.rows() + static_cast<int>(cons.dropped().size()), 30);
  }
}

// RowChoice's exchange (row_choice.hpp): a loop's kept rows b and c replace a and b; a, which
// leaves, takes c's place among the dropped rows and the alternates, where b never was.
TEST(Constraints, ExchangeKeepsEveryRowOnceAmongKeptAndDropped) {
  const auto row = [](const char* label) {
    ConstraintRow r;
    r.label = label;
    return r;
  };
  Constraints cons({row("x"), row("a"), row("b")}, {row("c"), row("d"), row("e")}, {row("c"), row("d")});
  cons.exchange({1, 2}, {row("b"), row("c")});
  const auto labels = [](const std::vector<ConstraintRow>& rows) {
    std::string s;
    for (const ConstraintRow& r : rows) s += r.label;
    return s;
  };
  EXPECT_EQ(labels(cons.kept()), "xbc");
  EXPECT_EQ(labels(cons.dropped()), "ade");
  EXPECT_EQ(labels(cons.alternates()), "ad");
}

// The speeds a row acts on, from the loops' structure alone (row_gram.hpp): G is zero elsewhere.
// Entries outside the pattern are cancellations of the joints above the loop's base, which move
// both frames alike: at most round-off (1e-13 of the largest entry, on coordinates of order 1).
TEST(RowSpeeds, HoldEveryNonZeroOfG) {
  std::vector<std::pair<Model, VecX>> cases;
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    Model m = Model::build(random_loops(seed));
    std::mt19937_64 rng(seed);
    VecX q = test::random_q(m, rng);
    cases.emplace_back(std::move(m), std::move(q));
  }
  for (const char* file : {"geared_chain", "double_wishbone", "parallel_3rrr"}) {
    Model m = test::load_model(file);
    VecX q = m.q0;
    cases.emplace_back(std::move(m), std::move(q));
  }
  for (Mechanism mech : {spatial_ladder_mechanism(4), ladder_mechanism(4, LadderLayout::serial), square_net_mechanism(3, 3, 0.3)}) {
    Model m = Model::build(mech);
    VecX q = m.q0;
    cases.emplace_back(std::move(m), std::move(q));
  }
  for (const auto& [m, q] : cases) {
    SCOPED_TRACE(m.name);
    Eval e(m, Constraints(Constraints::all_rows(m)));
    const MatX G = e.G(q);
    const std::vector<std::vector<int>> speeds = row_speeds(m, e.cons);
    ASSERT_EQ(speeds.size(), static_cast<std::size_t>(G.rows()));
    const double largest = G.cwiseAbs().maxCoeff();
    for (Eigen::Index r = 0; r < G.rows(); ++r)
      for (Eigen::Index k = 0; k < G.cols(); ++k)
        if (std::find(speeds[r].begin(), speeds[r].end(), k) == speeds[r].end()) {
          EXPECT_LE(std::abs(G(r, k)), 1e-13 * largest) << "row " << r << " (" << e.cons.kept()[r].label << "), speed " << k;
        }
  }
}

// RowGram against a dense eigenvalue solve of G Gᵀ: its test of λ_min is exact (positive
// definiteness of A − τ I on either side of λ_min within 1 %), its bound of λ_max holds, and its
// estimates approach both from the side they promise (Rayleigh quotients). After 200 iterations
// they are within 1e-3 (the spatial ladder's largest eigenvalues are 2e-4 apart, relatively: power
// iteration converges slowly there; the estimates only serve the guard's extrapolation).
TEST(RowGram, DecidesTheSmallestEigenvalueAndBoundsTheLargest) {
  for (Mechanism mech : {spatial_ladder_mechanism(16), square_net_mechanism(4, 4, 0.3), ladder_mechanism(8, LadderLayout::comb)}) {
    const Model m = Model::build(mech);
    SCOPED_TRACE(m.name);
    const Constraints& cons = m.loops().constraints;
    Eval e(m, cons);
    const MatX G = e.G(m.q0);
    const Eigen::SelfAdjointEigenSolver<MatX> dense(G * G.transpose());
    const double smallest = dense.eigenvalues()(0), largest = dense.eigenvalues()(cons.rows() - 1);
    ASSERT_GT(smallest, 0.0);
    RowGram gram(m, cons);
    if (m.name.find("ladder") != std::string::npos) {
      EXPECT_LT(gram.fill(), 0.25);  // 0.13 and 0.06
    }
    gram.assemble(G);
    EXPECT_GE(gram.norm_bound(), largest * (1 - 1e-12));
    EXPECT_FALSE(gram.smallest_above(1.01 * smallest));
    EXPECT_TRUE(gram.smallest_above(0.99 * smallest));
    const double few = gram.smallest_estimate(2);
    EXPECT_GE(few, smallest * (1 - 1e-12));
    EXPECT_NEAR(gram.smallest_estimate(200), smallest, 1e-3 * smallest);
    EXPECT_LE(gram.largest_estimate(2), largest * (1 + 1e-12));
    EXPECT_NEAR(gram.largest_estimate(200), largest, 1e-3 * largest);
  }
}

}  // namespace
}  // namespace loopdyn
