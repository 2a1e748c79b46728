// Field-by-field comparison of two Mechanisms (the model-file writer's round trip, and the same
// robot read from YAML and from URDF).
#pragma once

#include <gtest/gtest.h>

#include <tuple>
#include <type_traits>
#include <variant>

#include "loopdyn/core/mechanism.hpp"

namespace loopdyn::test {

// Fields of each force kind, compared together.
inline auto fields(const loopdyn::JointSpringDamperSpec& s) { return std::tie(s.joint, s.stiffness, s.damping, s.rest); }
inline auto fields(const loopdyn::PointSpringDamperSpec& s) {
  return std::tie(s.body1, s.body2, s.point1, s.point2, s.stiffness, s.damping, s.rest_length);
}
inline auto fields(const loopdyn::JointForceSpec& s) { return std::tie(s.joint, s.value); }
inline auto fields(const loopdyn::BodyForceSpec& s) { return std::tie(s.body, s.point, s.force); }
inline auto fields(const loopdyn::BodyTorqueSpec& s) { return std::tie(s.body, s.torque); }
inline auto fields(const loopdyn::JointPdSpec& s) { return std::tie(s.joint, s.stiffness, s.damping, s.effort); }

/// Two functions of time given the same way.
inline void expect_same_function(const TimeFunction& a, const TimeFunction& b) {
  const TimeFunction::Form x = a.form(), y = b.form();
  EXPECT_EQ(x.kind, y.kind);
  EXPECT_EQ(x.numbers, y.numbers) << x.kind;
  EXPECT_EQ(x.texts, y.texts) << x.kind;
}

/// Every field but `where` equal; rotations (written as roll-pitch-yaw) to 1e-15.
inline void expect_same(const Mechanism& a, const Mechanism& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.gravity, b.gravity);
  ASSERT_EQ(a.bodies.size(), b.bodies.size());
  for (std::size_t k = 0; k < a.bodies.size(); ++k) {
    const auto &x = a.bodies[k], &y = b.bodies[k];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.mass, y.mass) << x.name;
    EXPECT_EQ(x.com, y.com) << x.name;
    EXPECT_EQ(x.inertia, y.inertia) << x.name;
    ASSERT_EQ(x.visuals.size(), y.visuals.size()) << x.name;
    for (std::size_t v = 0; v < x.visuals.size(); ++v) {
      const auto &p = x.visuals[v], &r = y.visuals[v];
      EXPECT_TRUE(std::tie(p.shape, p.size, p.radius, p.length, p.file, p.scale, p.origin.p, p.rgba) ==
                  std::tie(r.shape, r.size, r.radius, r.length, r.file, r.scale, r.origin.p, r.rgba))
          << x.name << " visual #" << v + 1;
      EXPECT_LE((p.origin.R - r.origin.R).cwiseAbs().maxCoeff(), 1e-15) << x.name;
    }
  }
  ASSERT_EQ(a.joints.size(), b.joints.size());
  for (std::size_t k = 0; k < a.joints.size(); ++k) {
    const auto &x = a.joints[k], &y = b.joints[k];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.type, y.type) << x.name;
    EXPECT_EQ(x.parent, y.parent) << x.name;
    EXPECT_EQ(x.child, y.child) << x.name;
    for (const auto& [fx, fy] :
         {std::pair(&x.parent_frame, &y.parent_frame), std::pair(&x.child_frame, &y.child_frame)}) {
      EXPECT_EQ(fx->p, fy->p) << x.name;
      EXPECT_LE((fx->R - fy->R).cwiseAbs().maxCoeff(), 1e-15) << x.name << "\n" << fx->R << "\n" << fy->R;
    }
    EXPECT_EQ(x.axis, y.axis) << x.name;
    EXPECT_EQ(x.axis2, y.axis2) << x.name;
    EXPECT_EQ(x.q, y.q) << x.name;
    EXPECT_EQ(x.u, y.u) << x.name;
    EXPECT_EQ(x.cut, y.cut) << x.name;
    EXPECT_EQ(x.effort, y.effort) << x.name;
    EXPECT_EQ(x.independent, y.independent) << x.name;
  }
  ASSERT_EQ(a.markers.size(), b.markers.size());
  for (std::size_t k = 0; k < a.markers.size(); ++k) {
    EXPECT_EQ(a.markers[k].name, b.markers[k].name);
    EXPECT_EQ(a.markers[k].body, b.markers[k].body) << a.markers[k].name;
    EXPECT_EQ(a.markers[k].point, b.markers[k].point) << a.markers[k].name;
  }
  ASSERT_EQ(a.forces.size(), b.forces.size());
  for (std::size_t k = 0; k < a.forces.size(); ++k) {
    ASSERT_EQ(a.forces[k].element.index(), b.forces[k].element.index()) << "force #" << k + 1;
    std::visit(
        [&](const auto& x) {
          using E = std::decay_t<decltype(x)>;
          const auto& y = std::get<E>(b.forces[k].element);
          EXPECT_TRUE(fields(x) == fields(y)) << "force #" << k + 1;
          if constexpr (std::is_same_v<E, loopdyn::JointPdSpec>) expect_same_function(x.target, y.target);
        },
        a.forces[k].element);
    ASSERT_EQ(a.forces[k].profile.has_value(), b.forces[k].profile.has_value()) << "force #" << k + 1;
    if (a.forces[k].profile) expect_same_function(*a.forces[k].profile, *b.forces[k].profile);
  }
  ASSERT_EQ(a.couplings.size(), b.couplings.size());
  for (std::size_t k = 0; k < a.couplings.size(); ++k) {
    const auto &x = a.couplings[k], &y = b.couplings[k];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.value, y.value) << x.name;
    ASSERT_EQ(x.terms.size(), y.terms.size()) << x.name;
    for (std::size_t t = 0; t < x.terms.size(); ++t) {
      EXPECT_EQ(x.terms[t].joint, y.terms[t].joint) << x.name;
      EXPECT_EQ(x.terms[t].coefficient, y.terms[t].coefficient) << x.name;
    }
  }
  ASSERT_EQ(a.drives.size(), b.drives.size());
  for (std::size_t k = 0; k < a.drives.size(); ++k) {
    EXPECT_EQ(a.drives[k].joint, b.drives[k].joint);
    expect_same_function(a.drives[k].motion, b.drives[k].motion);
  }
  EXPECT_TRUE(b.callbacks.empty());
}

}  // namespace loopdyn::test
