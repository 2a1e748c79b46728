// Force elements against the energy they derive from, and conservation laws over simulations.
#include "loopdyn/core/forces.hpp"
#include "loopdyn/formulations/tree.hpp"
#include "loopdyn/run/simulator.hpp"
#include "test_support.hpp"

namespace loopdyn {
namespace {

using test::near;

// Random tree with a joint spring on every one-coordinate tree joint and point springs between
// bodies and to ground; damping optional.
Mechanism sprung_tree(std::uint64_t seed, int nbodies, double damping) {
  Mechanism mech = test::random_tree(seed, nbodies, 0);
  std::mt19937_64 rng(seed);
  for (const JointSpec& j : mech.joints)
    if (j.type == JointType::revolute || j.type == JointType::prismatic)
      mech.forces.push_back({JointSpringDamperSpec{j.name, 3.0, damping, 0.2}, ""});
  mech.forces.push_back({PointSpringDamperSpec{"b0", "ground", test::random_vec(rng, 0.3), test::random_vec(rng, 1.0),
                                               20.0, damping, 0.5},
                         ""});
  mech.forces.push_back({PointSpringDamperSpec{"b1", "b3", test::random_vec(rng, 0.3), test::random_vec(rng, 0.3),
                                               15.0, damping, 0.1},
                         ""});
  return mech;
}

// Generalized force of everything applied: Q = τ + Σ_b J_bᵀ f_b (body-frame Jacobians).
VecX generalized_force(const Model& m, const KinematicsData& kin, const ForceData& fd) {
  VecX Q = fd.applied.tau;
  Mat6X J(6, m.nv);
  for (int b = 0; b < m.nbodies; ++b) {
    frame_jacobian(m, kin, b, Transform{}, J);
    Q += J.transpose() * fd.f_body.col(b);
  }
  return Q;
}

double spring_energy(const Model& m, const VecX& q) {
  KinematicsData kin(m);
  update_positions(m, kin, q);
  update_velocities(m, kin, q, VecX::Zero(m.nv));
  return energy(m, kin, q).springs;
}

TEST(Forces, SpringForcesAreMinusTheEnergyGradient) {
  const Model m = Model::build(sprung_tree(11, 8, 0.0));
  std::mt19937_64 rng(3);
  const VecX q = test::random_q(m, rng);
  KinematicsData kin(m);
  update_positions(m, kin, q);
  update_velocities(m, kin, q, VecX::Zero(m.nv));
  ForceData fd(m);
  evaluate_forces(m, kin, 0.0, q, VecX::Zero(m.nv), fd);
  const VecX Q = generalized_force(m, kin, fd);
  const double h = 1e-6;  // central differences: O(h²) truncation, ~1e-10 round-off on O(10) energies
  for (int k = 0; k < m.nv; ++k) {
    const VecX e = VecX::Unit(m.nv, k);
    const double dV = (spring_energy(m, test::moved(m, q, e, h)) - spring_energy(m, test::moved(m, q, e, -h))) / (2 * h);
    EXPECT_NEAR(Q(k), -dV, 1e-6 * std::max(1.0, std::abs(dV))) << "speed " << k;
  }
}

TEST(Forces, DampersDissipateAndConstantLoadsDoTheirVirtualPower) {
  Mechanism mech = sprung_tree(12, 6, 2.0);
  mech.forces.push_back({BodyForceSpec{"b2", Vec3(0.1, 0.2, 0.3), Vec3(1.0, -2.0, 0.5)}, ""});
  mech.forces.push_back({BodyTorqueSpec{"b4", Vec3(0.3, 0.1, -0.7)}, ""});
  const Model m = Model::build(mech);
  std::mt19937_64 rng(4);
  const VecX q = test::random_q(m, rng), u = test::random_vector(m.nv, rng);
  KinematicsData kin(m);
  update_positions(m, kin, q);
  update_velocities(m, kin, q, u);
  ForceData fd(m);
  evaluate_forces(m, kin, 0.0, q, u, fd);
  // Power of every element: Q·u = −dV/dt (springs) − dissipation + F·v_point + τ·ω.
  const double power = generalized_force(m, kin, fd).dot(u);
  const Vec3 v2 = point_velocity(kin, m.body_index("b2"), Vec3(0.1, 0.2, 0.3));
  const double load_power = Vec3(1.0, -2.0, 0.5).dot(v2) +
                            Vec3(0.3, 0.1, -0.7).dot(body_velocity_world(kin, m.body_index("b4")).head<3>());
  const double h = 1e-6;
  const double dVdt = (spring_energy(m, test::moved(m, q, u, h)) - spring_energy(m, test::moved(m, q, u, -h))) / (2 * h);
  EXPECT_LT(power - load_power + dVdt, 0.0);  // what remains is the dampers' power: strictly negative
  EXPECT_NEAR(fd.power, power, 1e-12 * std::abs(power));  // ForceData's own sum, against Q·u by Jacobians
}

TEST(Forces, UserCallbackIsCalledWithCurrentKinematicsAndAdds) {
  Mechanism mech = test::random_tree(13, 3, 0);
  double seen_t = -1;
  mech.callbacks.push_back([&](double t, const Model& model, const KinematicsData&, const VecX&, const VecX&,
                               AppliedForces& out) {
    seen_t = t;
    out.tau(0) += 4.0;
    out.f_world.col(model.nbodies - 1).tail<3>() += Vec3(0, 0, 1);
  });
  const Model m = Model::build(mech);
  KinematicsData kin(m);
  update_positions(m, kin, m.q0);
  update_velocities(m, kin, m.q0, m.u0);
  ForceData fd(m);
  evaluate_forces(m, kin, 2.5, m.q0, m.u0, fd);
  EXPECT_EQ(seen_t, 2.5);
  EXPECT_EQ(fd.applied.tau(0), 4.0);
  EXPECT_TRUE(near(kin.X_world[m.nbodies - 1].act_force(fd.f_body.col(m.nbodies - 1)),
                   (Vec6() << 0, 0, 0, 0, 0, 1).finished(), 1e-14));
}

SimulationSettings tight(double t_end) {
  SimulationSettings s;
  s.integrator.kind = IntegratorKind::dopri5;
  s.integrator.rtol = s.integrator.atol = 1e-12;
  s.integrator.dt = 0.0;
  s.t_end = t_end;
  s.output_dt = 0.5;
  return s;
}

double worst_energy_drift(const Model& m, double tol) {
  std::mt19937_64 rng(9);
  TreeFormulation tree(m);
  SimulationSettings s = tight(10.0);
  s.integrator.rtol = s.integrator.atol = tol;
  Simulator sim(m, tree, s);
  const Trajectory traj = sim.run(test::random_q(m, rng), test::random_vector(m.nv, rng));
  EXPECT_DOUBLE_EQ(traj.rows.back()(0), 10.0);
  const double e0 = traj.at(0, "energy");
  double worst = 0.0;
  for (std::size_t r = 0; r < traj.rows.size(); ++r) worst = std::max(worst, std::abs(traj.at(r, "energy") - e0));
  return worst / std::abs(e0);
}

// Conservative 3D tree with all eight joint types under gravity: dopri5 at rtol = atol = 1e-12
// holds the energy to the bound of 1e-9 relative over 10 s (measured 4e-10; the drift
// scales with the tolerance: 4e-8 at 1e-10, 4e-9 at 1e-11).
TEST(Energy, ConservedOnATreeWithEveryJointType) {
  EXPECT_LT(worst_energy_drift(Model::build(test::random_tree(21, 8, 0)), 1e-12), 1e-9);
}

// With joint and point springs the energy is conserved up to the integrator's error: the drift
// falls with the tolerance (an error in a spring force or its energy would not).
TEST(Energy, ConservedWithSpringsUpToIntegratorError) {
  Mechanism mech = test::random_tree(21, 8, 0);
  for (const JointSpec& j : mech.joints)
    if (j.type == JointType::revolute || j.type == JointType::prismatic)
      mech.forces.push_back({JointSpringDamperSpec{j.name, 0.5, 0.0, 0.2}, ""});
  mech.forces.push_back({PointSpringDamperSpec{"b0", "ground", Vec3(0.1, 0, 0), Vec3(0.5, 0.2, 0.3), 2.0, 0.0, 0.5}, ""});
  mech.forces.push_back({PointSpringDamperSpec{"b1", "b3", Vec3(0, 0.1, 0), Vec3(0.1, 0, 0.2), 2.0, 0.0, 0.1}, ""});
  const Model m = Model::build(mech);
  const double coarse = worst_energy_drift(m, 1e-11), fine = worst_energy_drift(m, 1e-13);
  EXPECT_LT(fine, 1e-9);
  EXPECT_GT(coarse / fine, 10.0) << coarse << " vs " << fine;  // measured 1.3e-8 vs 1.1e-10
}

// A free body without gravity: spatial momentum about the world origin, h = X_world* (I v), is
// constant (both linear and angular parts).
TEST(Energy, FreeTumblingBodyConservesMomentum) {
  Mechanism mech;
  mech.gravity = Vec3::Zero();
  mech.add_body("body", 2.0, Vec3(0.1, -0.05, 0.02), Vec3(1.0, 2.0, 2.5).asDiagonal());
  JointSpec& j = mech.add_joint("float", JointType::free, "ground", "body");
  j.q = {0.3, 0.1, -0.2, 1, 0, 0, 0};
  j.u = {0.1, 0.2, -0.1, 0.05, 3.0, 0.1};  // spin about the intermediate axis: tumbling
  const Model m = Model::build(mech);
  TreeFormulation tree(m);
  SimulationSettings s = tight(10.0);
  s.output_dt = 0.1;
  Simulator sim(m, tree, s);
  const Trajectory traj = sim.run(m.q0, m.u0);
  KinematicsData kin(m);
  Vec6 h0 = Vec6::Zero();
  for (std::size_t r = 0; r < traj.rows.size(); ++r) {
    const VecX x = traj.rows[r].segment(1, m.nq + m.nv);
    update_positions(m, kin, x.head(m.nq));
    update_velocities(m, kin, x.head(m.nq), x.tail(m.nv));
    const Vec6 h = kin.X_world[0].act_force(m.inertia[0] * kin.v[0]);
    if (r == 0) h0 = h;
    EXPECT_TRUE(near(h, h0, 1e-9)) << "t = " << traj.rows[r](0);
  }
  // It does tumble: the body's spin axis flips (intermediate-axis instability).
  double min_wy = 1e9;
  for (std::size_t r = 0; r < traj.rows.size(); ++r) min_wy = std::min(min_wy, traj.at(r, "u.float.4"));
  EXPECT_LT(min_wy, 0.0);
}

}  // namespace
}  // namespace loopdyn
