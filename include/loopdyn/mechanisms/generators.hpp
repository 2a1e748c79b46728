// Generators of the benchmark mechanisms (docs/performance.md times them) and of their
// states, as `Mechanism`s that the CLI, the tests and the benchmarks build with `Model::build`.
//
// The random streams are part of the benchmark definition: other libraries are timed on the very
// same numbers, so `SplitMix64` and the draw order below must stay bit-for-bit as written.
//
//   chain-N          N revolute bodies in series, axes cycling z, y, x (tree dynamics).
//   branched-N       N revolute bodies in a binary tree, same body data (tree dynamics).
//   ladder-L         L planar parallelogram cells stacked on each other, one loop per cell, in
//                    three spanning-tree layouts that must give the same motion.
//   spatial-ladder-L the spatial ladder of paper 000 §4.3: L + 1 posts hung from ground by Hooke
//                    joints, L rungs, one revolute loop closure per cell, 2 degrees of freedom;
//                    its variant spatial-ladder-equivalent-L (LadderMasses::equivalent) moves
//                    like the L = 1 ladder at every L (000 Fig. 10).
#pragma once

#include <cstdint>
#include <string>

#include "loopdyn/core/model.hpp"

namespace loopdyn {

/// The largest count a generator takes (cells, bodies, squares, rows x cols, four-bars, zoo
/// cases): past it a mechanism takes minutes and gigabytes to build (Model::build grows faster
/// than linearly), and a mistyped size would run until memory ran out.
inline constexpr long long kMostGenerated = 100000;
/// Throws std::invalid_argument unless 1 <= n <= kMostGenerated, naming the count as `what` (its
/// spelling in the caller's interface: "--cells" on the command line, "cells" in Python).
void require_count(long long n, const std::string& what);

/// Puts a state in the coordinates of `model` (built from m) into the tree joints' q and u, by joint
/// name, so that m starts exactly at it and a model built from m again has the state's loop
/// structure (redundant rows are decided at the initial configuration); loop-closing joints have no
/// coordinates and keep theirs. How `loopdyn generate` and Python's generators start a benchmark.
void set_initial_state(Mechanism& m, const Model& model, const VecX& q, const VecX& u);

/// splitmix64 (Steele, Lea, Flood 2014): next() = mix(s += 0x9e3779b97f4a7c15).
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next() {
    s_ += 0x9e3779b97f4a7c15ULL;
    std::uint64_t z = s_;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// lo + (hi − lo) · (next() >> 11) · 2⁻⁵³: the top 53 bits as a double in [0, 1), scaled.
  double uniform(double lo, double hi) {
    return lo + (hi - lo) * (static_cast<double>(next() >> 11) * 0x1.0p-53);
  }

 private:
  std::uint64_t s_;
};

/// A tree-dynamics benchmark state, in model coordinate order: (nq), (nv), (nv), (nv).
struct ChainState {
  VecX q, u, tau, qdd;
};

/// `chain-N`: bodies "link0".."link{N-1}", joints "joint0".."joint{N-1}". Body i has its frame at
/// its joint; joint 0 at the world origin, joint i > 0 at (0, 0, 1) in link i−1's frame; axis of
/// joint i: index 2 − (i mod 3) (z, y, x, z, ...). Each body 1 kg, centre of mass (0, 0, 0.5),
/// inertia about it diag(0.1, 0.1, 0.01). Gravity (0, 0, −9.81). Throws std::invalid_argument
/// for n < 1.
Mechanism chain_mechanism(int n);
/// State of `chain-N`: SplitMix64(12345 + N), draw q (N values), then u, then τ, then q̈, each
/// uniform(−1, 1). Model order equals listing order for the chain.
ChainState chain_state(int n);

/// `branched-N` (loopdyn's own second tree case, not one other libraries are timed on): a binary tree of N
/// revolute bodies "link0".."link{N-1}" with joints "joint0".."joint{N-1}". Body 0 hangs from
/// ground at the origin; body i > 0 hangs from body (i − 1) / 2:
///   first child  (i odd):  joint at (0, 0, 1)   in the parent frame,
///   second child (i even): joint at (0, 0.5, 1) in the parent frame;
/// joint frames parallel to the parent frame, axis of joint i cycling like the chain
/// (index 2 − (i mod 3)), body data and gravity as in `chain-N`.
Mechanism branched_tree_mechanism(int n);
/// State of `branched-N` for a model built from branched_tree_mechanism(N): SplitMix64(54321 + N),
/// draw q (N values), then u, then τ, then q̈, each uniform(−1, 1); draw k of each vector goes to
/// joint "joint{k}" (listing order), stored at that joint's model coordinate (the model numbers
/// bodies depth-first, which differs from the listing).
ChainState branched_tree_state(const Model& model);

/// Spanning-tree layouts of the planar ladder:
///   serial             lp_k ← rung_{k−1}, rung_k ← lp_k, rp_k ← rung_k (hanging); cut: bottom of
///                      rp_k with rung_{k−1} (a body and its ancestor). Listed lp, rung, rp.
///   comb               lp_k, rp_k ← rung_{k−1}; rung_k ← lp_k; cut: top of rp_k with rung_k
///                      (two cousins). Listed rp, lp, rung (depth first).
///   comb_parents_first the comb tree listed lp, rp, rung (parents first, not depth first).
enum class LadderLayout { serial, comb, comb_parents_first };

/// `ladder-L` in the x–y plane. Bodies "lp{k}", "rp{k}", "rung{k}" (left post, right post, top
/// rung of cell k; rung k−1, or ground for k = 0, is the cell's bottom). Joints are named by the
/// pin they model, the same in every layout: "lp{k}_bottom" (lp_k on rung_{k−1}), "lp{k}_top"
/// (rung_k on lp_k), "rp{k}_top" (rung_k with rp_k), "rp{k}_bottom" (rp_k with rung_{k−1}); a
/// cut joint has the rung (or ground) as parent and the post as child. All revolute about z,
/// gravity (0, −9.81, 0), links 1 m / 1 kg, centre of mass at the middle, inertia (1/12)·I₃ about
/// it, body frames parallel to the world at q = 0 with origin at the joint to the tree parent.
/// Throws std::invalid_argument for cells < 1.
Mechanism ladder_mechanism(int cells, LadderLayout layout);

/// Ladder state in model coordinates: (nq), (nv).
struct LadderState {
  VecX q, u;
};
/// The benchmark state of `ladder-L` for a model built from ladder_mechanism(cells, any layout):
/// posts of cell k at absolute angle φ_k = 0.3 + 0.2 sin k (counter-clockwise from +y), rate
/// φ̇_k = 0.5 cos k; rungs horizontal, translating. Each tree joint gets child angle − parent
/// angle (ground 0), rates likewise, so the loops close at position and velocity level.
LadderState ladder_state(const Model& model, int cells);

/// `spatial-ladder-L`, the spatial ladder of paper 000 §4.3 (figure 9 is not in our copy of the
/// paper; this geometry has its counts): N = 2L + 1 bodies, every tree joint a Hooke (universal)
/// joint, so n = 2N = 4L + 2 coordinates, one revolute loop closure per cell (L cut joints, the
/// paper's L phantom bodies), m = 4L independent constraints, 2 degrees of freedom. In the world at
/// q = 0 (x along the ladder, z up):
///   posts "post{k}", k = 0..L: frame origin at the top end, the rod running 1 m along −z of its
///       frame; joint "post{k}_top" (universal, ground → post{k}) with its frame at (k, 0, 0) in the
///       world, first axis x (in ground), second axis y (in the post);
///   rungs "rung{k}", k = 1..L: frame origin at the left end, the rod running 1 m along +x; joint
///       "rung{k}_left" (universal, post{k−1} → rung{k}) with its frame at (0, 0, −1) in post{k−1}
///       (its lower end), first axis y (in the post), second axis z (in the rung);
///   loop closure "rung{k}_right" (revolute about y, `cut: true`, parent rung{k}, child post{k}):
///       frame at (1, 0, 0) in the rung (its right end) and at (0, 0, −1) in post{k} (lower end).
/// Joint frames are parallel to the body frames; listing order post0, then for k = 1..L: post{k},
/// rung{k} with their joints. Every body is a uniform slender rod, 1 m, 1 kg, centre of mass at its
/// middle ((0, 0, −0.5) in a post, (0.5, 0, 0) in a rung), inertia about it (1/12)(I₃ − e eᵀ) +
/// 10⁻³ e eᵀ for the rod direction e (diag(1/12, 1/12, 10⁻³) for a post, diag(10⁻³, 1/12, 1/12)
/// for a rung). Gravity (0, 0, −9.81). Throws std::invalid_argument for cells < 1.
///
/// Motion. On the branch through q = 0 every post has the same orientation
/// R = Rot(x, α) Rot(y, β) and every rung is turned by Rot(x, α) (a spatial parallelogram swinging
/// in the plane turned by α about x): the ladder moves as one 2-dof spatial pendulum (§4.3) with
/// q1 = α, q2 = β the coordinates of post0_top.
///
/// Constraint rows. Each revolute closure has 5 rows (5L), but a cell closes only because its
/// axes are parallel (revolute axis parallel to both posts' y axes, equal α), so at closed
/// configurations one row per cell is dependent: the 5L rows have rank 4L (DOF 2). The dependency
/// comes from the closed geometry, not from the tree (at open configurations the rank is 4L + 1),
/// which is why the structural rank check (structural_rank.hpp) decides redundancy at closed
/// configurations: it drops one row per cell (rung{k}_right.dot.b2) and keeps 4L rows of rank 4L
/// at every L, so model.loops().constraints and every formulation built on it see the 2 DOF;
/// model.loops().unreduced has the 5L rows, of rank 4L.
///
/// Masses (000 Fig. 10: "through appropriate selection of inertia properties, all ladder systems
/// ... can be made to exhibit the same independent coordinate trajectories"):
///   uniform     every body 1 kg with the inertia above: the benchmark definition (the default;
///               name "spatial-ladder-L").
///   equivalent  every post's mass and inertia × 2/(L + 1), every rung's × 1/L (centres of mass
///               unchanged; name "spatial-ladder-equivalent-L"). The posts together then weigh
///               2 kg and the rungs 1 kg at every L, so the pendulum below has the kinetic and
///               potential energy of the L = 1 ladder as functions of (α, β, α̇, β̇): a = 5/3,
///               c = 2, M₁₁ = a cos²β + ε (2 sin²β + 1). At L = 1 both variants are the same
///               mechanism (but for the name).
enum class LadderMasses { uniform, equivalent };
Mechanism spatial_ladder_mechanism(int cells, LadderMasses masses = LadderMasses::uniform);

/// Spatial-ladder state in model coordinates: (nq), (nv).
struct SpatialLadderState {
  VecX q, u;
};
/// The benchmark state of `spatial-ladder-L` for a model built from spatial_ladder_mechanism(cells)
/// (either LadderMasses: the masses do not enter):
/// the closed configuration of the 2-dof pendulum above at α = 0.4, β = −0.25 rad, rates
/// α̇ = 0.6, β̇ = 0.35 rad/s. Every "post{k}_top" gets q = (α, β), u = (α̇, β̇); every
/// "rung{k}_left" q = (−β, 0), u = (−β̇, 0). Closed exactly, in closed form; assemble() holding
/// both coordinates of post0_top from a tilt that is not closed lands on it too.
SpatialLadderState spatial_ladder_state(const Model& model, int cells);

/// The 2-dof spatial pendulum the ladder moves as (000 §4.3, Fig. 10), in closed form. Posts of
/// mass s_p with inertia s_p diag(1/3, 1/3, ε) about their pivots, rungs of mass s_r moving with
/// the post tips and spinning at α̇ about their own axis (inertia s_r ε), ε = 10⁻³, g = 9.81
/// ((s_p, s_r) = (1, 1) for LadderMasses::uniform, (2/(L + 1), 1/L) for equivalent):
///   T = ½ [M₁₁(β) α̇² + a β̇²],  M₁₁ = a cos²β + ε (s_p (L + 1) sin²β + s_r L),
///   a = s_p (L + 1)/3 + s_r L,  V = −g c cos α cos β,  c = s_p (L + 1)/2 + s_r L.
/// Lagrange's equations give
///   α̈ = −(M₁₁′ α̇ β̇ + g c sin α cos β) / M₁₁,  β̈ = (½ M₁₁′ α̇² − g c cos α sin β) / a,
/// with M₁₁′ = ∂M₁₁/∂β; returned as (α̈, β̈). Every "post{k}_top" joint has these accelerations,
/// every "rung{k}_left" (−β̈, 0). Throws std::invalid_argument for cells < 1.
Eigen::Vector2d spatial_ladder_pendulum_accelerations(double alpha, double beta, double alpha_dot, double beta_dot,
                                                      int cells, LadderMasses masses = LadderMasses::uniform);

}  // namespace loopdyn
