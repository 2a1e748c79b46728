// Change points of the loops (singular configurations where branches of the motion meet) found
// before a run, and crossed during it by steps whose stages keep away from them.
//
// At a change point the kept constraint rows lose rank (σ_min(G) = 0) and, for an instant, the
// mechanism has more degrees of freedom (IFToMM A02: the N-four-bar with every link on one line;
// paper 001's parallelogram with its crank on the base). The motion that continues is smooth, but
// every joint-coordinate method evaluates its right-hand side through G (dependent speeds G_D⁻¹,
// multipliers (G M⁻¹Gᵀ)⁻¹), so a stage state off the manifold by δ (the integration or
// position-analysis error) takes a derivative error of order δ / σ_min(G). An adaptive step whose
// stage lands close to the change point either is rejected over and over (dopri5's step size
// underflows) or is accepted with a polluted derivative: the energy jumps at that passage (1e-8
// of the weight scale on A02 with N = 4, the marker 7e-6 m off ten passages later).
//
// Survey (before the run, mechanisms whose loops leave one degree of freedom): the configuration
// space is then a curve, which survey_change_points() walks from q0 by predictor–corrector
// continuation (tangent = null vector of G, corrector = the mass-orthogonal projection of
// projection.hpp, steps of kWalkStep in the largest speed component, longer where ρ keeps a
// change point farther off than one: change_points.cpp, kDipSlope) until it closes or after
// kWalkSteps steps. The indicator ρ(q) = σ₂(G) / σ₁(G) over the non-zero singular values (the
// smallest one that is not the curve's tangent) dips to zero at a change point; a dip below
// kDip between walk points is located by golden-section search along the curve (its points on
// the hyperplanes normal to the walk's tangent, each reached from the nearest found) and kept as
// a change point when ρ falls below kVanish there, unless the kept rows with their alternates
// keep the rank there (a Bennett's or Bricard's row exchange, no change point).
//
// Crossing (dopri5): the ChangePointMonitor measures, at every accepted state, the signed offset
// d along the curve's tangent at each change point (revolute and prismatic coordinates; angles
// wrapped) and its rates, and predicts the time t* at which d = 0 from d + ḋτ + ½ d̈ τ² = 0.
// Before every step adjust_step() places a predicted t* at 0.55 h, in the widest gap between
// dopri5's stage abscissae (0.3 and 0.8: the nearest stage is 0.25 h away), or shortens the
// step before so that the next one of the controller's size straddles it. The side of the
// crossing is then decided by the velocity, as in the physics. A step over which d changes sign
// is a crossing, reported with its time, loops and the rank of the rows before and at the point.
// Branch (every integrator): through a change point the physical motion keeps its tangent, so
// within kImminentOffset of a point the velocity stays along the point's tangent, off it by the
// curve's bend over that offset only (below 5e-5 rad within 0.25 rad of A02's points). A velocity
// more than kBranchTurn off it there is turning onto another branch: with dopri5 below ~1e-11,
// steps shrink to 1e-14 s next to the point and the state creeps onto the other branch while its
// velocity turns (A02 with N = 4: embedding at 1e-12 and nullspace at 2e-12 turned by 0.8 rad and
// ended 2 m off the exact motion, without a word). turned() reports it and the Simulator stops.
//
// Scope: one degree of freedom (every IFToMM case with a change point); with more, the space of
// configurations is not a curve and the survey reports why it did not run. Cost: the walk is
// O(kWalkSteps · (nv³ + m³)) once per run, skipped when nv > kSurveyLargestNv.
//
// Guard (mechanisms the survey does not walk, loops with more than one degree of freedom): the
// singular configurations then form surfaces that no walk before the run can list, and a motion
// may cross them many times (paper 003's square net, hanging under gravity, flattens a square
// about 25 times in its second half-second). Measured on the 4 x 4 net (dopri5 at 1e-10, against
// dca at 1e-10 and 1e-11, which agree within 2e-7 rad over 1 s): embedding leaves the motion
// after the third passage (0.07 rad off at 0.7 s), nullspace at 1e-11 at the first, gcp with
// --project ends 5.8 J off, lagrange-dense with rk4 gains 45 J, each without a word. The
// SingularityGuard follows ρ(q) = σ_min/σ_max of the kept rows over the singular values that are
// not zero at the start (rows redundant everywhere excluded) at every accepted state, and fires
// when ρ falls below kGuardNear ρ(q0), or when the last two states extrapolate to below it within
// one more step of the same length (a crossing between two fixed steps); the Simulator then stops
// every method that cannot cross it (Formulation::crosses_singular_configurations) with a
// SingularConfigurationError. On that net ρ stays within [0.55, 1] ρ(q0) for its first 0.5 s and
// passes 0 like |t − t*| at each passage (slope 16 ρ(q0) per second).
// Cost: ρ needs an m³ eigenvalue solve, 9 times the dynamics of the 64-cell spatial ladder when it
// ran at every step. It runs only where a bound cannot settle the question: by Weyl's inequality
// every singular value moves by at most ‖G − G_ref‖₂ from its value at the last solve (G_ref), and
// ‖·‖₂ ≤ min(‖·‖_F, √(‖·‖₁ ‖·‖∞)), one pass over G; so ρ(q) ≥ (σ_k,ref − s) / (σ_max,ref + s)
// with s that bound. While this lower bound stays above kGuardNear ρ(q0) at the state and, over
// one more step, extrapolated, no solve is needed; else ρ is solved for there (and at the state
// before, when only bounded there, for the extrapolation), which becomes the new reference.
// Per accepted step: G and a pass over it, O(m nv); the solves come when G has moved by about
// σ_min since the last. Where G Gᵀ is sparse (loops that are local: the ladders, the nets' rows
// by cell; row_gram.hpp) and regular at q0, G is evaluated on its rows' tree paths only and
// λ_min(G Gᵀ) > τ is decided by a sparse factorization, O(m) a step; ρ(q0) is estimated by
// inverse and power iteration instead of solved (from above: the guard fires a little early).
// There no row count is too large: past kGuardLargestRows rows, where the dense solves are not
// made, ρ is estimated (more iterations) where the bound does not settle it, and the loops named
// from the estimate's vector.
#pragma once

