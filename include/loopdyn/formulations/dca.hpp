// `dca`: the divide-and-conquer algorithm with the augmented Lagrangian and mass-orthogonal
// projections of paper 004 (Malczyk and Frączek, Multibody Syst Dyn 2012), in absolute coordinates.
//
// Coordinates. Every body carries its own state: the world position r of its centre of mass and its
// Euler parameters p (a unit quaternion, body axes to world), then its world angular velocity ω and
// the velocity ṙ of its centre of mass: 13 numbers per body, x = [r, p (7 per body); ω, ṙ (6 per
// body)]. Its mass matrix in (ω̇, r̈) is diag(J, m 1), J the world inertia about the centre of mass:
// positive definite, so that the Euler parameters' normalization constraint and its multiplier
// (004 eqs 4-5, 7-8) are not needed; the unit norm is restored after every step instead. Every
// joint, tree and loop alike, and every coordinate coupling, is a constraint between the bodies it
// joins: the rows of constraints.hpp (a revolute joint's 5, a spherical joint's 3, ...), evaluated
// from the two joint frames, with G's row blocks on the velocities of those bodies. Rows that are
// redundant (004's five-bar keeps 3, its double loop 6) are kept: the penalty makes every matrix
// below positive definite whatever the rank of G.
//
// Multipliers (004 eqs 6, 17). λ = λ* + α (G a + ν), ν = −γ + 2μΩ Φ̇ + Ω² Φ, with G a = γ the
// acceleration constraint (Φ̈ = G a − γ), λ* the previous iteration's multipliers. At the first
// iteration 004 takes λ* = 0; dca takes λ at the last accepted state. Near a singular configuration the
// iterations gain only a factor 1/(1 + α σ) per iteration along the soft direction (σ → 0, the
// eigenvalue of G M⁻¹ Gᵀ that vanishes there): from 0, the paper's 10 iterations left a residual
// of 1e-3 at each passage of 001's singular four-bar and an energy error of about 4e-5 J each;
// from the last λ, which changes little between evaluations, they converge there too.
// With M a + Gᵀ λ = Q, one iteration solves
//     [M  Gᵀ; G  −1/α] [a; λ] = [Q; −ν − λ*/α]
// and its fixed point is the constrained motion, G a = γ − (2μΩ Φ̇ + Ω² Φ). Each iteration adds
// α (G a + ν), in the range of G, so from 0 the multipliers of redundant rows are those of least
// norm; from the warm start they keep the previous split, which changes neither a nor the
// reactions (multipliers()). Iterations stop when the largest change of a body acceleration is
// below ε_a (or 100 ulps of the largest acceleration, if that is larger), or after the maximum
// count.
//
// Divide and conquer (004 §2.2-2.3). The assembly tree is a nested dissection of the joint graph:
// METIS bisects the bodies into two halves of equal count with the fewest joints between them, and
// each half again, down to single bodies. A constraint is eliminated at the smallest node that
// holds all its bodies; a node's handles are its bodies that constraints eliminated higher up act
// on (two for a chain, two rungs' for a ladder, the perimeter of its patch for a net: any number,
// which generalizes 004's two handles per node and its coupled-loop node of eqs 78-86). Each node holds the equations of motion of its
// handles with the multipliers inside it eliminated,
//     K a_H + (boundary rows)ᵀ λ = R,
// K = M and R = Q at a body (a single body's M may be singular: a slender bar). Assembling two
// children A, B with the joining constraints' rows G on their handles (004 eqs 6, 9-10, 17):
//     K = diag(K_A, K_B) + α GᵀG,    R = [R_A; R_B] − Gᵀ(λ* + α ν),
// then the bodies no constraint above acts on are eliminated, the Schur complement
//     K_C = K_kk − K_ke K_ee⁻¹ K_ek,  R_C = R_k − K_ke K_ee⁻¹ R_e            (004 eqs 21-32)
// with K_ee positive definite whenever inertia and constraints hold those bodies (the paper's
// "invertible even when the Jacobian loses rank"; otherwise a clear error naming them). At the
// root every constraint has been eliminated and no handle is left; the disassembly walks down,
// a_e = K_ee⁻¹ (R_e − K_ek a_k), and recovers λ = λ* + α (G a + ν) at each node (004 eqs 17, 21,
// 23). K, its elimination and the Cholesky factor K_ee = L Lᵀ are computed once per evaluation,
// each node's just before the first solve's upward step there; each iteration of λ* redoes the
// vectors only (004 §4.4). A node keeps X = L⁻¹ K_ek (then K_C = K_kk − XᵀX, K_ke K_ee⁻¹ R_e =
// Xᵀ L⁻¹ R_e and a_e = L⁻ᵀ (L⁻¹ R_e − X a_k): one triangular solve each way), L's lower triangle
// packed and its copy of G's blocks, all in one array in the order of the upward sweep, and builds
// K and the solves' other vectors in a per-thread scratch, K_C of the nodes below the parallel
// grain on a per-thread stack: the solves stream through the tree's memory several times per
// evaluation, which at thousands of bodies leaves the caches, so it is kept small and read in
// order, and each iteration's residuals are gathered by its upward sweep, at the nodes, rather
// than by passes of their own over every body and row (docs/performance.md). Ground joints are
// eliminated at their body's leaf (004 keeps them to the root, boundary case 3, eq 40): the same
// linear system in another order.
//
// Projections (004 §3, eqs 41-72, Appendix 87-110), after every accepted step and on every output
// row unless disabled: positions by the modified Newton iteration of eq 99, with the matrices at
// the step's positions q* held constant: M Δ + Gᵀ λ = −M (q − q*), λ = λ* + α (G Δ + Φ(q)), Δ
// applied to r and (as a rotation vector) to p, until ‖Δ‖∞ < ε_p; then velocities, with the
// matrices at the projected positions: M v + Gᵀ λ = M v*, λ = λ* + α G v, until the change of v is
// below ε_v. Both are the same divide-and-conquer solve with other right-hand sides.
//
// Stages (with projections): derivative() takes the accelerations, and the positions' rates, at
// the stage projected onto the constraints by one step of each projection, both with the matrices
// factored once at the stage's positions q* (the velocities' residual G v* at the projected
// positions), then refines the accelerations with the residuals of the projected state on that
// factorization. The derivative is then a smooth function of the stage that equals the dynamics on
// the constraints, and the error estimate no longer measures the stages' distance from them: a
// parallelogram's rung, level along the motion, has ω = 0 held to atol alone, and the Baumgarte
// terms at unprojected stages put an error there that the projection after the step removes
// (planar comb ladder of 8 cells over 2 s: 1866 steps before, 541 with; embedding 456). Where the
// loops' redundancy is geometric (Bennett, Bricard: rows of rank rising off the loops), G at an
// unprojected stage has a small singular value along the motion itself, and enforcing every row
// there steered the motion (5e-3 m off the reference on a Bennett linkage after 2 s).
//
// Parallel (004 §1, §4.4): the two subtrees of a node are assembled, and disassembled, as two tasks
// of a oneTBB task arena that lives as long as the formulation, down to subtrees of kParallelGrain
// bodies; the loops over bodies and rows (positions, rows of G, residuals, masses) run in chunks of
// kParallelLoopGrain, each element computed on its own (the constraint forces on a body gathered
// from its rows in a fixed order). Each node's and element's arithmetic is the same whatever the
// thread count, so results are identical (bit for bit) for any number of threads.
//
// Output: to_joint() inverts each tree joint's kinematics (body_coordinates.hpp), its angles on the
// branch nearest a reference that only start(), accept() (complete()) and accelerations(t, q, u)
// set: a const call, whose result depends on x and that reference alone. Applied forces
// are evaluated at that joint state (evaluate_forces), joint forces acting on the joint's two
// bodies as the wrench S (SᵀS)⁻¹ τ.
#pragma once

