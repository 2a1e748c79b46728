// dca's factor and solve (004 §2.2-2.3, eqs 9-10, 17, 21-32): K, its elimination and Cholesky
// factor at every node of the assembly tree, the upward (assembly) and downward (disassembly)
// sweeps of one solve, and the augmented-Lagrangian iterations as iterative refinement on them
// (formulations/dca.hpp, "Multipliers" and "Divide and conquer").
//
// Call order, by types: the rows are evaluated (Engine::update_rows returns RowsEvaluated), then
// factored (Engine::factor takes it; Solver::factor makes the only Factorization), then solved
// (every solve takes the current Factorization; a replaced one is refused with an error). The
// nodes are factored by the first solve after factor(), so that the tree's memory is streamed
// through once for both; the inertias and G's blocks given to factor() must not change until then
// (Engine::update_rows refuses while factor_pending(), the one order checked at run time).
#pragma once

#include <vector>

#include "formulations/dca/layout.hpp"
#include "formulations/dca/parallel.hpp"
#include "formulations/dca/parameters.hpp"
#include "formulations/dca/tree.hpp"

namespace loopdyn::dca {

/// diag(J, m 1) v, a body's mass matrix in (ω̇, r̈) times v.
inline Vec6 mass_times(const Mat3& J, double m, const Vec6& v) {
  Vec6 out;
  out << J * v.template head<3>(), m * v.template tail<3>();
  return out;
}

class Solver;

/// The proof that factor() was called: what Solver::solve and Solver::refine take.
class Factorization {
 private:
  friend class Solver;
  explicit Factorization(unsigned long generation) : generation_(generation) {}
  unsigned long generation_;
};

class Solver {
 public:
  Solver(const Model& model, const ConstraintSet& set, const AssemblyTree& tree, const ParallelDriver& parallel,
         const Parameters& parameters);

  /// Every node's K, elimination and factor, from the world inertias J about the centres of mass
  /// (with the model's masses: the bodies' mass matrices) and G's blocks (Engine::Gblk_), made by the
  /// next solve, before its upward step at each node. Both are read by reference until then.
  [[nodiscard]] Factorization factor(const std::vector<Mat3>& inertia, const Mat6X& G);
  /// factor() was called and no solve has factored the nodes yet.
  bool factor_pending() const { return pending_; }

  /// One divide-and-conquer solve, with the factored matrices (factoring them first after
  /// factor()), of the correction a, Δλ of x, λ: M a + GᵀΔλ = F − M x − Gᵀλ, Δλ = α (G a + c),
  /// c = G x + ν, F (6 per body), ν (rows), x (6 per body) and λ (rows) zero when null. Out: a (6
  /// per body), dlambda(): Δλ, residual(): c.
  void solve(const Factorization& f, const VecX& F, const VecX* x, const VecX* lambda, const VecX& nu, VecX& out);
  /// The augmented-Lagrangian iterations as iterative refinement: from x and lambda, each
  /// iteration solves for the correction of x and λ from the residuals F − M x − Gᵀλ and G x + ν
  /// (gathered by the solve itself, solve_up), which is 004's λ = λ* + α(G x + ν) with λ* the
  /// previous λ, computed with the small residuals on the right-hand side so that the round-off of
  /// the ill-conditioned K = M + α GᵀG scales with them (the plain form leaves an error of about
  /// 1e-10 relative, eps × α: measured on IFToMM A02). Returns the iterations; stops when the largest
  /// correction is below tolerance (or 100 ulps of x).
  int refine(const Factorization& f, const VecX& F, const VecX& nu, double tolerance, VecX& x, VecX& lambda);

  const VecX& dlambda() const { return dlambda_; }  ///< Δλ of the last solve
  const VecX& residual() const { return c_; }       ///< c = G x + ν of the last solve (G as factored)
  /// diag(J, m 1) v for body i, J of the last factor().
  Vec6 mass_times(int i, const Vec6& v) const { return dca::mass_times((*inertia_)[i], model_.mass[i], v); }

 private:
  /// K, its elimination and factor of node `id` (004 eqs 9-10, 21-30).
  void factor_node(int id);
  void solve_up(int id, const VecX& F, const VecX* x, const VecX* lambda, const VecX& nu);  ///< a node's R_C, z and rows' c
  void solve_down(int id, VecX& out);  ///< its a_e and Δλ

  /// K and K_ee of the node being factored, and the vectors a solve needs only inside one node: one
  /// per thread, sized for the largest node, so that the nodes keep only what the solves read.
  struct Scratch {
    MatX K, Kee;
    std::vector<double> kc_stack;  ///< the K_C of the nodes below kParallelGrain (Node::kc_on_stack)
    VecX R, aH, tmp;  ///< a node's right-hand side, handle accelerations and a_e
  };
  Scratch& scratch() { return scratch_[parallel_.thread_index()]; }
  double* kc_of(const Node& n, Scratch& s) { return (n.kc_on_stack ? s.kc_stack.data() : kc_.data()) + n.KC; }

  const Model& model_;
  const ConstraintSet& set_;
  const AssemblyTree& tree_;
  const ParallelDriver& parallel_;
  double alpha_;
  int max_iterations_;
  /// What the solves read and write of every node (G's blocks, X, L, z, R_C, a_C; Node), one
  /// stretch per node in post order: an upward sweep streams through it forwards, a downward one
  /// (right subtree first) backwards. K_C, read only by the parent's factor, is apart: in kc_
  /// (Node::kc_on_stack false) or on a thread's Scratch::kc_stack.
  std::vector<double> data_, kc_;
  std::vector<Scratch> scratch_;  ///< one per thread
  const std::vector<Mat3>* inertia_ = nullptr;  ///< of the last factor()
  const Mat6X* G_ = nullptr;                    ///< of the last factor(), read by the first solve after it
  bool pending_ = false;
  unsigned long generation_ = 0;  ///< of the current Factorization
  VecX dlambda_, c_;  ///< (rows)
  VecX delta_;        ///< (6 nbodies) refine()'s correction
};

/// The smallest correction worth asking for: the tolerance, or 100 ulps of the largest value being
/// corrected, whichever is larger. 004's absolute ε_p = 1e-14 m sits below the round-off of
/// positions far from the origin (a 1024-link chain reaches 1e3 m, whose ulp is 1e-13 m): there
/// every projection would run the maximum number of iterations.
double floor_of(double tolerance, double largest);

}  // namespace loopdyn::dca
