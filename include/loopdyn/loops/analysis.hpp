// Analysis of a mechanism at a given state, for control and design: poses, velocities and
// Jacobians of body frames and markers, the mass matrix, the loop Jacobian and its null space, the
// motion of the whole closed mechanism from the motion of chosen joints, and inverse dynamics of
// the closed mechanism: the forces of the actuated joints that produce a given motion.
//
// Inverse dynamics of a closed mechanism. With b = M(q) u̇ + C(q, u) − Q(t, q, u) (the RNEA at
// u̇ with the applied forces of the model as external ones, gravity in C), the equations of motion
// the formulations integrate read (001 eq 8-10, with −Gᵀλ the loops' generalized force as in
// constraints.hpp)
//     b = B τ − Gᵀ λ,        B (nv x na): a 1 at each actuated speed.
// Projected on an orthonormal basis N (nv x d) of the null space of the loop Jacobian G (G N = 0;
// the partial velocities of the null-space method, 001 §2.3), λ drops out:
//     (Nᵀ B) τ = Nᵀ b        (d equations in the na actuated forces),
// solved by a complete orthogonal decomposition of Nᵀ B (rank r): na = d = r gives the one τ;
// na > r (over-actuated) gives the least-norm τ of the many that produce the motion
// (InverseDynamicsResult::least_norm); r < d (under-actuated) has a solution only for motions the
// actuators can hold, which is checked (an error otherwise). λ follows by least squares from
// Gᵀ λ = B τ − b. Cost: an SVD of G, O(m nv²): an analysis call, not a per-step path.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "loopdyn/core/forces.hpp"
#include "loopdyn/core/tree_dynamics.hpp"
#include "loopdyn/loops/constraints.hpp"

namespace loopdyn {

/// Axes a frame Jacobian's rows are expressed in: the frame's own (`local`) or the world's
/// (`world`, about the same frame origin).
enum class Axes { local, world };

/// The motion of every coordinate of a closed mechanism at one instant.
struct ClosedMotion {
  VecX q, u, udot;  ///< (nq), (nv), (nv)
};

struct InverseDynamicsResult {
  std::vector<std::string> names;  ///< the actuated speeds (u.<joint>[.<i>], the CSV's names)
  VecX tau;                        ///< (na) their forces or torques [N or N·m]
  /// (m) multipliers of the kept loop rows, −Gᵀλ the loops' generalized force (as a formulation's).
  VecX multipliers;
  int dof = 0;   ///< d, the mechanism's degrees of freedom at q (nv − rank G)
  int rank = 0;  ///< r, the degrees of freedom the actuators drive (rank of Nᵀ B)
  /// Over-actuated (na > r): tau is the least-norm of the forces that produce the motion.
  bool least_norm = false;
};

/// The analysis functions of a model, with their workspaces sized once; each call allocates only
/// what it returns. Names are those of bodies, tree joints and markers; unknown ones, and states of
/// the wrong size or not finite, throw std::invalid_argument naming them.
class Analysis {
 public:
  explicit Analysis(const Model& model);

  /// Pose of a body's frame in the world (rotation and origin, Transform's convention).
  Transform body_pose(const VecX& q, std::string_view body);
  Vec3 marker_position(const VecX& q, std::string_view marker);
  Vec3 marker_velocity(const VecX& q, const VecX& u, std::string_view marker);
  /// [ω; v] (6 x nv) of the frame `frame` fixed to `body` (identity: the body frame) in the given
  /// axes, v the velocity of the frame's origin: [ω; v] = J u.
  Mat6X frame_jacobian(const VecX& q, std::string_view body, const Transform& frame = Transform(), Axes axes = Axes::local);
  /// (3 x nv) world velocity of a marker = J u.
  Eigen::Matrix<double, 3, Eigen::Dynamic> marker_jacobian(const VecX& q, std::string_view marker);
  /// M(q) (nv x nv), the CRBA's.
  MatX mass_matrix(const VecX& q);
  /// G(q) (m x nv) of the kept loop rows (drives' rows included), Φ̇ = G u + Φ_t.
  MatX loop_jacobian(const VecX& q);
  /// An orthonormal basis (nv x d) of the null space of G(q): the speeds the loops allow. The rank
  /// rule is constraint_rank's.
  MatX loop_null_space(const VecX& q);
  /// The whole mechanism's (q, u, u̇) at t from the coordinates, speeds and accelerations of
  /// `joints` (tree joints, in that order: nq, nv, nv of each), which must be independent and fix
  /// every degree of freedom; the other coordinates start from q_guess and are found by assembly
  /// (001 eq 12-14, assembly.hpp), on the branch its Newton iteration reaches from there (along a
  /// motion, give the previous instant's q), the accelerations from G u̇ = γ(t). Throws std::runtime_error
  /// when the loops cannot close there or the joints do not fix the motion, naming them.
  ClosedMotion complete_motion(double t, const VecX& q_guess, const std::vector<std::string>& joints, const VecX& q,
                               const VecX& u, const VecX& udot);
  /// The forces of the `actuated` tree joints that make the closed mechanism move with (q, u, u̇) at
  /// t (see the file comment). (q, u, u̇) must satisfy the loops to consistency_tolerance at position,
  /// velocity and acceleration level (complete_motion makes such a motion); std::runtime_error
  /// otherwise, and for a motion the actuators cannot produce (under-actuated).
  InverseDynamicsResult inverse_dynamics(double t, const VecX& q, const VecX& u, const VecX& udot,
                                         const std::vector<std::string>& actuated);

  const Model& model() const { return model_; }

 private:
  void at(const VecX& q);
  void at(const VecX& q, const VecX& u);
  int body(std::string_view name) const;
  const ModelMarker& marker(std::string_view name) const;
  /// The speeds of the named tree joints, in order; `what` names the argument in messages.
  std::vector<int> speeds_of(const std::vector<std::string>& joints, const char* what) const;
  /// G at the current positions.
  const MatX& jacobian();

  const Model& model_;
  const Constraints& constraints_;
  KinematicsData kin_;
  ConstraintData constraint_data_;
  CrbaData crba_;
  RneaData rnea_;
  ForceData forces_;
  MatX G_;
};

}  // namespace loopdyn
