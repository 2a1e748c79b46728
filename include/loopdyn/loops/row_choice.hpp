// RowChoice: which rows of a geometrically redundant loop a formulation keeps, chosen again along
// the motion: geometric redundancy is handled along the motion by rank-revealing solves.
//
// A Bennett linkage's cut revolute has 5 rows of rank 2 at every configuration, a Bricard's 5 of
// rank 4: the dependency comes from the closed geometry, not from the joint axes, and which rows
// are dependent changes along the motion. structural_reduction (structural_rank.hpp) keeps as many
// rows as the rank and lists the others that are not zero as alternates (Constraints::alternates).
// The rows it keeps are independent at every configuration it sampled, but that is no proof: on
// IFToMM A04's Bricard loop closed at its fifth revolute, the 4 kept rows lose rank at t = 1.25 s
// while all 5 keep rank 4, and the methods that solve with the kept rows then followed another
// motion (2.1 m off at t = 3 s) or stopped at a singular configuration that is not one.
//
// So a formulation that solves with the kept rows holds its own copy of them, and between steps
// (Formulation::complete_accepted_state: one smooth right-hand side per step) chooses them again
// per loop with alternates. For loop l with kept rows K_l (k of them) and alternates A_l, G_l holds
// the rows of K_l ∪ A_l at the accepted configuration; a greedy column-pivoted Gram–Schmidt of
// G_lᵀ (the rank-revealing QR, its pivots largest first) picks the best k rows B_l, and
//     σ_min(G_{K_l}) < σ_min(G_{B_l}) / kRowChoiceGrowth
// (σ_min the smallest singular value of those k rows, from the eigenvalues of their k x k Gram
// matrix) puts B_l in K_l's places, in the rows' index order within the loop: a loop's rows keep
// their place among the kept rows (ConstraintBlocks, multipliers' order), only which row of the
// loop a place holds changes. Growth 4, as the coordinate partition's re-choice (coordinate_partition.hpp):
// a choice is kept until another is clearly better, so that rows are not exchanged back and forth.
//
// Cost per accepted step, for loops with alternates only (none for planar loops, whose dropped rows
// are zero): one position sweep, the loop's rows of G on the speeds of its tree path (O(rows ·
// path)) and a few Gram matrices of at most 6 x 6: O(n + Σ path) for the spatial ladder, whose
// cells close only with parallel axes and so have one alternate each. Allocates nothing per step. Rows that depend on rows of other loops (coupled loops)
// are chosen within their own loop only.
#pragma once

#include <Eigen/Eigenvalues>
#include <string>
#include <vector>

#include "loopdyn/loops/constraints.hpp"

namespace loopdyn {

/// How much worse (smallest singular value) a loop's kept rows may be than its best choice.
inline constexpr double kRowChoiceGrowth = 4.0;

class RowChoice {
 public:
  /// A copy of model.loops().constraints, with a group per loop joint that has alternates.
  explicit RowChoice(const Model& model);
  /// The rows the formulation evaluates, as chosen last.
  const Constraints& constraints() const { return cons_; }
  /// Whether some loop's rows can be chosen again (a loop with alternates).
  bool active() const { return !groups_.empty(); }
  /// At the accepted configuration q: chooses the rows of each loop with alternates again when
  /// they have lost rank (above). Returns a report of the exchanges ("loop 'j4': rows j4.along.x,
  /// j4.dot.b2 (were j4.along.y, j4.dot.b1), ..."), empty when none was made.
  std::string choose_again(const Eigen::Ref<const VecX>& q);

 private:
  struct Group {
    int loop = 0;
    std::vector<int> places;          ///< indices in Constraints::kept() of the loop's rows, ascending
    std::vector<ConstraintRow> rows;  ///< the loop's kept rows, then its alternates
    std::vector<int> current;         ///< (places) the row of `rows` each place holds
    std::vector<int> best;            ///< (places) the best choice at the last call
    std::vector<int> speeds;          ///< the speeds the loop's rows act on (row_speeds), ascending
    MatX G, W;                        ///< (rows x speeds) G of `rows` on them, and its Gram–Schmidt
  };
  void jacobian(Group& g);
  double smallest_singular_value(const Group& g, const std::vector<int>& chosen);
  void choose_best(Group& g) const;
  std::string exchange(Group& g);

  const Model& model_;
  Constraints cons_;
  std::vector<Group> groups_;
  KinematicsData kin_;
  ConstraintData data_;
  MatX scratch_;  ///< (1 x nv) one row of G, zero between rows
  // A loop joint has at most 6 rows (a fixed joint's), so every Gram matrix fits on the stack.
  using Gram = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, 6, 6>;
  Gram gram_;
  Eigen::SelfAdjointEigenSolver<Gram> eigen_;
};

}  // namespace loopdyn
