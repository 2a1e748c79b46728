// Loop-closure constraints on the tree coordinates.
//
// A loop-closing joint J joins frame Fp (on its parent body) to frame Fc (on its child body) and
// allows the relative motion its type allows. Its 6 − dof(J) scalar constraints are written as two
// kinds of rows whose derivatives are exact (so that Φ, G = ∂Φ/∂q·(q̇ ↦ u) and γ are mutually
// consistent and checkable by finite differences). With Rp, Rc the world rotations of Fp and Fc,
// d = x_c − x_p the vector between their origins, and u, w unit vectors in joint-frame axes:
//   dot   Φ = (Rp u)·(Rc w)   keeps w on the Fc side perpendicular to u on the Fp side;
//         Φ̇ = (a × b)·(ω_c − ω_p) with a = Rc w, b = Rp u;
//   along Φ = (Rp u)·d        keeps Fc's origin off direction u of Fp;
//         Φ̇ = b·(v_c − v_p) + (b × d)·ω_p with b = Rp u.
// Rows per type: revolute 3 along + 2 dot (axis a kept: b1·a, b2·a, b ⟂ a); prismatic 2 along
// (⟂ axis) + 3 dot (rotation locked); cylindrical 2 + 2; universal 3 along + 1 dot (axis ⟂ axis2);
// spherical 3 along; planar 1 along (z) + 2 dot (z kept); fixed 3 + 3; free none.
// Coordinate couplings (gears, linear couplings; Jain 002 eq 37) add one row each:
//   coupling Φ = Σ c_k q_k − value, G = the constant c_k, γ = 0.
// Accelerations: G u̇ = γ, γ = −(Ġ u) (paper 001 eq 4-5 with u for q̇).
//
// Redundant rows (dependent at every closed configuration sampled) are found once per model by
// structural_reduction (structural_rank.hpp) and dropped: the formulations see only the kept rows,
// which the model's LoopStructure (loop_structure.hpp) holds, and the methods that solve with them
// choose a geometrically redundant loop's rows again along the motion (row_choice.hpp).
#pragma once

#include <string>
#include <vector>

#include "loopdyn/core/kinematics.hpp"

namespace loopdyn {

struct ConstraintRow {
  enum class Kind { dot, along, coupling };
  Kind kind = Kind::along;
  int loop = 0;               ///< index in Model::loop_joints, or in Model::couplings (coupling rows)
  Vec3 u = Vec3::UnitX();     ///< joint-frame direction on the Fp side
  Vec3 w = Vec3::UnitX();     ///< joint-frame direction on the Fc side (dot rows)
  std::string label;          ///< e.g. "C.along.x", for messages
};

/// A set of constraint rows: those evaluated (kept) and those found redundant (dropped). A model's
/// sets are built once, in its LoopStructure (loop_structure.hpp). Among the dropped rows, the
/// alternates are dependent on the kept ones where the check looked but not zero there (the
/// redundancy of a Bennett or Bricard loop, which comes from its closed geometry): along the motion
/// a loop's kept rows can lose rank while its rows together keep it, and a formulation's RowChoice
/// (row_choice.hpp) then puts an alternate in a kept row's place. The other dropped rows are zero
/// at every configuration the check reached (the out-of-plane rows of a planar loop).
class Constraints {
 public:
  Constraints() = default;
  explicit Constraints(std::vector<ConstraintRow> kept, std::vector<ConstraintRow> dropped = {},
                       std::vector<ConstraintRow> alternates = {});
  int rows() const { return static_cast<int>(rows_.size()); }     ///< m, kept rows
  const std::vector<ConstraintRow>& kept() const { return rows_; }
  const std::vector<ConstraintRow>& dropped() const { return dropped_; }  ///< redundant
  const std::vector<ConstraintRow>& alternates() const { return alternates_; }  ///< the dropped rows not zero
  /// Puts rows[i] in kept row places[i]'s place (rows of the loop joint whose kept rows these
  /// places are, as many), and the rows that leave the kept ones among the dropped rows and the
  /// alternates, in the places of those that enter: RowChoice's exchange, on a formulation's own
  /// copy. Allocates (an exchange is rare).
  void exchange(const std::vector<int>& places, std::vector<ConstraintRow> rows);
  /// Rows of every loop joint (6 − dof each) and coupling, before the redundancy check.
  static std::vector<ConstraintRow> all_rows(const Model& model);

