// Mass-orthogonal post-step projection (Projector) and the initial-state check (check_consistent):
// residuals after projection, the M-metric minimality of the corrections against an independent
// null-space solve, rank-deficient and redundant rows, failures and their messages, and the
// Simulator's drift with and without projection.
#include "loopdyn/loops/loop_structure.hpp"
#include "loopdyn/loops/projection.hpp"

#include <Eigen/SVD>

#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>

#include "loopdyn/loops/assembly.hpp"
#include "loopdyn/formulations/formulation.hpp"
#include "loopdyn/io/model_file.hpp"
#include "loopdyn/run/simulator.hpp"
#include "loopdyn/formulations/registry.hpp"
#include "test_support.hpp"

namespace loopdyn {
namespace {

using test::near;
using test::null_space;

double inf_norm(const VecX& x) { return x.size() ? x.cwiseAbs().maxCoeff() : 0.0; }

MatX mass_matrix(const Model& m, const VecX& q) {
  CrbaData d(m);
  MatX M(m.nv, m.nv);
  crba(m, d, q, M);
  return M;
}

// The M-orthogonal projection of u onto ker G, computed independently of the Projector in the
// null-space basis: u* = N (Nᵀ M N)⁻¹ Nᵀ M u is the minimizer of ½(u* − u)ᵀM(u* − u) on ker G.
VecX reference_velocity_projection(const Model& m, const VecX& q, const VecX& u) {
  const auto [phi, G, gamma] = test::constraint_values(m, q, u);
  const MatX N = null_space(G), M = mass_matrix(m, q);
  return N * (N.transpose() * M * N).llt().solve(N.transpose() * M * u);
}

// ‖G u‖∞ bound of the projection: velocity_tolerance · max(1, max|G| ‖u‖∞) (projection.hpp).
double velocity_bound(const MatX& G, const VecX& u, double tolerance) {
  return tolerance * std::max(1.0, G.cwiseAbs().maxCoeff() * inf_norm(u));
}

using State = test::LoopState;
using test::load_model;

std::vector<State> closed_states() {
  std::vector<State> out;
  out.push_back(test::assembled_state("fourbar_spatial_park", 1));
  out.push_back(test::assembled_state("fourbar_anderson", 2));
  out.push_back(test::assembled_state("doubleloop_malczyk", 3));
  for (std::uint64_t seed = 1; seed <= 6; ++seed) out.push_back(test::random_loop_state(seed, 2));
  return out;
}

// ---------------------------------------------------------------------------------------------
// 1. Residuals after a projection

TEST(Projection, PerturbedStatesEndOnTheManifoldWithinTheTolerances) {
  for (const State& s : closed_states()) {
    const Model& m = s.model;
    std::mt19937_64 rng(17);
    VecX q = s.q, u = s.u;
    integrate_q(m, q, test::random_vector(m.nv, rng, 1e-3));
    u += test::random_vector(m.nv, rng, 1e-2);
    const auto before = test::constraint_values(m, q, u);
    // The perturbation really leaves the manifold (else the test would prove nothing).
    ASSERT_GT(inf_norm(before.phi), 1e-6) << s.name;
    ASSERT_GT(inf_norm(before.G * u), 1e-5) << s.name;

    const ProjectionSettings settings;
    Projector p(m, m.loops().constraints, settings);
    p.project(0.5, q, u);
    const auto after = test::constraint_values(m, q, u);
    EXPECT_TRUE(q.allFinite() && u.allFinite()) << s.name;
    // The Projector's own stopping criteria, evaluated here by an independent Φ and G.
    EXPECT_LE(inf_norm(after.phi), settings.position_tolerance) << s.name;
    EXPECT_LE(inf_norm(after.G * u), velocity_bound(after.G, u, settings.velocity_tolerance)) << s.name;
    // Newton from |Φ| ~ 1e-3 converges quadratically (1e-3 → 1e-6 → 1e-12): 5 iterations leave
    // room for the O(1) constants of a strongly curved mechanism, a linear method would need ~10.
    EXPECT_LE(p.stats().position_iterations, 5) << s.name;
    EXPECT_EQ(p.stats().calls, 1);
    EXPECT_EQ(p.stats().position_projections, 1) << s.name;
    EXPECT_EQ(p.stats().velocity_projections, 1) << s.name;
    EXPECT_LE(p.stats().max_position_residual, settings.position_tolerance) << s.name;
    EXPECT_NEAR(p.stats().max_velocity_residual, inf_norm(after.G * u), 1e-15) << s.name;  // same G u, round-off
    // The position correction is of the size of the perturbation (1e-3 per speed): not a jump to
    // another branch of the manifold.
    EXPECT_LT(p.stats().max_position_correction, 1e-2) << s.name;
    EXPECT_GT(p.stats().max_position_correction, 1e-6) << s.name;
  }
}

// ---------------------------------------------------------------------------------------------
// 2. Mass-orthogonality and minimality

TEST(Projection, VelocityCorrectionIsTheMassOrthogonalProjectionOntoKerG) {
  for (const State& s : closed_states()) {
    const Model& m = s.model;
    std::mt19937_64 rng(23);
    const VecX u0 = s.u + test::random_vector(m.nv, rng, 0.5);
    VecX u = u0;
    Projector p(m, m.loops().constraints);
    p.project_velocities(0.0, s.q, u);
    const auto [phi, G, gamma] = test::constraint_values(m, s.q, u);
    const MatX M = mass_matrix(m, s.q), N = null_space(G);
    const VecX du = u - u0;
    // Δu = M⁻¹Gᵀμ ⇔ M Δu ⟂ ker G. Both sides come from Cholesky and symmetric eigen solves of
    // matrices with condition < 1e8 here: 1e-9 relative to ‖M Δu‖ is round-off with margin.
    EXPECT_LE(inf_norm(N.transpose() * M * du), 1e-9 * inf_norm(M * du)) << s.name;
    // Same result as the independent null-space formula (1e-9: two factorizations' round-off).
    EXPECT_TRUE(near(u, reference_velocity_projection(m, s.q, u0), 1e-9)) << s.name;
    // Kinetic energy: T(u0) = T(u) + ½ΔuᵀMΔu (Pythagoras in the M metric), so it never increases.
    const double T0 = 0.5 * u0.dot(M * u0), T1 = 0.5 * u.dot(M * u), dT = 0.5 * du.dot(M * du);
    EXPECT_LE(T1, T0) << s.name;
    EXPECT_NEAR(T0 - T1, dT, 1e-10 * T0) << s.name;  // round-off of three quadratic forms
    EXPECT_GT(dT, 0.0) << s.name;
  }
}

// Minimality of the position correction: for coordinates with q̇ = u (revolute, universal) the step
// Δq is the speed-space correction; it must be M⁻¹Gᵀμ to first order (M Δq ⟂ ker G), not the
// Euclidean-shortest step G⁺Φ.
TEST(Projection, PositionCorrectionIsMassOrthogonalToFirstOrder) {
  for (const char* file : {"fourbar_spatial_park", "fourbar_anderson"}) {
    const State s = test::assembled_state(file, 5);
    const Model& m = s.model;
    ASSERT_EQ(m.nq, m.nv);  // additive coordinates only: Δq is a speed-space vector
    std::mt19937_64 rng(29);
    VecX q = s.q;
    q += test::random_vector(m.nv, rng, 1e-5);
    const VecX q_before = q;
    const auto before = test::constraint_values(m, q_before, s.u);
    const MatX M = mass_matrix(m, q_before), N = null_space(before.G);
    Projector p(m, m.loops().constraints);
    EXPECT_GE(p.project_positions(0.0, q), 1);
    const VecX dq = q - q_before;
    // The first Newton step is exactly M⁻¹G(q_before)ᵀμ; the later ones are O(δ²) = 1e-10 against
    // ‖Δq‖ ~ 1e-5, a relative 1e-5. 1e-3 leaves margin and still fails a wrong metric (below).
    EXPECT_LE(inf_norm(N.transpose() * M * dq), 1e-3 * inf_norm(M * dq)) << file;
    // G Δq = −Φ to first order (O(δ²) relative, as above).
    EXPECT_LE(inf_norm(before.G * dq + before.phi), 1e-3 * inf_norm(before.phi)) << file;
    // The check can fail: the Euclidean-shortest step violates it by O(1).
    const VecX euclid = -before.G.completeOrthogonalDecomposition().solve(before.phi);
    EXPECT_GT(inf_norm(N.transpose() * M * euclid), 1e-2 * inf_norm(M * euclid)) << file;
  }
}

// Linear constraint, closed form: the geared pair (q2 = −2 q1, wheels with I1 = 0.01 and I2 =
// 0.000625 kg m² about their axles, mass centres on the axles, so M = diag(I1, I2)). With the
// violation e = −2 q1 − q2 and g = (−2, −1): Δq = −M⁻¹gᵀ e / (g M⁻¹gᵀ) = (200, 1600) e / 2000 =
// (0.1 e, 0.8 e): the light wheel takes 8/10 of the correction. One Newton step is exact.
TEST(Projection, GearCouplingIsProjectedWithTheHandComputedMassWeights) {
  const Model m = load_model("geared_pair");
  const int w1 = m.joint_index("wheel1_axle"), w2 = m.joint_index("wheel2_axle");
  VecX q = m.q0, u = m.u0;
  const double e = 0.03;
  q(m.q_index[w2]) -= e;  // −2 q1 − q2 = e
  u(m.v_index[w2]) += 0.4;  // −2 u1 − u2 = −0.4
  const VecX q_before = q, u_before = u;
  Projector p(m, m.loops().constraints);
  p.project(0.0, q, u);
  // A few flops on O(1) values: 1e-14.
  EXPECT_NEAR(q(m.q_index[w1]) - q_before(m.q_index[w1]), 0.1 * e, 1e-14);
  EXPECT_NEAR(q(m.q_index[w2]) - q_before(m.q_index[w2]), 0.8 * e, 1e-14);
  EXPECT_NEAR(u(m.v_index[w1]) - u_before(m.v_index[w1]), 0.1 * -0.4, 1e-14);
  EXPECT_NEAR(u(m.v_index[w2]) - u_before(m.v_index[w2]), 0.8 * -0.4, 1e-14);
  EXPECT_EQ(p.stats().position_iterations, 1);  // linear constraint: Newton is exact in one step
}

TEST(Projection, StateOnTheManifoldIsLeftUnchanged) {
  for (const State& s : closed_states()) {
    VecX q = s.q, u = s.u;
    Projector p(s.model, s.model.loops().constraints);
    p.project(1.0, q, u);
    // Exactly unchanged: no correction is computed when the residuals are within the tolerances.
    EXPECT_EQ(q, s.q) << s.name;
    EXPECT_EQ(u, s.u) << s.name;
    const ProjectionStats& st = p.stats();
    EXPECT_EQ(st.calls, 1);
    EXPECT_EQ(st.position_projections, 0) << s.name;
    EXPECT_EQ(st.position_iterations, 0) << s.name;
    EXPECT_EQ(st.velocity_projections, 0) << s.name;
    EXPECT_EQ(st.max_position_correction, 0.0) << s.name;
    EXPECT_EQ(st.max_velocity_correction, 0.0) << s.name;
  }
}

// ---------------------------------------------------------------------------------------------
// 3. Rank deficiency: singular configurations and redundant rows

TEST(Projection, SingularDeadCentreGivesFiniteMinimumNormCorrections) {
  // fourbar_park_singular (rhombus, all links 2 m) with every link on the x axis: closed, and the
  // two kept rows of G have rank 1 there.
  const Model m = load_model("fourbar_park_singular");
  const VecX q_dead = VecX::Zero(m.nq);
  const VecX u0 = (VecX(3) << 1.0, 0.3, -0.5).finished();
  const auto dead = test::constraint_values(m, q_dead, u0);
  ASSERT_LE(inf_norm(dead.phi), 1e-15);  // closed to round-off
  ASSERT_EQ(constraint_rank(m, m.loops().constraints, q_dead).rank, 1);

  // Velocities at the singular q: finite, on ker G, and the M-orthogonal projection (the
  // minimum-norm multipliers leave the projection itself unique).
  VecX q = q_dead, u = u0;
  Projector p(m, m.loops().constraints);
  p.project(0.0, q, u);
  EXPECT_TRUE(q.allFinite() && u.allFinite());
  EXPECT_EQ(q, q_dead);
  const auto after = test::constraint_values(m, q, u);
  EXPECT_LE(inf_norm(after.G * u), velocity_bound(after.G, u, 1e-10));  // the default velocity_tolerance
  EXPECT_TRUE(near(u, reference_velocity_projection(m, q_dead, u0), 1e-9));  // round-off, as above

  // Positions slightly off the dead centre: finite, and closed to the tolerance (Newton with the
  // pseudo-inverse may converge only linearly near the bifurcation: allow more iterations).
  ProjectionSettings many;
  many.max_iterations = 60;
  std::mt19937_64 rng(31);
  for (int trial = 0; trial < 5; ++trial) {
    VecX qp = q_dead + test::random_vector(m.nq, rng, 1e-4), up = u0;
    Projector pp(m, m.loops().constraints, many);
    pp.project(0.0, qp, up);
    EXPECT_TRUE(qp.allFinite() && up.allFinite()) << "trial " << trial;
    const auto c = test::constraint_values(m, qp, up);
    EXPECT_LE(inf_norm(c.phi), many.position_tolerance) << "trial " << trial;
    EXPECT_LE(inf_norm(c.G * up), velocity_bound(c.G, up, many.velocity_tolerance)) << "trial " << trial;
  }
}

// The unreduced constraint set of a planar four-bar keeps the three out-of-plane rows of the
// revolute loop joint, dependent at every configuration: G M⁻¹Gᵀ is singular everywhere. The
// projection must give the same state as with the reduced rows (the manifold is the same).
TEST(Projection, StructurallyRedundantRowsGiveTheSameResultAsTheReducedSet) {
  for (double theta : {0.7, 0.0}) {  // regular, and the singular collinear configuration
    const Model m = Model::build(test::parallelogram_four_bar(true, theta));
    const Constraints &reduced = m.loops().constraints, &all = m.loops().unreduced;
    ASSERT_GT(all.rows(), reduced.rows());
    std::mt19937_64 rng(37);
    VecX q = m.q0;
    if (theta != 0.0) q += test::random_vector(m.nq, rng, 1e-3);  // in-plane: revolute z joints
    VecX u = test::random_vector(m.nv, rng, 1.0);
    VecX q2 = q, u2 = u;
    Projector pr(m, reduced), pa(m, all);
    pr.project(0.0, q, u);
    pa.project(0.0, q2, u2);
    EXPECT_TRUE(q2.allFinite() && u2.allFinite()) << "theta " << theta;
    // Same Newton steps in exact arithmetic: the redundant rows' Φ is zero in-plane and their
    // part of the pseudo-inverse is cut. Round-off of the eigen solves: 1e-9.
    EXPECT_TRUE(near(q2, q, 1e-9)) << "theta " << theta;
    EXPECT_TRUE(near(u2, u, 1e-9)) << "theta " << theta;
    // Every row, redundant ones included, holds afterwards (tolerances of ProjectionSettings).
    KinematicsData kin(m);
    update_positions(m, kin, q2);
    ConstraintData d(m);
    VecX phi(all.rows());
    MatX G(all.rows(), m.nv);
    constraint_position(m, all, kin, 0.0, d, phi);
    constraint_jacobian(m, all, kin, d, G);
    EXPECT_LE(inf_norm(phi), 1e-10) << "theta " << theta;
    EXPECT_LE(inf_norm(G * u2), velocity_bound(G, u2, 1e-10)) << "theta " << theta;
  }
}

// ---------------------------------------------------------------------------------------------
// 4. Failures

void expect_did_not_converge(const std::function<void()>& f, const std::string& joint, const std::string& time) {
  try {
    f();
    ADD_FAILURE() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("did not converge"), std::string::npos) << msg;
    EXPECT_NE(msg.find("loop joint '" + joint + "'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("t = " + time), std::string::npos) << msg;
  }
}

TEST(Projection, LoopThatCannotCloseThrowsNamingTheLoopJoint) {
  // Unit links cannot span a 3.5 m ground link.
  Mechanism mech = test::parallelogram_four_bar(true, 0.5);
  for (JointSpec& j : mech.joints)
    if (j.name == "D") j.parent_frame = Transform::translation(Vec3(3.5, 0, 0));
  const Model m = Model::build(mech);
  Projector p(m, m.loops().constraints);
  VecX q = m.q0, u = VecX::Zero(m.nv);
  expect_did_not_converge([&] { p.project(0.25, q, u); }, "C", "0.25");
}

TEST(Projection, OneIterationFromFarOffThrowsNamingTheLoopJoint) {
  const State s = test::assembled_state("fourbar_spatial_park", 7);
  ProjectionSettings one;
  one.max_iterations = 1;
  std::mt19937_64 rng(41);
  const VecX q_far = s.q + test::random_vector(s.model.nq, rng, 0.2);
  VecX q = q_far, u = s.u;
  Projector p(s.model, s.model.loops().constraints, one);
  expect_did_not_converge([&] { p.project(3, q, u); }, "ball", "3");
  // The same state converges with the default iterations: the failure is the iteration limit.
  VecX q2 = q_far, u2 = s.u;
  Projector p2(s.model, s.model.loops().constraints);
  EXPECT_NO_THROW(p2.project(3, q2, u2));
}

TEST(Projection, RejectsBadSettings) {
  const Model m = Model::build(test::parallelogram_four_bar());
  const Constraints& c = m.loops().constraints;
  auto with = [](auto change) {
    ProjectionSettings s;
    change(s);
    return s;
  };
  EXPECT_THROW(Projector(m, c, with([](ProjectionSettings& s) { s.position_tolerance = 0.0; })),
               std::invalid_argument);
  EXPECT_THROW(Projector(m, c, with([](ProjectionSettings& s) { s.position_tolerance = -1e-10; })),
               std::invalid_argument);
  EXPECT_THROW(Projector(m, c, with([](ProjectionSettings& s) { s.velocity_tolerance = 0.0; })),
               std::invalid_argument);
  EXPECT_THROW(Projector(m, c, with([](ProjectionSettings& s) {
                 s.velocity_tolerance = std::numeric_limits<double>::quiet_NaN();
               })),
               std::invalid_argument);
  EXPECT_THROW(Projector(m, c, with([](ProjectionSettings& s) { s.max_iterations = 0; })), std::invalid_argument);
  EXPECT_NO_THROW(Projector(m, c, ProjectionSettings{}));
}

// ---------------------------------------------------------------------------------------------
// 5. check_consistent

void expect_inconsistent(const Model& m, const VecX& q, const VecX& u, const std::string& what,
                         const std::string& joint, double tolerance = consistency_tolerance) {
  try {
    check_consistent(m, m.loops().constraints, q, u, tolerance);
    ADD_FAILURE() << "expected std::runtime_error (" << what << ")";
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
    EXPECT_NE(msg.find("loop joint '" + joint + "'"), std::string::npos) << msg;
  }
}

// Name of the loop joint owning the largest entry of a residual over the kept rows.
std::string worst_loop(const Model& m, const VecX& r) {
  Eigen::Index k = 0;
  r.cwiseAbs().maxCoeff(&k);
  return m.loop_joints[m.loops().constraints.kept()[k].loop].name;
}

TEST(ProjectionCheckConsistent, ClosedStatePassesAndViolationsNameTheLoopJoint) {
  for (const State& s : closed_states()) {
    const Model& m = s.model;
    EXPECT_NO_THROW(check_consistent(m, m.loops().constraints, s.q, s.u)) << s.name;
    std::mt19937_64 rng(43);
    // Velocity off ker G by ~1e-3.
    const VecX u_bad = s.u + test::random_vector(m.nv, rng, 1e-3);
    const auto cv = test::constraint_values(m, s.q, u_bad);
    expect_inconsistent(m, s.q, u_bad, "velocity residual", worst_loop(m, cv.G * u_bad));
    // Position off the manifold by ~1e-4 (reported before the velocity).
    VecX q_bad = s.q;
    integrate_q(m, q_bad, test::random_vector(m.nv, rng, 1e-4));
    const auto cp = test::constraint_values(m, q_bad, s.u);
    expect_inconsistent(m, q_bad, u_bad, "position residual", worst_loop(m, cp.phi));
  }
}

TEST(ProjectionCheckConsistent, ThresholdIsTheGivenToleranceOnAnIndependentlyComputedResidual) {
  const State s = test::assembled_state("fourbar_spatial_park", 11);
  const Model& m = s.model;
  std::mt19937_64 rng(47);
  VecX q = s.q;
  integrate_q(m, q, test::random_vector(m.nv, rng, 1e-7));
  const double phi = inf_norm(test::constraint_values(m, q, s.u).phi);
  ASSERT_GT(phi, 1e-10);  // far above round-off (1e-16), so factors of 2 around it are meaningful
  // Passes when the residual is below the tolerance, fails when above (factor 2 either way).
  EXPECT_NO_THROW(check_consistent(m, m.loops().constraints, q, s.u, 2.0 * phi));
  expect_inconsistent(m, q, s.u, "position residual", "ball", 0.5 * phi);
  // Velocities: the bound is tolerance · max(1, max|G| ‖u‖∞).
  const VecX u = s.u + test::random_vector(m.nv, rng, 1e-6);
  const auto c = test::constraint_values(m, s.q, u);
  const double gu = inf_norm(c.G * u), scale = std::max(1.0, c.G.cwiseAbs().maxCoeff() * inf_norm(u));
  EXPECT_NO_THROW(check_consistent(m, m.loops().constraints, s.q, u, 2.0 * gu / scale));
  expect_inconsistent(m, s.q, u, "velocity residual", "ball", 0.5 * gu / scale);
  // A tolerance that is no bound is the caller's error, not the state's.
  for (const double tolerance : {std::nan(""), -1.0, 0.0})
    EXPECT_THROW(check_consistent(m, m.loops().constraints, s.q, s.u, tolerance), std::invalid_argument) << tolerance;
}

TEST(ProjectionCheckConsistent, CouplingViolationNamesTheCoupling) {
  const Model m = load_model("geared_pair");
  EXPECT_NO_THROW(check_consistent(m, m.loops().constraints, m.q0, m.u0));
  VecX u = m.u0;
  u(m.v_index[m.joint_index("wheel2_axle")]) += 1e-3;
  try {
    check_consistent(m, m.loops().constraints, m.q0, u);
    ADD_FAILURE() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("velocity residual"), std::string::npos) << msg;
    EXPECT_NE(msg.find("constraint 'mesh'"), std::string::npos) << msg;
  }
}

TEST(ProjectionCheckConsistent, RejectsWrongSizesAndAcceptsTrees) {
  const Model m = Model::build(test::parallelogram_four_bar());
  EXPECT_THROW(check_consistent(m, m.loops().constraints, VecX::Zero(m.nq + 1), VecX::Zero(m.nv)), std::invalid_argument);
  EXPECT_THROW(check_consistent(m, m.loops().constraints, VecX::Zero(m.nq), VecX::Zero(m.nv - 1)), std::invalid_argument);
  const Model tree = Model::build(test::random_tree(3, 4));
  std::mt19937_64 rng(3);
  EXPECT_NO_THROW(check_consistent(tree, tree.loops().constraints, test::random_q(tree, rng), test::random_vector(tree.nv, rng)));
}

// ---------------------------------------------------------------------------------------------
// 6. Simulator: drift with and without projection

// Anderson & Critchley's four-bar (2003, §4.1) as they ran it: RK4, h = 0.01 s, 10 s, acceleration-
// level constraints (lagrange-on, no Baumgarte). Without projection Φ drifts; with it every row
// stays at the projection tolerance (1e-10), well below 1e-8.
TEST(Projection, SimulatorProjectionRemovesTheDriftOfTheAndersonFourBar) {
  const Model m = load_model("fourbar_anderson");
  const AssemblyResult a = assemble(m, m.loops().constraints, m.q0, m.u0);
  auto run = [&](bool project, double h = 0.01) {
    auto f = make_formulation("lagrange-on", m);
    SimulationSettings s = test::fixed_step_settings(h, 10.0, 0.01);
    s.project = project;
    s.watch.enabled = project;  // the drift without projection is what is measured (the watch stops it at t = 4.7 s)
    Simulator sim(m, *f, s);
    return sim.run(a.q, a.u);
  };
  const Trajectory with = run(true), without = run(false);
  ASSERT_EQ(with.rows.size(), 1001u);
  double max_pos = 0, max_vel = 0, drift_pos = 0, drift_vel = 0;
  for (std::size_t r = 0; r < with.rows.size(); ++r) {
    // 1e-8: the brief's bound; the projection holds |Φ| <= 1e-10 and |G u| <= 1e-10 · max(1, |G||u|)
    // with |G| ~ 1 m and |u| below ~10 rad/s here.
    EXPECT_LT(with.at(r, "residual.position"), 1e-8) << "t = " << with.at(r, "t");
    EXPECT_LT(with.at(r, "residual.velocity"), 1e-8) << "t = " << with.at(r, "t");
    max_pos = std::max(max_pos, with.at(r, "residual.position"));
    max_vel = std::max(max_vel, with.at(r, "residual.velocity"));
    drift_pos = std::max(drift_pos, without.at(r, "residual.position"));
    drift_vel = std::max(drift_vel, without.at(r, "residual.velocity"));
  }
  std::printf("Anderson four-bar, RK4 h = 0.01, 10 s: max |Phi| %.2e / %.2e, max |G u| %.2e / %.2e (with / without "
              "projection)\n",
              max_pos, drift_pos, max_vel, drift_vel);
  // Without projection the constraints drift above the bound: the projection has work to do.
  EXPECT_GT(drift_pos, 1e-8);
  EXPECT_GT(drift_vel, 1e-8);
  // One projection per accepted step, and the positions were actually corrected.
  EXPECT_EQ(with.projection.calls, with.stats.steps_accepted);
  EXPECT_GT(with.projection.position_projections, 0);
  EXPECT_GT(with.projection.velocity_projections, 0);
  EXPECT_LE(with.projection.max_position_residual, 1e-10);  // the default position_tolerance
  // Without projection the stats stay zero.
  EXPECT_EQ(without.projection.calls, 0);
  // The projection keeps RK4's order: against a dopri5 reference (rtol = atol = 1e-11, without
  // projection; its drift stays ~1e-9), halving h divides the crank-angle error by ~16 (measured
  // ~30: 1.1e-2 → 3.6e-4). Requiring 8 allows pre-asymptotic effects and still fails a projection
  // that would make the method first order (÷2). (The error at h = 0.01 is ~1e-2 rad: the crank
  // swings through the toggle positions fast; without projection it is the same size.)
  auto f = make_formulation("lagrange-dense", m);
  SimulationSettings s;
  s.integrator.kind = IntegratorKind::dopri5;
  s.integrator.rtol = s.integrator.atol = 1e-11;
  s.t_end = 10.0;
  s.output_dt = 0.01;
  Simulator sim(m, *f, s);
  const Trajectory ref = sim.run(a.q, a.u);
  auto error = [&](const Trajectory& t) {
    double e = 0;
    for (std::size_t r = 0; r < ref.rows.size(); ++r)
      e = std::max(e, std::abs(t.at(r, "q.crank_pivot") - ref.at(r, "q.crank_pivot")));
    return e;
  };
  const Trajectory half = run(true, 0.005);
  const double err = error(with), err_half = error(half);
  std::printf("max crank angle error against dopri5: %.2e (h = 0.01), %.2e (h = 0.005), %.2e (h = 0.01, no "
              "projection)\n",
              err, err_half, error(without));
  EXPECT_LT(err_half, err / 8.0);
  EXPECT_LT(err, 0.05);  // same motion: the measured 1.1e-2 is RK4's error, not a different branch
}

// A model without loops has nothing to project: the run is the same with and without the setting.
TEST(Projection, SimulatorLeavesATreeModelUnchanged) {
  const Model m = load_model("double_pendulum");
  auto run = [&](bool project) {
    auto f = make_formulation("tree", m);
    SimulationSettings s = test::fixed_step_settings(0.01, 1.0, 0.1);
    s.project = project;
    Simulator sim(m, *f, s);
    return sim.run(m.q0, m.u0);
  };
  const Trajectory with = run(true), without = run(false);
  ASSERT_EQ(with.rows.size(), without.rows.size());
  for (std::size_t r = 0; r < with.rows.size(); ++r) EXPECT_EQ(with.rows[r], without.rows[r]) << "row " << r;
  EXPECT_EQ(with.projection.calls, with.stats.steps_accepted);
  EXPECT_EQ(with.projection.position_projections, 0);
  EXPECT_EQ(with.projection.velocity_projections, 0);
}

}  // namespace
}  // namespace loopdyn
