// `rcr`: recursive coordinate reduction (Anderson and Critchley 2003, paper 000 §3-4), O(n + m).
//
// Scope (000 §3.1-3.2, §4.2-4.4). Each loop-closing joint (or coordinate coupling) i closes a loop
// whose bodies are the tree paths from its two bodies up to their common ancestor, the loop base
// body 0_i (aggregation.hpp's sub-graph). Single loops, parallel manipulators (legs from a common
// base meeting at one end-effector) and coupled loops that share their base body (the spatial
// ladder of §4.3) are in scope. Loops that share a body but not their base body (the planar
// ladder of the benchmarks, `loopdyn generate ladder`) are not (000 §4.4): the constructor throws ModelError
// naming them and suggesting `embedding`.
//
// Kinematics, per loop and per call (000 eqs 33-55, in the notation map of docs/methods.md). The
// loop's constraint space is represented by its rows: the rows of the loop joint (all 6 − dof of
// them, structurally redundant ones included) restricted to n_i rows that are independent on the
// chosen dependent speeds, so τ of eq 38 (the phantom joint eliminated) starts as the identity of
// that n_i-dimensional space and the constraint Jacobian columns g_k play the part of the
// projected partial velocities S^{n_i} P_k^k. Dependent speeds are taken one speed at a time
// (a joint of several speeds is several steps of the recursion), nearest the loop-closing joint
// first:
//     Δ_k = g_kᵀ τ_{k+1} g_k,  t_k = τ_{k+1} g_k,  τ_k = τ_{k+1} − t_k Δ_k⁻¹ t_kᵀ      (eqs 44-45)
// and then, farthest from the loop-closing joint first, with W the constraint residual of every
// speed already known (the independent ones, and the dependent ones of loops solved before):
//     u_k = −Δ_k⁻¹ t_kᵀ W,   W ← δ_k W,  δ_k = 1 + χ_k,  χ_k = −g_k Δ_k⁻¹ t_kᵀ        (eqs 46-49)
// so that W after the last dependent speed is zero: the velocity constraints of the n_i rows hold
// to round-off for any independent speeds. Applied to the matrix of residuals per unit
// independent speed (W₀ = G_known X_known), this gives the rows of the partial velocity matrix X
// (θ = X β: eqs 50-53, Γ being the product of the δ's). At the acceleration level the same
// recursion with W₀ = G_known x_known − γ gives x, the dependent accelerations at β̈ = 0
// (eqs 54-55; −γ is the phantom's acceleration remainder A_t^{n_i}).
//
// Coupled loops sharing a base (eqs 72-80): loops are solved in model order, and the speeds one
// loop made dependent are known to the next, entering its W₀ through G_known X_known and
// G_known x_known. The latter is the Θ term of eqs 79-80 (with Ξ A_t of the earlier loop folded in),
// so the cost per loop is proportional to the loop's size and the whole pass is O(n + m).
//
// Kinetics (eqs 56-71). The bodies of the loops that share a base form one aggregated body
// hanging from that base (002 §4.2), with independent speeds β and θ = X β + x. Its articulated
// inertia over β is Σ H_kᵀ I_k H_k with H_k = Γ^k P_{p_i} the nonholonomic partial velocities of
// eq 58, i.e. the virtual terminal body's multiple inertias of eq 60; the triangularization and
// forward substitution (eqs 61-71) run in the articulated-body sweeps over the tree of single and
// aggregated bodies (tree_dynamics.hpp, 002 eqs 50-57), which treat the loop's independent speeds
// as one block where 000 eliminates them joint by joint: the same result, in O(n_i · d_i) for a
// loop of n_i bodies with d_i independent speeds instead of O(n_i) (d_i = 1 or 2 in 000's
// examples).
//
// Positions: nothing is solved at the position level. Dependent coordinates are integrated from
// the dependent speeds like the independent ones, so the position constraints drift, linearly in
// time (000 §4.1, Fig 6), by the integrator's error on the velocity-consistent motion; the
// velocity constraints hold to round-off at every evaluation (complete_state overwrites the
// dependent speeds from the independent ones).
//
// Independent speeds (000 §4.4 leaves the choice to the user). Chosen per loop at the initial
// configuration, in model order: a speed is made dependent when its Δ (as a fraction of ‖g‖²) is
// within a factor 10 of the best remaining one, preferring speeds nearest the loop-closing joint
// (000's order: independent coordinates first from the base, dependent ones at the loop's end),
// until the loop's rows are spanned; speeds of joints marked `independent: true` are kept
// independent when the loop's rank allows it and the indicator (below) stays within
// rcr_indicator_growth of the choice without the marks (else, e.g. a marked joint near a limit of
// its motion, the mark is dropped for that loop and choice, and reported).
// The condition indicator of a loop, max over its dependent speeds of ‖g_k‖ / √Δ_k (1 / sin of
// the angle between g_k and the columns eliminated before it), is computed at every call. When it
// has grown by RcrSettings::indicator_growth since the choice, the speeds are chosen
// again at the next accepted step (between steps, complete_accepted_state, so that no step mixes
// two choices) and the change is reported; when it exceeds singular_condition they are chosen
// again at once, and if every choice exceeds it the loops are at a singular configuration: rcr
// stops there, or goes on with on_singular = proceed.
//
// Multipliers (000 computes none; loopdyn reports them for `--reactions`): after the solve, the
// joint-space force the loops exert on each aggregated body's speeds is ρ = τ − Sᵀ F (Q − M u̇,
// tree_dynamics.hpp); loops are taken in reverse order, each solving G_Dᵀ λ = ρ_D on its kept
// rows (minimum norm where they are redundant) and removing Gᵀ λ from the speeds it shares with the
// loops solved before it. O(n + m), like the rest.
#pragma once

