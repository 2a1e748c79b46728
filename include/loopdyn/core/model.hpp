// Model: built once from a Mechanism, immutable afterwards. Spanning tree from ground, loop-closing
// (cut) joints, bodies numbered depth-first so that parent[i] < i and the subtree of body i is the
// index range [i, i + subtree_size[i]), joint coordinate layout (nq >= nv), resolved force
// elements and markers, then the loop structure (loop_structure.hpp: constraint rows, structural
// rank, aggregation), built once. Every formulation takes `const Model&`.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "loopdyn/core/joints.hpp"
#include "loopdyn/core/mechanism.hpp"

namespace loopdyn {

/// A joint of the spanning tree or a loop-closing joint, resolved to model body indices.
struct ModelJoint {
  std::string name;
  Joint joint;
  int parent = -1;                 ///< model body index, -1 = ground
  int child = -1;                  ///< model body index (for a cut joint, may be -1 = ground)
  Transform parent_frame;          ///< joint frame in the parent body frame
  Transform child_frame;           ///< joint frame in the child body frame
  bool child_frame_identity = true;
  bool parent_frame_unrotated = true;  ///< parent_frame.R is the identity (saves a 3x3 product per sweep)
  std::string where;
  bool independent = false;        ///< tree joint whose speeds the user wants independent
  /// k in 0..5 when the joint's motion subspace is the unit vector e_k in the child body frame
  /// (revolute or prismatic along a frame axis, child frame identity), else -1: the ABA then
  /// reads U = Ia S as a column of Ia (tree_dynamics.cpp).
  int unit_axis = -1;
};

struct ModelMarker {
  std::string name;
  int body = -1;
  Vec3 point = Vec3::Zero();
};

/// Force element resolved to indices. Kinds mirror mechanism.hpp's *Spec types.
struct ModelForce {
  enum class Kind { joint_spring_damper, point_spring_damper, joint_force, body_force, body_torque, joint_pd };
  Kind kind;
  int joint = -1;                    ///< tree joint = body index (joint elements)
  int body1 = -1, body2 = -1;        ///< body indices, -1 = ground
  Vec3 point1 = Vec3::Zero(), point2 = Vec3::Zero();
  Vec3 vector = Vec3::Zero();        ///< force or torque (world frame)
  VecX value;                        ///< joint_force values (nv of the joint)
  double stiffness = 0.0, damping = 0.0, rest = 0.0;
  /// joint_force, body_force, body_torque: value or vector times profile(t); none = constant.
  /// joint_pd: the target q*(t).
  std::optional<TimeFunction> profile;
  double effort = std::numeric_limits<double>::infinity();  ///< joint_pd: output clamped to ±effort
  std::string label;                 ///< e.g. "force #2 (joint_force on 'crank')", for messages
};

/// Linear coupling of one-coordinate tree joints: Σ coefficient · q[q_index] = value.
struct ModelCoupling {
  struct Term {
    int joint = -1;              ///< tree joint (= body index)
    int q_index = -1, v_index = -1;
    double coefficient = 0.0;
  };
  std::string name;
  std::vector<Term> terms;
  /// Σ c q = value(t): a constant for a gear or linear coupling, the prescribed motion of a drive.
  TimeFunction value;
  bool drive = false;  ///< from `drives:`: name "drive.<joint>", one term of coefficient 1
};

struct LoopStructure;  // loop_structure.hpp

struct Model {
  std::string name;
  Vec3 gravity = Vec3::Zero();

  // Topology and bodies, depth-first order (parent[i] < i).
  int nbodies = 0;
  std::vector<std::string> body_name;   ///< (nbodies)
  std::vector<int> parent;              ///< (nbodies) parent body, -1 = ground
  std::vector<int> subtree_size;        ///< (nbodies) bodies in the subtree rooted at i, i included
  std::vector<Mat6> inertia;            ///< (nbodies) spatial inertia about the body frame origin
  std::vector<double> mass;             ///< (nbodies)
  std::vector<Vec3> com;                ///< (nbodies) centre of mass in the body frame
  std::vector<int> mechanism_body;      ///< (nbodies) index in Mechanism::bodies

