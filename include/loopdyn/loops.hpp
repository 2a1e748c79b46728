// Loop-closing joints as constraints on the tree coordinates. A loop-closing joint J with parent
// joint frame Fp (on its parent body) and child joint frame Fc (on its child body) allows the
// relative motion of Fc with respect to Fp that J's motion subspace spans; the velocity-level
// constraint keeps the other 6 − dof(J) components of the relative spatial velocity at zero.
#pragma once

#include "loopdyn/kinematics.hpp"

namespace loopdyn {

/// Constraint rows a loop-closing joint contributes at velocity level: 6 − its number of speeds.
int loop_rows(const ModelJoint& joint);
/// Σ loop_rows over the model's loop-closing joints.
int loop_rows(const Model& model);

/// Velocity-level loop Jacobian G (loop_rows(model) x nv): row block of loop joint k holds the
/// constrained components of the relative spatial velocity of Fc w.r.t. Fp, in Fc's axes, so
/// that G u = 0 on the constraint manifold. Positions must be current in `kin`. Overwrites G.
void loop_jacobian(const Model& model, const KinematicsData& kin, Eigen::Ref<MatX> G);

struct RankInfo {
  int rank = 0;
  int dof = 0;          ///< nv − rank
  double tolerance = 0; ///< singular-value threshold used
};
/// Rank of the loop Jacobian at q by SVD; singular values below
/// max(rows, cols) · ε · σ_max count as zero (the LAPACK/NumPy matrix_rank rule).
RankInfo loop_rank(const Model& model, const VecX& q);

}  // namespace loopdyn