 private:
  std::vector<ConstraintRow> rows_, dropped_, alternates_;
};

/// Workspace for evaluating any set of constraint rows of the model, sized at construction.
struct ConstraintData {
  explicit ConstraintData(const Model& model);
  struct Frame {          // world kinematics of one joint frame
    Mat3 R = Mat3::Identity();
    Vec3 x = Vec3::Zero(), w = Vec3::Zero(), v = Vec3::Zero();  ///< origin, ω, origin velocity
    Vec3 dw0 = Vec3::Zero(), a0 = Vec3::Zero();  ///< ω̇ and origin acceleration at u̇ = 0
  };
  std::vector<Frame> fp, fc;   ///< (loops) parent-side and child-side frames
  std::vector<Vec6> a0;        ///< (nbodies) body accelerations at u̇ = 0 (velocity products only)
  Mat6X S_world;               ///< (6 x nv) a block's path speeds' motion columns [ω; v_O], world axes
  Eigen::Matrix3Xd point_world;  ///< (3 x nv) velocity of one loop's child-frame origin x_c per path column: v_O + ω × x_c
};

/// The time argument of the methods that do not take drives (MethodInfo::drives, checked before
/// they are made): without drives no row depends on t.
inline constexpr double kWithoutDrives = 0.0;

/// Φ (m) at time t (the drives' rows depend on it). Positions must be current in kin.
void constraint_position(const Model& model, const Constraints& cons, const KinematicsData& kin, double t,
                         ConstraintData& d, Eigen::Ref<VecX> phi);
/// ∂Φ/∂t (m) at t: −ḟ(t) on a drive's row (Φ = q − f(t)), 0 on the others. The constraints hold at
/// velocity level when G u + Φ_t = 0 (constraint_velocity gives G u).
void constraint_time_rate(const Model& model, const Constraints& cons, double t, Eigen::Ref<VecX> phi_t);
/// G (m x nv), Φ̇ = G u. Positions must be current. Overwrites G.
void constraint_jacobian(const Model& model, const Constraints& cons, const KinematicsData& kin, ConstraintData& d,
                         Eigen::Ref<MatX> G);
/// Φ̇ = G u (m) from the world velocities of each row's two joint frames, without forming G: O(1)
/// per row however long the loop's tree path (u is read by coupling rows only). Positions and
/// velocities for u must be current in kin.
void constraint_velocity(const Model& model, const Constraints& cons, const KinematicsData& kin, ConstraintData& d,
                         const Eigen::Ref<const VecX>& u, Eigen::Ref<VecX> phidot);
/// The generalized force −Gᵀλ of the kept rows as forces on the bodies, without forming G (the
/// wrench of each row kind: reactions.hpp). loop_wrench (6 x loop joints) is overwritten with the
/// wrench [moment; force] on each loop joint's child side, world axes, about the origin of its
/// child frame; it is added to fext (6 x nbodies, body frames) on the child body and subtracted on
/// the parent body. Coupling rows are joint forces −c λ, subtracted from *tau (skipped when tau is
/// null). O(1) per row and per loop joint. Frames must be current (constraint_position,
/// constraint_velocity).
void constraint_forces(const Model& model, const Constraints& cons, const KinematicsData& kin,
                       const ConstraintData& d, const VecX& lambda, Mat6X& loop_wrench, Mat6X& fext, VecX* tau);
/// γ (m) with G u̇ = γ at t (a drive's row: f̈(t)). Positions and velocities must be current.
void constraint_bias(const Model& model, const Constraints& cons, const KinematicsData& kin, double t,
                     ConstraintData& d, Eigen::Ref<VecX> gamma);

/// Part of the kept rows with the bodies whose tree-joint speeds they act on: the rows of one
/// aggregated body of constraint embedding (002 §4.2, whose loops close within its own bodies and
/// the body they hang from), or every row of the model. A block's G has the speeds of its bodies
/// as columns, in body order.
struct ConstraintBlock {
  std::vector<int> rows;          ///< indices into Constraints::kept()
  std::vector<int> loops;         ///< loop joints with a row in `rows`, ascending
  std::vector<int> bodies;        ///< ascending (parents before children)
  std::vector<int> first_column;  ///< (bodies) column of each body's first speed
  int columns = 0;                ///< number of speeds of `bodies`
  struct PathBody {
    int body;     ///< index into `bodies`
    double sign;  ///< +1 on the loop joint's child side of the tree path, −1 on its parent side
  };
  std::vector<std::vector<PathBody>> paths;  ///< (loops) the bodies on each loop joint's tree path
  std::vector<int> path_bodies;              ///< indices into `bodies` on some path, ascending
  std::vector<int> row_loop;                 ///< (rows) index into `loops` of a loop-joint row, −1 for a coupling

