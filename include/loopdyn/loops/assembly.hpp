// Assembly: move a closed-loop mechanism's coordinates onto the constraint manifold Φ(q) = 0 and
// its speeds onto G(q) u = 0, changing only dependent coordinates (paper 001 §2.2, eqs 11-14,
// generalized to every joint type and to redundant or rank-deficient loop Jacobians).
//
// Partition (001 eq 11, generalized coordinate partitioning). G (m x nv) at q0 is factored by
// column-pivoted QR; the r = rank(G) pivot columns are the dependent speeds (the best-conditioned
// columns), the nv − r others are independent and keep their given values. Speeds the user marks
// as fixed are offered last: QR first picks pivots among the unfixed columns, then, only if those
// do not reach rank r, among the fixed ones (after projecting out the columns already chosen).
// When no speed is marked, the speeds the initial state sets (u0 ≠ 0: the crank given a speed, the
// others left 0) are the fixed ones, if some but not all are set and the partition that keeps them
// is conditioned within a factor 100 of the best-conditioned one (dense G only); else the best.
// Large G (beyond about 1e8 flops of dense factorization, a few hundred rows and speeds): G is
// kept sparse and SuiteSparseQR picks the pivot columns (its rank detection, at the same
// threshold, in a fill-reducing order), as long as the block it picks has an estimated
// condition number up to 1e8; else the dense choice above is made.
//
// Position (001 eq 12-13): damped Gauss-Newton in speed space on the dependent speeds,
//     Δu_d = −G_d⁺ Φ(q),   q ← integrate_q(q, α Δu),   α = 1, ½, ¼, ... until ‖Φ‖₂ decreases,
// with G_d⁺ the minimum-norm least-squares inverse (complete orthogonal decomposition; for a large
// G, SuiteSparseQR's basic least-squares solution, the same where G_d keeps full column rank), so
// rank loss at a singular configuration or rows that are redundant there do not break the step.
// Converged when ‖Φ‖∞ ≤ tolerance (Φ mixes lengths [m] from `along` rows and cosines from `dot`
// rows, see constraints.hpp). Φ here includes the structurally redundant rows the Constraints
// dropped: they hold at a closed configuration, and a root of the kept rows alone may lie on a
// branch where a loop is not closed. Each iteration costs one G (O(nonzeros)) and one
// factorization (O(m³) dense); the damping only ever shortens the step, so a loop that cannot close ends at a
// least-squares minimum of ‖Φ‖ and is reported.
//
// Velocity (001 eq 14): G_d u_d = −G_i u_i at the assembled q, by least squares. If G_d has lost
// rank there (the partition was chosen at q0), the partition is chosen again at the assembled q.
#pragma once

#include <vector>

#include "loopdyn/loops/constraints.hpp"

namespace loopdyn {

struct AssemblySettings {
  double tolerance = 1e-12;      ///< on ‖Φ‖∞; velocity: ‖G u‖∞ ≤ tolerance · max(1, max|G| ‖u‖∞)
  int max_iterations = 50;       ///< Newton iterations on the positions
  double time = 0.0;             ///< t of the drives' rows (Φ = q − f(t)); runs start at t = 0
  std::vector<bool> fixed_speeds;  ///< (nv or empty) true = keep this speed's coordinate as given
                                   ///< when possible; empty = the speeds of the joints marked
                                   ///< `independent: true` (marked_independent_speeds), or, when
                                   ///< none is marked, those u0 sets (see the file comment)
};

struct AssemblyResult {
  VecX q;                        ///< (nq) assembled coordinates, quaternions normalized
  VecX u;                        ///< (nv) speeds with G(q) u = 0
  int iterations = 0;            ///< Newton iterations taken on the positions
  double position_residual = 0;  ///< ‖Φ(q)‖∞ over all rows, structurally redundant ones included
  double velocity_residual = 0;  ///< ‖G(q) u‖∞
  std::vector<int> independent_speeds;  ///< speeds kept as given (ascending); the others moved
};

/// (nv) true for the speeds of the tree joints marked `independent: true` (ModelJoint::independent);
/// empty when no joint is marked.
std::vector<bool> marked_independent_speeds(const Model& model);

/// Assembles q0, u0 (see the file comment). Throws std::invalid_argument for wrong sizes and
/// std::runtime_error, naming the loop joints with the largest residuals, when the positions do not
/// converge (loops that cannot close with the given independent coordinates).
AssemblyResult assemble(const Model& model, const Constraints& constraints, const VecX& q0, const VecX& u0,
                        const AssemblySettings& settings = {});

}  // namespace loopdyn