#include <Eigen/Eigenvalues>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "loopdyn/loops/constraints.hpp"
#include "loopdyn/core/kinematics.hpp"
#include "loopdyn/core/model.hpp"

namespace loopdyn {

class RowGram;  // row_gram.hpp

struct ChangePoint {
  VecX q;                  ///< (nq) configuration at the point
  VecX tangent;            ///< (nv) unit tangent of the walked curve there
  int rank_regular = 0;    ///< rank of the kept rows away from it
  int rank_at_point = 0;   ///< rank at it
  double indicator = 0.0;  ///< ρ found there (σ ratio, ~0)
  double potential = 0.0;  ///< gravity and spring energy at q (J)
  std::string loops;       ///< loop joints (or couplings) whose rows lose rank, quoted
};

struct ChangePointSurvey {
  bool walked = false;   ///< the curve was walked, or needs no walk (constant_rows); else `why_not`
  bool constant_rows = false;  ///< couplings only: the rows, and their rank, are the same everywhere
  bool closed = false;   ///< the walk came back to q0 (else it stopped after kWalkSteps or at the energy)
  bool bounded = false;  ///< the walk stopped, both ways, where the motion's energy cannot take it
  int steps = 0;         ///< walk steps taken
  std::string why_not;
  std::vector<ChangePoint> points;
};

inline constexpr double kWalkStep = 0.02;     ///< largest speed-space component of a walk step (rad, m)
inline constexpr int kWalkSteps = 4000;       ///< walk length limit
inline constexpr int kSurveyLargestNv = 400;  ///< larger mechanisms are not surveyed
inline constexpr double kDip = 0.1;           ///< ρ below which a local minimum is searched
inline constexpr double kVanish = 1e-6;       ///< ρ below which that minimum is a change point

/// Walks the configuration curve through q0 (see the file comment). q0 must close the loops.
ChangePointSurvey survey_change_points(const Model& model, const Constraints& constraints, const VecX& q0);
/// The same walk, stopped each way at the first point the motion from (q0, u0) cannot reach: its
/// potential energy above the initial total energy (may_reach). Beyond it the curve is out of
/// reach too, as the motion stays on the curve. What a run needs; on a pendulum-like motion a small
/// part of the curve (the 1 s default run of models/double_wishbone.yaml spent 70 % of its time
/// walking the whole curve).
ChangePointSurvey survey_change_points(const Model& model, const Constraints& constraints, const VecX& q0,
                                       const VecX& u0);

/// A survey and the start state it was made from (the run's, constraints: the model's).
struct SurveyedStart {
  VecX q0, u0;
  ChangePointSurvey survey;
};

/// True when the motion from (q0, u0) may reach `point`: its potential energy is within the
/// initial total energy, unless applied forces or torques can add energy (springs and dampers
/// cannot).
bool may_reach(const Model& model, const ChangePoint& point, const VecX& q0, const VecX& u0);
/// The first of the survey's points the motion from (q0, u0) may reach, or nullptr.
const ChangePoint* first_reachable(const Model& model, const ChangePointSurvey& survey, const VecX& q0,
                                   const VecX& u0);
/// Why `method` refuses the motion from (q0, u0), given its Formulation::change_point_refusal()
/// (`refusal`): "<method> refuses the run: the motion can reach a change point of the loops
/// (<where>), which <refusal>"; empty when the refusal is empty or no point is reachable. The one
/// text of the Simulator's refusal and of `loopdyn info`'s.
std::string change_point_problem(const Model& model, const ChangePointSurvey& survey, const VecX& q0,
                                 const VecX& u0, std::string_view method, const std::string& refusal);
/// The largest potential energy the motion from (q0, u0) can reach (may_reach): infinity when
/// applied forces or torques can add energy.
double reachable_potential(const Model& model, const VecX& q0, const VecX& u0);

/// "loops 'C1', 'C2' (rank 8 -> 6) at q.crank = 3.14159 ..." for messages.
std::string describe(const Model& model, const ChangePoint& point);

/// A change point crossed during a run.
struct ChangePointCrossing {
  double t = 0.0;         ///< time at which the offset along the tangent vanished (interpolated)
  int point = 0;          ///< index in the survey
  int rank_regular = 0;   ///< as ChangePoint
  int rank_at_point = 0;
  std::string loops;
};

class ChangePointMonitor {
 public:
  ChangePointMonitor(const Model& model, std::vector<ChangePoint> points);