#include <cstddef>
#include <memory>

#include "loopdyn/loops/constraints.hpp"
#include "loopdyn/core/body_coordinates.hpp"
#include "loopdyn/core/forces.hpp"
#include "loopdyn/core/linalg.hpp"
#include "loopdyn/formulations/formulation.hpp"

namespace loopdyn {

namespace dca {
struct Engine;
}

class Dca final : public Formulation {
 public:
  /// Subtrees with fewer bodies are assembled and disassembled by one task.
  static constexpr int kParallelGrain = 64;
  /// Loops over bodies or rows run in chunks of this many elements.
  static constexpr int kParallelLoopGrain = 128;

  /// Throws std::invalid_argument naming the setting for α, μ, Ω, tolerances not finite and > 0
  /// (μ, Ω >= 0), iterations < 1, or a shared setting out of range (check_settings).
  Dca(const Model& model, const FormulationSettings& settings);
  ~Dca() override;
  std::string_view name() const override { return "dca"; }
  bool crosses_singular_configurations() const override { return true; }
  /// Forgets the last evaluation's multipliers (the first λ* of the next evaluation).
  void start(const StepPlan& plan, const VecX& q0, const VecX& u0) override;

  /// u̇ of the joint state (q, u): dca's body accelerations at the absolute state of (q, u), mapped
  /// to each tree joint's speeds.
  void accelerations(double t, const VecX& q, const VecX& u, Eigen::Ref<VecX> udot) override;

