// G Gᵀ of the kept rows, sparse as the loops make it, for the SingularityGuard (change_points.hpp).
//
// A row of a loop-closing joint acts only on the speeds of the tree joints between its two bodies
// and their common ancestor (the joints above move both sides alike); a coupling row only on its
// terms' speeds. Two rows meet in A = G Gᵀ only where they share a speed, so A is as sparse as the
// loops are local: 9 non-zeros a row on the spatial ladder, 2 on the planar ladder, whatever their
// length. Its extreme eigenvalues (σ² of G) are then bounded at O(m) per state:
//  * λ_min(A) > τ exactly when A − τ I is positive definite, i.e. when its LDLᵀ factorization has
//    positive pivots (Sylvester's law of inertia): a sparse factorization, once per check, in a
//    fill-reducing order (AMD) found once;
//  * λ_max(A) ≤ ‖A‖_∞ (the largest absolute row sum of a symmetric matrix);
//  * estimates of both, for the guard's extrapolation: inverse iteration with the factor of
//    A − τ I and power iteration with A, each from its last vector (the state moves little between
//    two accepted steps), the Rayleigh quotients being upper and lower estimates.
#pragma once

#include <Eigen/OrderingMethods>
#include <Eigen/SparseCholesky>
#include <vector>

#include "loopdyn/core/model.hpp"
#include "loopdyn/loops/constraints.hpp"

namespace loopdyn {

/// The speeds each kept row can act on (ascending), from the loops' structure.
std::vector<std::vector<int>> row_speeds(const Model& model, const Constraints& cons);

class RowGram {
 public:
  RowGram(const Model& model, const Constraints& cons);

  /// Fraction of A's entries that can be non-zero.
  double fill() const { return fill_; }
  /// A = G Gᵀ at G (m x nv), on its pattern.
  void assemble(const MatX& G);
  /// A = G Gᵀ at the positions current in kin, G's rows evaluated on their tree paths only (no
  /// m x nv G): O(m · path length). `cons` must be the rows of the constructor, or rows of the
  /// same loops (a loop's rows act on the same speeds).
  void assemble(const Model& model, const Constraints& cons, const KinematicsData& kin, ConstraintData& data);
  /// ‖A‖_∞, an upper bound of λ_max(A).
  double norm_bound() const { return norm_; }
  /// True when λ_min(A) > tau, decided by the pivots of LDLᵀ(A − tau I).
  bool smallest_above(double tau);
  /// Rayleigh quotient after `iterations` of inverse iteration with the factor smallest_above()
  /// made (which must have returned true): an estimate of λ_min(A) from above.
  double smallest_estimate(int iterations);
  /// Rayleigh quotient after `iterations` of power iteration: an estimate of λ_max(A) from below.
  double largest_estimate(int iterations);
  /// The vector of the last smallest_estimate(), in the rows' order (out: m).
  void smallest_vector(Eigen::Ref<VecX> out) const;
  /// x = (A − tau I)⁻¹ b with the factor smallest_above(tau) made (which must have returned true);
  /// b and x in the rows' order.
  void solve(const VecX& b, VecX& x);

 private:
  // LDLᵀ of a matrix already in its fill-reducing order (upper triangle stored), without the
  // copy SimplicialLDLT::factorize makes of its argument at every call.
  class Ldlt : public Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>, Eigen::Upper, Eigen::NaturalOrdering<int>> {
   public:
    void factorize_ordered(const Eigen::SparseMatrix<double>& a) { factorize_preordered<true>(a); }
  };
  struct Term {
    int value;       ///< index into A's stored values
    int row, other;  ///< the two rows (model order)
    int at_row, at_other;  ///< the shared speed's place in each row's speeds (columns of G_)
  };
  /// A's values and its bound from G_.
  void form();

  double fill_ = 1.0, norm_ = 0.0;
  std::vector<std::vector<int>> speeds_;  ///< of each row (row_speeds)
  std::vector<int> path_speeds_;          ///< every speed some row acts on, ascending
  MatX G_;  ///< (m x longest speeds) G on each row's speeds
  Eigen::SparseMatrix<double> A_;  ///< upper triangle, rows and columns in the fill-reducing order
  std::vector<Term> terms_;
  Ldlt ldlt_;
  Eigen::VectorXi place_;  ///< row r is row place_(r) of A_
  VecX smallest_vector_, largest_vector_, work_, solved_;
};

}  // namespace loopdyn