#include "loopdyn/loops/constraints.hpp"
#include "loopdyn/formulations/formulation.hpp"
#include "loopdyn/formulations/multipliers_on_demand.hpp"
#include "loopdyn/core/tree_dynamics.hpp"

namespace loopdyn {

class Rcr final : public Formulation {
 public:
  /// Throws ModelError for coupled loops with different base bodies (out_of_scope's structural
  /// part); loops that must be solved together are found when the first state is completed.
  Rcr(const Model& model, const FormulationSettings& settings);
  /// Why rcr cannot take the model at configuration q, or empty: coupled loops with different base
  /// bodies (the model's structure, checked first), or loops that share their base but must be
  /// solved together at q: loop i of an aggregated body is solved for the speeds no earlier loop
  /// of it acts on, which must carry the rank of its rows at q (what check_closed finds at the
  /// first call). Costs one position sweep and an SVD of each loop's rows; builds no Rcr.
  static std::string out_of_scope(const Model& model, const VecX& q);
  std::string_view name() const override { return "rcr"; }
  void complete_state(double t, Eigen::Ref<VecX> q, Eigen::Ref<VecX> u) override;
  void complete_accepted_state(double t, Eigen::Ref<VecX> q, Eigen::Ref<VecX> u) override;
  void accelerations(double t, const VecX& q, const VecX& u, Eigen::Ref<VecX> udot) override;
  std::optional<double> applied_power() const override { return forces_.power; }
  const VecX& multipliers() const override;
  const KinematicsData* completed_kinematics() const override { return completed_ ? &aba_.kin : nullptr; }

  /// Global speed indices currently independent (ascending).
  std::vector<int> independent_speeds() const;
  /// Largest condition indicator over the loops at the last call.
  double condition() const;
  /// Times the independent speeds were chosen again during the run.
  int switches() const { return switches_; }

 private:
  struct Loop {
    std::string name;                 ///< loop joint or coupling
    ConstraintBlock block;            ///< every row of the loop on the loop's bodies
    std::vector<int> theta;           ///< (block columns) row of each column in the aggregated body's θ
    std::vector<int> distance;        ///< (block columns) joints from the loop-closing joint
    std::vector<int> rows;            ///< the n_i rows used (block-local)
    std::vector<int> dependent;       ///< block columns, elimination order (nearest the cut first)
    std::vector<int> known;           ///< block columns known when the loop is solved
    MatX G;                           ///< all rows x block columns
    VecX phi, gamma;
    Mat6 T = Mat6::Zero();            ///< column e: t of dependent speed e
    Vec6 delta = Vec6::Zero();        ///< Δ of dependent speed e
    double indicator = 1.0, chosen_indicator = 1.0;
    double free_indicator = 1.0;      ///< without the marks, when they were kept at the choice (else ∞)
    std::vector<int> kept_local;      ///< block-local rows that Constraints keeps
    std::vector<int> kept_index;      ///< their index in Constraints::kept()
  };
  struct Node {
    int body = -1;                    ///< index in tree_.nodes
    std::vector<Loop> loops;          ///< solved in this order
    std::vector<int> beta;            ///< θ row of each independent speed
    Eigen::Matrix<double, 6, Eigen::Dynamic> W;
    std::vector<Vec6> force;          ///< (bodies) multiplier workspace
    VecX rho;                         ///< (θ)
    bool singular = false;            ///< beyond singular_condition with every choice (reported once)
  };

  void choose(Node& node, double t, bool first);
  void choose_loop(Node& node, Loop& loop, std::vector<char>& assigned, double t);
  void reduce(Node& node);
  void check_closed(const Node& node, const Loop& loop) const;
  void remainders(Node& node);
  void recover_multipliers(Node& node);
  void settle_multipliers();
  /// between_steps: on an accepted state, where the speeds may be chosen again on growth.
  void check_conditioning(double t, bool between_steps);
  void prepare(double t, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& u, bool between_steps);
  /// aba_.kin's velocities at (reduced_q_, u_), swept unless they are already.
  void sweep_velocities();
  /// complete_state and complete_accepted_state: the state completed, its kinematics swept.
  void complete(double t, Eigen::Ref<VecX> q, Eigen::Ref<VecX> u, bool between_steps);
  std::string speed_names(const Node& node, const std::vector<int>& theta_rows) const;

  const FormulationSettings settings_;
  const Constraints& rows_;  ///< every row of every loop joint (LoopStructure::unreduced)
  const Constraints& kept_;  ///< the rows the multipliers are reported on
  ConstraintData cons_data_;
  AbaData aba_;
  AggregatedTreeData tree_;
  std::vector<Node> nodes_;
  ForceData forces_;
  VecX u_, lambda_;
  MultipliersOnDemand on_demand_;  ///< λ of the last call, recovered when asked
  VecX reduced_q_;       ///< q at which aba_.kin's positions and the nodes' reductions stand
  bool reduced_ = false;  ///< reduced_q_ is set
  VecX swept_u_;          ///< u at which aba_.kin's velocities stand
  bool swept_ = false;    ///< aba_.kin's velocities stand at (reduced_q_, swept_u_)
  bool completed_ = false;  ///< aba_.kin holds the state the last completion wrote
  int switches_ = 0;
  bool chosen_ = false;  ///< independent speeds chosen (at the first call)
};

}  // namespace loopdyn