  Coordinates coordinates() const override { return Coordinates::absolute; }
  int state_size() const override;
  void to_state(const VecX& q, const VecX& u, Eigen::Ref<VecX> x) const override;
  /// [ṙ; ṗ = ½ (0, ω) ⊗ p; ω̇, r̈].
  void derivative(double t, const VecX& x, Eigen::Ref<VecX> dx) override;
  /// Re-normalizes the Euler parameters, then projects positions and velocities (unless disabled),
  /// and takes x's joint angles as the reference of the next to_joint (continuous output).
  void accept(double t, Eigen::Ref<VecX> x) override;
  void complete(double t, Eigen::Ref<VecX> x) override;
  void to_joint(const VecX& x, Eigen::Ref<VecX> q, Eigen::Ref<VecX> u) const override;

  /// The loop multipliers of the last accelerations(t, q, u) (joint_accelerations: the output
  /// rows) on the model's kept rows (loop_structure.hpp), as every other method reports them for
  /// `--reactions`: dca's rows of the loop joints and couplings are the model's unreduced rows in
  /// the same order, and λ_kept solves G_keptᵀ λ_kept = G_allᵀ λ_all in joint space (least
  /// squares, exact where the dropped rows are combinations of the kept ones, as the structural
  /// reduction guarantees). Not computed by derivative().
  const VecX& multipliers() const override;

  /// Body accelerations [ω̇; r̈] (6 per body, world axes) at x.
  void body_accelerations(double t, const VecX& x, Eigen::Ref<VecX> a);
  /// Projects the positions, then the velocities, of x onto the constraints (see the file comment).
  void project(Eigen::Ref<VecX> x);

  /// What the last calls did, for the CSV's diagnostic columns.
  struct Diagnostics {
    int acceleration_iterations = 0;  ///< of the last body_accelerations
    int position_iterations = 0;      ///< of the last projection
    int velocity_iterations = 0;
    double position_residual = 0.0;   ///< ‖Φ‖∞ of the last accepted state (after its projection)
    double velocity_residual = 0.0;   ///< ‖Φ̇‖∞ of it
    /// ‖G a + ν‖∞ = ‖Φ̈ + 2μΩ Φ̇ + Ω² Φ‖∞ of the last body_accelerations: what its iterations
    /// drive to zero (Φ̈ itself on the constraints).
    double acceleration_residual = 0.0;
  };
  const Diagnostics& diagnostics() const;
  /// dca.iterations.{acceleration,position,velocity}, dca.residual.{position,velocity,acceleration}
  /// of the last accepted step (completed rows between steps, dopri5's, keep the step's).
  std::vector<std::string> diagnostic_names() const override;
  void diagnostic_values(Eigen::Ref<VecX> out) const override;

  /// The assembly tree: its nodes, depth (edges from the root to the deepest leaf), the largest
  /// number of handles of a node (bodies it shares constraints with outside it) and the
  /// constraint rows (every one, redundant included); the bytes of the nodes' solve data, which
  /// every sweep streams through (the G blocks, X, L, vectors and index lists), and of the K_C
  /// kept per node (those of the children of nodes from kParallelGrain bodies), which each
  /// factoring writes and reads once; the others live on a per-thread stack of stack_bytes.
  struct TreeShape {
    int nodes = 0, depth = 0, max_handles = 0, rows = 0;
    std::size_t solve_bytes = 0, kc_bytes = 0, stack_bytes = 0;
    /// Multiply-adds of one factoring of every node's eliminated handles (e = 6 of them per body,
    /// c = 6 per kept handle): e³/3 (Cholesky), e²c (X) and ec² (K_C), summed over the nodes.
    double factor_madds = 0.0;
    /// Of those, the critical path of the parallel factoring: a subtree below kParallelGrain
    /// bodies counts whole (one task runs it), a node from the grain up counts its own work plus
    /// the larger of its children's paths (they run as two tasks, it runs after them). On p threads
    /// no schedule takes less than max(factor_madds / p, critical_madds) multiply-adds' time.
    double critical_madds = 0.0;
  };
  std::string summary() const override;
  TreeShape tree_shape() const;
  int threads() const;
  double alpha() const;

 private:
  std::unique_ptr<dca::Engine> e_;  ///< everything else (src/formulations/dca/engine.hpp)
};

}  // namespace loopdyn