  // Tree joints: joint i connects parent[i] to body i.
  std::vector<ModelJoint> joints;       ///< (nbodies)
  std::vector<int> q_index, v_index;    ///< (nbodies) first coordinate / speed of joint i
  std::vector<int> nq_joint, nv_joint;  ///< (nbodies)
  int nq = 0, nv = 0;
  std::vector<int> v_body;              ///< (nv) body whose joint owns speed k

  // Loop-closing joints (cut-edges of the joint graph), in mechanism order.
  std::vector<ModelJoint> loop_joints;

  std::vector<ModelCoupling> couplings;  ///< coordinate couplings (gears, linear)

  std::vector<ModelMarker> markers;
  std::vector<ModelForce> forces;
  std::vector<ForceCallback> callbacks;

  VecX q0, u0;                          ///< (nq), (nv) initial state from the mechanism

  /// Degrees of freedom by the Grübler–Kutzbach count: 6·nbodies − Σ over all joints (tree and
  /// loop-closing) of (6 − joint dof). Ignores redundancy and special geometry.
  int dof_gruebler = 0;

  /// The loop structure (constraint rows, structural rank, aggregation), built by build() after
  /// the tree and shared by copies of the model.
  std::shared_ptr<const LoopStructure> loop_structure;

  /// The tree, then its LoopStructure.
  static Model build(const Mechanism& mechanism);

  /// *loop_structure; throws std::logic_error for a model not made by build().
  const LoopStructure& loops() const;

  /// True when there are constraints beyond the tree: loop-closing joints or couplings.
  bool has_loops() const { return !loop_joints.empty() || !couplings.empty(); }
  int body_index(std::string_view name) const;   ///< -1 for ground; throws ModelError if unknown
  int joint_index(std::string_view name) const;  ///< tree joint (= its child body); throws if unknown

  /// Neutral coordinates (identity quaternions, zeros).
  VecX neutral_q() const;
  /// q̇ from (q, u) for every joint (quaternion rates for spherical and free joints).
  void qdot(const VecX& q, const VecX& u, Eigen::Ref<VecX> qd) const;
  /// Re-normalizes every quaternion in q.
  void normalize(Eigen::Ref<VecX> q) const;
  /// Column names of q and u in CSV order: q.<joint>[.<i>] ... then u.<joint>[.<i>].
  std::vector<std::string> coordinate_names() const;
  /// Appends the speeds of tree joint `body` (v_index[body] .. + nv_joint[body] − 1) to out.
  void append_speeds(int body, std::vector<int>& out) const {
    for (int k = 0; k < nv_joint[body]; ++k) out.push_back(v_index[body] + k);
  }
  /// The CSV names of the given speeds (u.<joint>[.<i>]), comma-separated, for messages.
  std::string speed_names(const std::vector<int>& speeds) const;
  /// Speed k by its joint, as the CLI and Python name independent speeds: <joint>[.<i>] (its CSV
  /// column without "u.").
  std::string speed_name(int k) const;
};

/// Names for messages, quoted and comma-separated, the first `shown` named and the others counted:
/// "'C1', 'C2', 'C3', 'C4' and 36 more".
std::string quoted_list(const std::vector<std::string>& names, std::size_t shown = 4);

/// Moves q by the speed-space increment du (nv) along the exact flow of the constant speeds du
/// over unit time, joint by joint:
///  * revolute, prismatic, cylindrical, universal, planar (u = q̇): q += du;
///  * spherical (du = rotation vector in the child joint frame): q ← q ⊗ exp(½ du), so that
///    R(q) ← R(q) · Rot(du), exactly, and q stays a unit quaternion;
///  * free (du = [v; ω] in the child joint frame): the SE(3) exponential,
///    p ← p + R(q) V(ω) v, R ← R Rot(ω), V(ω) = 1 + (1 − cos θ)/θ² ω× + (θ − sin θ)/θ³ (ω×)²,
///    θ = |ω| (for ω = 0: p ← p + R v).
/// To first order in du this is q + Model::qdot(q, du). q (nq) is changed in place.
void integrate_q(const Model& model, Eigen::Ref<VecX> q, const VecX& du);
/// integrate_q for tree joint i alone, du_i pointing at its nv_joint[i] speed increments.
void integrate_joint_q(const Model& model, Eigen::Ref<VecX> q, int i, const double* du_i);

}  // namespace loopdyn