  bool enabled() const { return !points_.empty(); }
  /// Records an accepted state; returns true when the step that ended here crossed a change
  /// point, which last() then describes.
  bool observe(double t, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& u);
  /// The step to take from t (the last observed time) instead of h (see the file comment).
  double adjust_step(double t, double h) const;
  const ChangePointCrossing& last() const { return last_; }
  /// The change point the last observed state is next to (kImminentOffset along its tangent), or
  /// nullptr.
  const ChangePoint* imminent() const;
  /// The change point next to which the last observed velocity is more than kBranchTurn off the
  /// point's tangent (turning onto another branch; see the file comment), or nullptr; `angle`
  /// receives that angle (rad). A configuration the curve passes twice (a change-point four-bar's
  /// crossing, walked both ways) is two points with one tangent each: the velocity is measured
  /// against the passage the motion came along.
  const ChangePoint* turned(double& angle) const;

 private:
  struct Offset {
    bool near = false;   ///< within kNearOffset of the point in every measured coordinate
    double d = 0.0, rate = 0.0;
    double turn = 0.0;  ///< angle (rad) between the velocity and the tangent, measured coordinates
  };
  Offset offset(int point, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& u) const;
  /// Time to the next zero of the offset of `point` (infinity when none ahead).
  double time_to(int point) const;
  /// Sets passage_ at the state just observed.
  void follow_passages();

  const Model& model_;
  std::vector<ChangePoint> points_;
  std::vector<std::vector<int>> passages_;  ///< per point, the other points at its configuration
  std::vector<int> passage_;  ///< per point, the passage the motion is on within kImminentOffset, or −1
  std::vector<int> measured_;             ///< speeds of revolute and prismatic joints
  std::vector<Offset> now_, before_;      ///< per point, at the last two accepted states
  double t_now_ = 0.0, t_before_ = 0.0;
  bool have_now_ = false, have_before_ = false;
  ChangePointCrossing last_;
};

inline constexpr int kGuardLargestRows = 400;     ///< more kept rows: guarded only where G Gᵀ is sparse
inline constexpr double kGuardNear = 1e-2;        ///< ρ/ρ(q0) below which the guard fires
/// ρ/ρ(q0) above which a run handed to dca at the guard's stop is handed back (run.hpp): three
/// times the guard's threshold, so that the motion must move away from the singular configuration
/// between two hand-overs. Of 0.02, 0.03, 0.05, 0.1 and 0.3, tried with a switch that is not
/// kept (commit 7dede7e), 0.03 made about the fewest evaluations on the 16-cell ladder, the 8-cell
/// comb and the 4 x 4 net, with the 3-square chain as close to the reference; bench/run_whole.sh
/// times the runs it makes.
inline constexpr double kGuardClear = 3e-2;

/// What a SingularityGuard watches for: a state near a singular configuration, to stop the method
/// there (ρ solved for and the loops named when it fires), or the loops clear of one again, to
/// hand a run back (run.hpp): there a state below the threshold needs only a bound that it is,
/// and no description.
enum class GuardUse { stop, clear };

/// Singular configurations met during a run of a mechanism that the survey did not walk (the file
/// comment). `observe` is called at every accepted state.
class SingularityGuard {
 public:
  /// dense_rows: the most rows for which ρ is solved for where no bound settles it (estimated past
  /// them, the sparse path only); near: ρ/ρ(q0) below which observe() says near.
  SingularityGuard(const Model& model, const Constraints& constraints, const VecX& q0,
                   int dense_rows = kGuardLargestRows, double near = kGuardNear, GuardUse use = GuardUse::stop);
  ~SingularityGuard();

