// Joint reaction forces: the spatial force that the parent side of every joint (tree joints and
// loop-closing joints) exerts on its child side, expressed in the child joint frame (the joint
// frame on the child body, moment about its origin).
//
// Loop-closing joints, from the multipliers λ (kept rows) of M u̇ + Gᵀλ = Q: the constraint
// generalized force is −Gᵀλ. Each row's Φ̇ is linear in the world twists of the joint frames Fp
// and Fc (constraints.hpp), so each row is the work of a wrench pair acting at Fc's origin x_c:
//   dot   Φ̇ = n·(ω_c − ω_p), n = a × b          → moment −λn on the child side, +λn on the parent;
//   along Φ̇ = b·(v_c − v_p) + (b × d)·ω_p       → force −λb at x_c on the child side, +λb at x_c on
//                                                  the parent (about x_p: moment −λ b × d);
// so the reaction on the child is [n; f] = [−Σ_dot λ n; −Σ_along λ b] about x_c, and the parent gets
// the opposite wrench at the same point (action and reaction). Structurally redundant rows
// (dropped when the model is built) and rows redundant at run time carry λ = 0 or a minimum-norm
// share: the split of a redundant reaction between joints is statically indeterminate, and
// loopdyn reports the minimum-norm one (for a planar four-bar: no out-of-plane reaction at the
// loop joint; the tree joints carry it). Coupling rows (gears, linear couplings) act as joint
// torques −cλ on their tree joints, so they appear in those joints' moments about their axes.
//
// Tree joints, by the recursive Newton-Euler pass (Featherstone Table 5.1, `rnea`) at (q, u, u̇)
// with the applied body forces and the loop-closure wrenches as external forces: the force f_i
// transmitted across joint i (RneaData::f, body frame) is the subtree's inertial wrench minus the
// external ones, re-expressed in the child joint frame. It includes the joint's own driving force
// along its free directions (Sᵀf = τ of the joint: springs, dampers, applied joint forces, gears).
#pragma once

#include <string>
#include <vector>

#include "loopdyn/loops/constraints.hpp"
#include "loopdyn/core/forces.hpp"
#include "loopdyn/core/tree_dynamics.hpp"

namespace loopdyn {

/// Reaction forces of every joint, with every workspace sized at construction.
class Reactions {
 public:
  /// Keeps a reference to `constraints` (usually model.loops().constraints).
  Reactions(const Model& model, const Constraints& constraints);
  Reactions(const Model&, Constraints&&) = delete;

  /// Reactions at (t, q, u) for the accelerations u̇ (nv) and the multipliers λ of the kept
  /// constraint rows (Formulation::multipliers(); empty for a model without constraints).
  /// Throws std::invalid_argument for wrong sizes.
  void compute(double t, const VecX& q, const VecX& u, const VecX& udot, const VecX& lambda);

  /// (6 x (nbodies + loop joints)) spatial forces [moment; force] in the child joint frames:
  /// column i < nbodies is tree joint i, column nbodies + k is Model::loop_joints[k].
  const Mat6X& wrenches() const { return wrenches_; }
  /// (6 x nbodies) external forces on the bodies used by the Newton-Euler pass, body frames:
  /// applied forces plus loop-closure wrenches.
  const Mat6X& body_forces() const { return fext_; }
  /// (nv) Sᵀf of every tree joint: the generalized force the joints carry along their free
  /// directions. Equals the applied joint forces minus the coupling terms (G_couplingᵀλ) when u̇ and
  /// λ satisfy the equations of motion.
  const VecX& joint_forces() const { return tau_; }

  /// CSV column names: reaction.<joint>.fx fy fz tx ty tz for the tree joints, then the loop joints.
  static std::vector<std::string> column_names(const Model& model);
  /// Writes the columns of column_names() (force first, then moment) into out (6 x joints).
  void write_columns(Eigen::Ref<VecX> out) const;

 private:
  void loop_wrenches(const VecX& lambda);

  const Model& model_;
  const Constraints& constraints_;
  KinematicsData kin_;
  ConstraintData cons_data_;
  ForceData forces_;
  RneaData rnea_;
  VecX phi_;          ///< (m) Φ (evaluated for the joint frames it updates)
  VecX tau_;          ///< (nv)
  Mat6X fext_;        ///< (6 x nbodies)
  Mat6X loop_world_;  ///< (6 x loop joints) reaction on the child side, world axes, about x_c
  Mat6X wrenches_;    ///< (6 x (nbodies + loop joints))
};

}  // namespace loopdyn
