// The absolute-coordinate reference (reference/absolute_coordinates.hpp) on every joint type and
// spring-damper it takes, against loopdyn's own path (lagrange-dense, dopri5 at 1e-10): two
// computations that share only the mechanism description must give the same motion and the same
// energy balance. The reference's own balance E − W is checked too.
#include <gtest/gtest.h>

#include "absolute_coordinates.hpp"
#include "iftomm_cases.hpp"
#include "loopdyn/formulations/formulation.hpp"
#include "loopdyn/run/simulator.hpp"
#include "loopdyn/formulations/registry.hpp"

using namespace loopdyn;

namespace {

// A body of mass m with its centre at `com` and a full inertia (products of inertia nonzero), so
// that no principal axis lines up with a joint axis by accident.
void add_body(Mechanism& mech, const std::string& name, double m, const Vec3& com) {
  Mat3 I;
  I << 0.05, 0.004, -0.003, 0.004, 0.07, 0.002, -0.003, 0.002, 0.04;
  mech.add_body(name, m, com, m * I);
}

ForceSpec joint_spring(const std::string& joint, double k, double c, double rest) {
  return {JointSpringDamperSpec{joint, k, c, rest}, ""};
}

ForceSpec point_spring(const std::string& body1, const Vec3& p1, const std::string& body2, const Vec3& p2, double k,
                       double c, double rest) {
  return {PointSpringDamperSpec{body1, body2, p1, p2, k, c, rest}, ""};
}

// A tree of every joint type the reference takes, each on a skewed axis and moving:
// ground -prismatic-> cart -revolute-> arm -universal-> link -spherical-> tip, and
// ground -cylindrical-> sleeve; springs and dampers on the prismatic and revolute joints and
// between points of the tip and the ground and of the sleeve and the cart. Gravity off the axes.
Mechanism every_joint() {
  Mechanism m;
  m.gravity = Vec3(1.0, -9.0, 2.0);
  add_body(m, "cart", 2.0, Vec3(0.1, 0.0, 0.05));
  add_body(m, "arm", 1.0, Vec3(0.3, 0.05, 0.0));
  add_body(m, "link", 0.8, Vec3(0.0, -0.25, 0.05));
  add_body(m, "tip", 0.5, Vec3(0.05, -0.2, 0.0));
  add_body(m, "sleeve", 1.2, Vec3(0.0, 0.1, 0.2));
  const Transform tilt = Transform::rotation(Eigen::AngleAxisd(0.4, Vec3(1, 2, 0.5).normalized()).toRotationMatrix());
  JointSpec& slide = m.add_joint("slide", JointType::prismatic, "ground", "cart", tilt);
  slide.axis = Vec3(1.0, 0.2, 0.0);
  slide.q = {0.1};
  slide.u = {0.5};
  JointSpec& hinge = m.add_joint("hinge", JointType::revolute, "cart", "arm", Transform::translation(Vec3(0.2, 0, 0.1)));
  hinge.axis = Vec3(0.1, 0.3, 1.0);
  hinge.q = {2.5};  // the spring's rest is 0: the angle starts near π and turns past it
  hinge.u = {4.0};
  JointSpec& cross = m.add_joint("cross", JointType::universal, "arm", "link", Transform::translation(Vec3(0.6, 0, 0)),
                                 Transform::translation(Vec3(0, 0.1, 0)));
  cross.axis = Vec3(1.0, 0.0, 0.2).normalized();
  cross.axis2 = Vec3(0.0, 1.0, 0.0);
  cross.q = {0.3, -0.4};
  cross.u = {1.0, -2.0};
  JointSpec& ball = m.add_joint("ball", JointType::spherical, "link", "tip", Transform::translation(Vec3(0, -0.5, 0)));
  const Eigen::Quaterniond turn(Eigen::AngleAxisd(0.7, Vec3(0.3, 1.0, -0.2).normalized()));
  ball.q = {turn.w(), turn.x(), turn.y(), turn.z()};
  ball.u = {0.5, -1.0, 1.5};
  JointSpec& tube = m.add_joint("tube", JointType::cylindrical, "ground", "sleeve", Transform::translation(Vec3(0.5, 0, 0)));
  tube.axis = Vec3(0.2, 1.0, 0.3);
  tube.q = {0.2, 0.5};
  tube.u = {-0.3, 2.0};
  m.forces.push_back(joint_spring("slide", 40.0, 2.0, 0.3));
  m.forces.push_back(joint_spring("hinge", 3.0, 0.05, 0.0));
  m.forces.push_back(point_spring("ground", Vec3(0.5, -1.0, 0.0), "tip", Vec3(0.1, -0.3, 0.0), 30.0, 0.5, 0.4));
  m.forces.push_back(point_spring("sleeve", Vec3(0.0, 0.2, 0.3), "cart", Vec3(0.1, 0.1, 0.0), 20.0, 1.0, 0.2));
  m.markers.push_back({"cart", "cart", Vec3(0.3, 0.0, 0.0), ""});
  m.markers.push_back({"arm", "arm", Vec3(0.6, 0.1, 0.0), ""});
  m.markers.push_back({"tip", "tip", Vec3(0.1, -0.3, 0.0), ""});
  m.markers.push_back({"sleeve", "sleeve", Vec3(0.1, 0.3, 0.2), ""});
  return m;
}

TEST(AbsoluteCoordinates, EveryJointTypeAndSpringFollowsLoopdyn) {
  const Mechanism mech = every_joint();
  const double t_end = 2.0, h = 2.5e-4;
  const Model model = Model::build(mech);
  const auto f = make_formulation("lagrange-dense", model);
  SimulationSettings settings;
  settings.integrator.kind = IntegratorKind::dopri5;
  settings.integrator.rtol = settings.integrator.atol = 1e-10;
  settings.t_end = t_end;
  settings.output_dt = 0.05;
  Simulator sim(model, *f, settings);
  const Trajectory traj = sim.run(model.q0, model.u0);

  const reference::AbsoluteCoordinates ref(mech);
  reference::State s = ref.start(reference::initial_bodies(mech));
  const auto [position0, velocity0] = ref.residuals(s.bodies);
  EXPECT_LT(position0, 1e-12);  // initial_bodies from loopdyn's joint coordinates meet the reference's rows
  EXPECT_LT(velocity0, 1e-12);
  const double e0 = ref.energy(s);
  EXPECT_NEAR(traj.at(0, "energy"), e0, 1e-12 * std::abs(e0));  // spring potentials read the same q
  const int energy = traj.column("energy"), work = traj.column("work");
  double now = 0.0, marker = 0.0, balance = 0.0, dissipated = 0.0;
  for (std::size_t k = 0; k < traj.rows.size(); ++k) {
    const double t = traj.rows[k](0);
    ref.advance(s, now, t, h);
    now = t;
    for (const MarkerSpec& p : mech.markers) {
      const Vec3 x = ref.point(s.bodies, ref.body(p.body), p.point);
      marker = std::max(marker, (x - traj.rows[k].segment<3>(traj.column(p.name + ".x"))).norm());
    }
    balance = std::max(balance, std::abs(ref.energy(s) - s.work - e0));
    EXPECT_NEAR(s.work, traj.rows[k](work), 1e-7 * std::abs(e0));
    EXPECT_NEAR(ref.energy(s), traj.rows[k](energy), 1e-7 * std::abs(e0));
    dissipated = -s.work;
  }
  EXPECT_GT(dissipated, 1e-2 * std::abs(e0));  // the dampers work, and the balance sees them
  EXPECT_LT(marker, 1e-8);  // 7.6e-10 measured
  EXPECT_GT(traj.at(traj.rows.size() - 1, "q.hinge"), 3.2);  // past π: the reference unwrapped its spring angle
  EXPECT_LT(balance, 1e-10 * std::abs(e0));  // 2.7e-11 measured
  const auto [position, velocity] = ref.residuals(s.bodies);
  EXPECT_LT(position, 1e-12);
  EXPECT_LT(velocity, 1e-12);
}

TEST(AbsoluteCoordinates, RefusesWhatItDoesNotModel) {
  Mechanism m = every_joint();
  m.add_body("free", 1.0, Vec3::Zero(), Mat3::Identity());
  m.add_joint("float", JointType::free, "ground", "free");
  EXPECT_THROW(reference::AbsoluteCoordinates{m}, std::invalid_argument);
  Mechanism springs = every_joint();
  std::vector<reference::BodyState> bodies = reference::initial_bodies(springs);
  EXPECT_THROW(reference::AbsoluteCoordinates(springs).advance(bodies, 0.0, 0.1, 1e-3), std::invalid_argument);
  springs.forces.push_back(joint_spring("cross", 1.0, 0.0, 0.0));  // two coordinates
  EXPECT_THROW(reference::AbsoluteCoordinates{springs}, std::invalid_argument);
}

}  // namespace