  /// Every kept row on every body: G is the model's m x nv Jacobian.
  static ConstraintBlock whole(const Model& model, const Constraints& cons);
  /// The kept rows of the given loop joints and couplings on `bodies` (ascending), which must hold
  /// every tree joint those rows act on.
  static ConstraintBlock of(const Model& model, const Constraints& cons, std::vector<int> bodies,
                            const std::vector<int>& loop_joints, const std::vector<int>& couplings);
  /// Column of body's first speed (the body must be in the block).
  int column_of(int body) const;
  /// The global speed index of each column.
  std::vector<int> speeds(const Model& model) const;

 private:
  void find_paths(const Model& model, const Constraints& cons);  ///< paths, path_bodies, row_loop
};

/// Φ and G of the block's rows (G: rows x columns, overwritten); coupling rows read kin.q.
/// Positions of the block's bodies and of the bodies its loop joints attach to must be current.
void block_position_jacobian(const Model& model, const Constraints& cons, const ConstraintBlock& block,
                             const KinematicsData& kin, double t, ConstraintData& d, Eigen::Ref<VecX> phi,
                             Eigen::Ref<MatX> G);
/// γ of the block's rows. Φ of a block depends only on the block's coordinates (its loops close
/// within it and the body it hangs from, and are invariant to rigid motions of that body), so the
/// accelerations at u̇ = 0 are taken with zero spatial acceleration of the bodies outside the block:
/// the result equals constraint_bias's rows. Positions and velocities must be current.
void block_bias(const Model& model, const Constraints& cons, const ConstraintBlock& block, const KinematicsData& kin,
                double t, ConstraintData& d, Eigen::Ref<VecX> gamma);

struct RankInfo {
  int rank = 0;
  int dof = 0;           ///< nv − rank
  double tolerance = 0;  ///< threshold used (singular value, or the sparse QR's pivot)
};
/// Rank of the constraint Jacobian (kept rows) at q by SVD; singular values below
/// max(m, nv) · ε · σ_max count as zero (the LAPACK/NumPy matrix_rank rule). Past
/// m · nv · min(m, nv) = 2e7, where the SVD takes seconds to minutes, by the sparse QR of Gᵀ of the
/// structural check instead, pivots below 1e-10 · max(1, max|G|) counting as zero.
RankInfo constraint_rank(const Model& model, const Constraints& cons, const VecX& q);

/// The owner of a row, for messages: "loop joint 'C' (row C.along.x)" or "constraint 'gear'".
std::string row_owner(const Model& model, const ConstraintRow& row);
/// The loop joints and couplings of the kept rows with weight(r) >= 10 % of the largest, quoted
/// and comma-separated, the first four named and the others counted ("'C1', 'C2' and 3 more"):
/// the loops that dominate a null space in singular-configuration messages.
std::string dominant_loops(const Model& model, const Constraints& cons, const VecX& weight);
/// Scale of ‖G u‖∞ in velocity tolerances: max(1, max|G| ‖u‖∞), since G u is a difference of
/// terms of that size (assembly, projection, consistency check).
double velocity_scale(const MatX& G, const Eigen::Ref<const VecX>& u);

}  // namespace loopdyn