  /// False when the rows are too many to be guarded: more than kGuardLargestRows where G Gᵀ is
  /// not sparse or not regular at q0.
  bool enabled() const { return enabled_; }
  /// True when the loops at q are near a singular configuration, or predicted to cross one within
  /// the next step; describe() then says where. Solves for ρ only where the bound from the last
  /// solve (the file comment) cannot keep it above kGuardNear ρ(q0).
  bool observe(const Eigen::Ref<const VecX>& q);
  /// The same at the positions of `kin` (the Simulator's kinematics of the accepted state, which
  /// the run watch reads too: one position sweep a step for both).
  bool observe(const KinematicsData& kin);
  /// "the loops 'a', 'b' come near a singular configuration (σ_min/σ_max ..., ... at the start ...)".
  std::string describe() const;
  /// A lower bound of ρ/ρ(q0) at the last observed state: ρ/ρ(q0) itself where it was solved for,
  /// its estimate where it was estimated (past dense_rows rows, states the bound did not settle);
  /// zero where a GuardUse::clear guard bounded ρ below its threshold without solving.
  double relative_bound() const { return low_ / rho0_; }
  /// ρ/ρ(q0) at q, solved for (up to kGuardLargestRows rows; throws std::logic_error past them).
  double relative_indicator(const Eigen::Ref<const VecX>& q);
  /// The eigenvalue solves so far, the one at q0 included.
  int solves() const { return solves_; }

 private:
  /// G at q (into G_).
  void jacobian_at(const Eigen::Ref<const VecX>& q);
  /// ρ at q (into rho_), with the eigenvectors when `vectors`; G there becomes the bound's reference.
  double solve(const Eigen::Ref<const VecX>& q, bool vectors);
  /// A lower bound of ρ at G_ from the reference (Weyl's inequality; the file comment).
  double lower_bound();
  /// True when ρ at gram_'s assembly is bounded below `near` without solving for it.
  bool bounded_below(double near);
  /// True when, at G_ (or gram_'s assembly), bounds keep ρ above `near` and no crossing is
  /// predicted before the next state (the file comment); sets low_.
  bool settled(double near, bool had_before);
  /// The sparse path at q0: true when G Gᵀ is sparse and regular there (ρ(q0) estimated).
  bool start_sparse(const VecX& q0);
  /// observe() where settled() did not settle it and no dense solve is made: ρ at q estimated.
  bool estimate_unsettled(double near, bool had_before, double estimate_before);

  const Model& model_;
  const Constraints& cons_;
  bool enabled_ = false;
  bool dense_ = false;  ///< at most kGuardLargestRows rows: ρ solved for where not settled
  GuardUse use_ = GuardUse::stop;
  double near_ = kGuardNear;  ///< relative to ρ(q0)
  KinematicsData kin_;
  ConstraintData data_;
  MatX G_, GGt_, G_ref_;
  VecX row_sums_, q_before_, q_now_;
  Eigen::SelfAdjointEigenSolver<MatX> eig_;
  int structural_ = 0;  ///< singular values that are zero at q0 (rows redundant everywhere)
  int solves_ = 0;
  double rho0_ = 1.0, rho_ = 1.0, rho_before_ = 1.0;
  double sigma_ref_ = 0.0, top_ref_ = 0.0;  ///< σ_k and σ_max of the reference G
  double low_ = 1.0;                        ///< lower bound of ρ at the last observed state
  std::unique_ptr<RowGram> gram_;           ///< G Gᵀ on the loops' sparsity, when sparse
  double smallest_ = 0.0;                   ///< estimate of λ_min(G Gᵀ) at the last observed state
  double estimate_ = 1.0;                   ///< estimate of ρ there
  bool have_before_ = false, solved_before_ = true, predicted_ = false;
  std::string loops_;  ///< where it fired
};

/// Angle (rad) between the velocity and a change point's tangent, within kImminentOffset of it,
/// above which the motion is turning onto another branch: the bend of a curve over 1e-2 rad
/// reaches it only at a curvature of 5 rad⁻¹, 2.5e4 times A02's.
inline constexpr double kBranchTurn = 0.05;
}  // namespace loopdyn
