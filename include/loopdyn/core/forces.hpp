// Applied forces (force elements, user callbacks) and energy.
#pragma once

#include "loopdyn/core/kinematics.hpp"

namespace loopdyn {

/// Workspace for evaluating the model's force elements.
struct ForceData {
  explicit ForceData(const Model& model);
  AppliedForces applied;  ///< tau (nv) and f_world (6 x nbodies)
  Mat6X f_body;           ///< (6 x nbodies) the same body forces in body frames, for the tree sweeps
  double power = 0.0;     ///< τ·u + Σ f·v: the power of these forces at the state they were evaluated at
};

/// Evaluates every force element and callback at time t; kinematics (positions and velocities)
/// must be current for (q, u). Fills d.applied, d.f_body and d.power. Gravity is not included (the tree
/// algorithms apply it as a base acceleration).
void evaluate_forces(const Model& model, const KinematicsData& kin, double t, const VecX& q, const VecX& u,
                     ForceData& d);

struct Energy {
  double kinetic = 0.0;
  double gravity = 0.0;  ///< −Σ m g·c (zero at the world origin)
  double springs = 0.0;  ///< joint and point springs
  double total() const { return kinetic + gravity + springs; }
};
/// Energy from current kinematics (positions and velocities).
Energy energy(const Model& model, const KinematicsData& kin, const VecX& q);

}  // namespace loopdyn
