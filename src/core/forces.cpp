// Force elements (mechanism.hpp) evaluated into generalized forces and world-frame body forces,
// and the mechanism's energy.
#include "loopdyn/core/forces.hpp"

#include <algorithm>
#include <stdexcept>

#include "loopdyn/core/errors.hpp"

namespace loopdyn {

namespace {

// A load's profile (a controller's target) at t; one that fails there (a table that ends, a value
// that is not finite) names the force.
TimeValue profile_at(const ModelForce& f, double t) {
  try {
    return (*f.profile)(t);
  } catch (const std::runtime_error& e) {
    throw InputError(f.label + (f.kind == ModelForce::Kind::joint_pd ? ", its target: " : ", its profile: ") + e.what());
  }
}

// Spatial force about the world origin of a world force F applied at world point x: [x × F; F].
Vec6 force_at(const Vec3& x, const Vec3& F) {
  Vec6 f;
  f << x.cross(F), F;
  return f;
}

void add_body_force(AppliedForces& out, int body, const Vec6& f_world) {
  if (body >= 0) out.f_world.col(body) += f_world;
}

// Point spring-damper: length L = |x2 − x1|, tension T = k (L − rest) + c L̇ pulls the points
// together. Below 1e-12 m the direction is undefined and no force acts.
void point_spring_damper(const ModelForce& f, const KinematicsData& kin, AppliedForces& out) {
  const Vec3 x1 = point_position(kin, f.body1, f.point1), x2 = point_position(kin, f.body2, f.point2);
  const Vec3 d = x2 - x1;
  const double L = d.norm();
  if (L < 1e-12) return;
  const Vec3 n = d / L;
  const double Ldot = n.dot(point_velocity(kin, f.body2, f.point2) - point_velocity(kin, f.body1, f.point1));
  const double T = f.stiffness * (L - f.rest) + f.damping * Ldot;
  add_body_force(out, f.body1, force_at(x1, T * n));
  add_body_force(out, f.body2, force_at(x2, -T * n));
}

}  // namespace

ForceData::ForceData(const Model& model)
    : applied{VecX::Zero(model.nv), Mat6X::Zero(6, model.nbodies)}, f_body(Mat6X::Zero(6, model.nbodies)) {}

void evaluate_forces(const Model& model, const KinematicsData& kin, double t, const VecX& q, const VecX& u,
                     ForceData& d) {
  AppliedForces& out = d.applied;
  out.tau.setZero();
  out.f_world.setZero();
  for (const ModelForce& f : model.forces) {
    if (f.kind == ModelForce::Kind::joint_pd) {
      // τ = kp (q* − q) + kd (q̇* − q̇), clamped to ±effort.
      const TimeValue target = profile_at(f, t);
      const int qi = model.q_index[f.joint], vi = model.v_index[f.joint];
      const double tau = f.stiffness * (target.value - q(qi)) + f.damping * (target.rate - u(vi));
      out.tau(vi) += std::clamp(tau, -f.effort, f.effort);
      continue;
    }
    const double scale = f.profile ? profile_at(f, t).value : 1.0;
    switch (f.kind) {
      case ModelForce::Kind::joint_spring_damper: {
        // τ = k (rest − q) − c q̇ on a one-coordinate joint.
        const int qi = model.q_index[f.joint], vi = model.v_index[f.joint];
        out.tau(vi) += f.stiffness * (f.rest - q(qi)) - f.damping * u(vi);
        break;
      }
      case ModelForce::Kind::point_spring_damper: point_spring_damper(f, kin, out); break;
      case ModelForce::Kind::joint_force: out.tau.segment(model.v_index[f.joint], f.value.size()) += scale * f.value; break;
      case ModelForce::Kind::body_force:
        add_body_force(out, f.body1, force_at(point_position(kin, f.body1, f.point1), scale * f.vector));
        break;
      case ModelForce::Kind::body_torque:
        add_body_force(out, f.body1, (Vec6() << scale * f.vector, Vec3::Zero()).finished());
        break;
      case ModelForce::Kind::joint_pd: break;  // above
    }
  }
  for (const ForceCallback& cb : model.callbacks) cb(t, model, kin, q, u, out);
  // Body forces into body frames for the tree sweeps: f_body = X_world⁻* f_world.
  for (int i = 0; i < model.nbodies; ++i) d.f_body.col(i) = kin.X_world[i].inv_act_force(out.f_world.col(i));
  d.power = out.tau.dot(u);
  for (int i = 0; i < model.nbodies; ++i) d.power += d.f_body.col(i).dot(kin.v[i]);
}

Energy energy(const Model& model, const KinematicsData& kin, const VecX& q) {
  Energy e;
  for (int i = 0; i < model.nbodies; ++i) {
    e.kinetic += 0.5 * kin.v[i].dot(model.inertia[i] * kin.v[i]);  // ½ vᵀ I v
    e.gravity -= model.mass[i] * model.gravity.dot(kin.X_world[i].apply(model.com[i]));  // −m g·c
  }
  for (const ModelForce& f : model.forces) {
    if (f.kind == ModelForce::Kind::joint_spring_damper) {
      const double dq = q(model.q_index[f.joint]) - f.rest;
      e.springs += 0.5 * f.stiffness * dq * dq;
    } else if (f.kind == ModelForce::Kind::point_spring_damper) {
      const double L = (point_position(kin, f.body2, f.point2) - point_position(kin, f.body1, f.point1)).norm();
      e.springs += 0.5 * f.stiffness * (L - f.rest) * (L - f.rest);
    }
  }
  return e;
}

}  // namespace loopdyn
