// ABA, RNEA and CRBA checked against each other on random trees with every joint type.
#include <dlfcn.h>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <atomic>

#include "loopdyn/core/tree_dynamics.hpp"
#include "test_support.hpp"

namespace loopdyn {
namespace {

using test::near;

struct Case {
  Model model;
  VecX q, u, tau;
  Mat6X fext;
};

Case random_case(std::uint64_t seed, int nbodies) {
  Case c{Model::build(test::random_tree(seed, nbodies, static_cast<int>(seed % 8))), {}, {}, {}, {}};
  std::mt19937_64 rng(seed * 7 + 1);
  c.q = test::random_q(c.model, rng);
  c.u = test::random_vector(c.model.nv, rng, 2.0);
  c.tau = test::random_vector(c.model.nv, rng, 5.0);
  c.fext = Mat6X(6, c.model.nbodies);
  for (int i = 0; i < c.model.nbodies; ++i) c.fext.col(i) = test::random_vector(6, rng, 3.0);
  return c;
}

// Masses ~1 kg, lengths ~0.5 m: M is well conditioned (cond < 1e4 on these seeds), so two
// independent O(n) and O(n³) computations agree to ~1e-13 relative; 1e-10 leaves margin.
constexpr double tol = 1e-10;

TEST(TreeDynamics, AbaEqualsCrbaAndRneaSolve) {
  for (std::uint64_t seed = 1; seed <= 24; ++seed) {
    Case c = random_case(seed, 12);
    const Model& m = c.model;
    AbaData aba_data(m);
    RneaData rnea_data(m);
    CrbaData crba_data(m);
    VecX udot(m.nv), bias(m.nv);
    MatX M(m.nv, m.nv);
    aba(m, aba_data, c.q, c.u, c.tau, &c.fext, udot);
    rnea(m, rnea_data, c.q, c.u, VecX::Zero(m.nv), &c.fext, bias);  // C(q, u) − Jᵀ fext, gravity included
    crba(m, crba_data, c.q, M);
    const VecX reference = M.llt().solve(c.tau - bias);
    EXPECT_TRUE(near(udot, reference, tol)) << "seed " << seed;
  }
}

TEST(TreeDynamics, RneaInvertsAba) {
  for (std::uint64_t seed = 30; seed < 50; ++seed) {
    Case c = random_case(seed, 10);
    AbaData aba_data(c.model);
    RneaData rnea_data(c.model);
    VecX udot(c.model.nv), tau(c.model.nv);
    aba(c.model, aba_data, c.q, c.u, c.tau, &c.fext, udot);
    rnea(c.model, rnea_data, c.q, c.u, udot, &c.fext, tau);
    EXPECT_TRUE(near(tau, c.tau, tol)) << "seed " << seed;
  }
}

TEST(TreeDynamics, CrbaIsSymmetricPositiveDefiniteAndMatchesRneaColumns) {
  for (std::uint64_t seed = 60; seed < 70; ++seed) {
    Case c = random_case(seed, 9);
    const Model& m = c.model;
    CrbaData crba_data(m);
    RneaData rnea_data(m);
    MatX M(m.nv, m.nv);
    crba(m, crba_data, c.q, M);
    EXPECT_TRUE(near(M, M.transpose(), 1e-14)) << "seed " << seed;
    const Eigen::SelfAdjointEigenSolver<MatX> eig(M);
    EXPECT_GT(eig.eigenvalues().minCoeff(), 0.0) << "seed " << seed;
    // Column k of M = RNEA(q, 0, e_k) − RNEA(q, 0, 0): velocity terms vanish, gravity cancels.
    VecX g(m.nv), col(m.nv);
    rnea(m, rnea_data, c.q, VecX::Zero(m.nv), VecX::Zero(m.nv), nullptr, g);
    for (int k = 0; k < m.nv; ++k) {
      rnea(m, rnea_data, c.q, VecX::Zero(m.nv), VecX::Unit(m.nv, k), nullptr, col);
      EXPECT_TRUE(near(col - g, M.col(k), tol)) << "seed " << seed << " column " << k;
    }
  }
}

TEST(TreeDynamics, KineticEnergyFromBodiesEqualsQuadraticForm) {
  Case c = random_case(80, 14);
  CrbaData crba_data(c.model);
  MatX M(c.model.nv, c.model.nv);
  crba(c.model, crba_data, c.q, M);
  KinematicsData kin(c.model);
  update_positions(c.model, kin, c.q);
  update_velocities(c.model, kin, c.q, c.u);
  double T = 0.0;
  for (int i = 0; i < c.model.nbodies; ++i) T += 0.5 * kin.v[i].dot(c.model.inertia[i] * kin.v[i]);
  EXPECT_NEAR(T, 0.5 * c.u.dot(M * c.u), 1e-12 * T);
}

// The factor/solve split: with Bias::no, aba_solve maps joint forces linearly, u̇ = M⁻¹ τ, and a
// body force f on body b maps to M⁻¹ Jᵀ f.
TEST(TreeDynamics, FactorSolveSplitIsTheInverseMassMatrix) {
  Case c = random_case(90, 11);
  const Model& m = c.model;
  AbaData d(m);
  CrbaData crba_data(m);
  MatX M(m.nv, m.nv);
  crba(m, crba_data, c.q, M);
  aba_factor(m, d, c.q);
  VecX udot(m.nv);
  aba_solve(m, d, c.tau, nullptr, Bias::no, udot);
  EXPECT_TRUE(near(udot, M.llt().solve(c.tau), tol));
  aba_solve(m, d, VecX::Zero(m.nv), &c.fext, Bias::no, udot);
  VecX Jtf = VecX::Zero(m.nv);
  Mat6X J(6, m.nv);
  for (int b = 0; b < m.nbodies; ++b) {
    frame_jacobian(m, d.kin, b, Transform{}, J);  // body frame: Jᵀ f with f in body axes
    Jtf += J.transpose() * c.fext.col(b);
  }
  EXPECT_TRUE(near(udot, M.llt().solve(Jtf), tol));
}

// A point mass at a ball joint's centre: its mass matrix is singular. A tree is refused at build
// (Model::build checks the articulated-body factor at q0); with a loop elsewhere the constraints
// might hold such a body, so the build leaves it to the methods and the sweep names the joint.
TEST(TreeDynamics, SingularArticulatedInertiaIsReportedWithTheJointName) {
  Mechanism mech;
  mech.add_body("point", 1.0, Vec3::Zero(), Mat3::Zero());  // point mass at the joint centre
  mech.add_joint("ball", JointType::spherical, "ground", "point");
  try {
    (void)Model::build(mech);
    FAIL() << "expected an error";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("joint 'ball'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no method can integrate it"), std::string::npos) << e.what();
  }
  mech.add_body("arm", 1.0, Vec3(0.5, 0, 0), Mat3(Vec3(0.01, 0.1, 0.1).asDiagonal()));
  mech.add_joint("pivot", JointType::revolute, "ground", "arm");
  mech.add_joint("weld", JointType::revolute, "arm", "ground").cut = true;  // a loop: built
  const Model m = Model::build(mech);
  AbaData d(m);
  try {
    aba_factor(m, d, m.q0);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("'ball'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace loopdyn
