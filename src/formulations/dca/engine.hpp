// The state of one Dca (formulations/dca.hpp holds it behind a pointer): its parameters, state
// layout, parallel driver, constraints, assembly tree and solver, made in that order by the
// constructor's named steps, and the workspaces of the bodies and rows that the concerns share:
//   rows.cpp         the bodies' positions and velocities, the constraint rows' Φ, Φ̇, γ and G
//   projections.cpp  the mass-orthogonal projections (004 §3)
//   dca.cpp          the accelerations (applied forces, the refinement) and the Formulation glue
// Factor and solve are solver.hpp's, the tree tree.hpp's, the tasks parallel.hpp's.
#pragma once

#include <vector>

#include "formulations/dca/layout.hpp"
#include "formulations/dca/parallel.hpp"
#include "formulations/dca/parameters.hpp"
#include "formulations/dca/solver.hpp"
#include "formulations/dca/tree.hpp"
#include "loopdyn/core/body_coordinates.hpp"
#include "loopdyn/loops/constraints.hpp"
#include "loopdyn/core/forces.hpp"
#include "loopdyn/core/kinematics.hpp"
#include "loopdyn/core/linalg.hpp"

namespace loopdyn::dca {

/// What Engine::update_rows returns and Engine::factor takes: a factoring follows an evaluation of
/// the rows (G's blocks at the loaded bodies), by type.
class RowsEvaluated {
 private:
  friend struct Engine;
  RowsEvaluated() = default;
};

struct Engine {
  Engine(const Model& model, const Parameters& parameters);
  Engine(const Engine&) = delete;  // the solver refers to the tree and the driver held here
  Engine& operator=(const Engine&) = delete;
  // The constructor's last steps: the workspaces, sized once (the per-step path allocates nothing).
  void size_bodies();
  void size_rows();
  void size_joint_maps();

  /// Positions (and velocities, `velocities`) of x into the body workspace.
  void load_bodies(const Eigen::Ref<const VecX>& x, bool velocities);
  /// Frames, Φ, G's row blocks and, with velocities, Φ̇ and γ of every constraint row at the loaded
  /// bodies. Refused between Solver::factor and the solve that factors (it reads G then).
  RowsEvaluated update_rows(bool velocities);
  /// The bodies' world inertias at the loaded positions, then Solver::factor with them and the G of
  /// `rows`.
  [[nodiscard]] Factorization factor(const RowsEvaluated& rows);
  void subtract_constraint_forces(int body);  ///< res −= Gᵀ lambda on one body, G of the rows
  void constraint_residual(const VecX& x, const VecX& nu);  ///< c = G x + ν (the diagnostics), into c_
  void applied_forces(double t, const Eigen::Ref<const VecX>& x);
  /// Body accelerations [ω̇; r̈] (a BodyVector) at x (Dca::body_accelerations).
  void body_accelerations(double t, const VecX& x, Eigen::Ref<VecX> a);
  /// derivative()'s accelerations: x projected in place by one step of each projection
  /// (project_stage), then the body accelerations there, refined with the residuals of the
  /// projected state on the stage's factorization (refine_at_loaded).
  void stage_accelerations(double t, Eigen::Ref<VecX> x, Eigen::Ref<VecX> a);
  /// One modified-Newton step of the positions (004 eq 99) and one of the velocities (eq 72), both
  /// with the matrices of f (at x's positions as loaded), the velocities' residual taken at the
  /// projected positions; leaves x's projected state loaded.
  void project_stage(const Factorization& f, Eigen::Ref<VecX> x);
  /// The augmented-Lagrangian iterations of the accelerations (Solver::refine) with the residuals
  /// of the loaded bodies and rows (their inertias, G, ν in nu_) and the corrections from f, factored at
  /// nearby positions: the iterations converge to the loaded state's accelerations. Into acc_ and
  /// lambda_; returns the iterations.
  int refine_at_loaded(const Factorization& f);
  /// The accelerations' ν (004 eq 6) from the loaded rows and the first λ*: what both
  /// body_accelerations and stage_accelerations iterate on.
  void start_accelerations();
  /// Their diagnostics and warm start from the iterations' result acc (λ in lambda_), then a = acc.
  void finish_accelerations(int iterations, const VecX& acc, Eigen::Ref<VecX> a);
  /// The positions of x onto the constraints (004 eq 99, matrices at x's positions; Φ of the
  /// result in phi); returns the iterations.
  int project_positions(Eigen::Ref<VecX> x);
  /// The velocities of x onto the constraints at x's positions (004 eq 72).
  void project_velocities(Eigen::Ref<VecX> x);
  void project(Eigen::Ref<VecX> x);
  void store_positions(Eigen::Ref<VecX> x) const;  ///< the loaded positions into x (p's sign kept)
  /// The joint state of x, taking angles nearest `near` (joint_state), into q_joint_, u_joint_.
  /// Reads nothing but x and near, writes only the scratch (state_, q_joint_, u_joint_).
  void joint_state_of(const Eigen::Ref<const VecX>& x, const VecX& near) const;
  double max_abs(const VecX& v) const { return v.size() ? v.cwiseAbs().maxCoeff() : 0.0; }

  const Model& model;
  const Parameters parameters;
  const StateLayout layout;
  const ParallelDriver parallel;
  const ConstraintSet set;
  const AssemblyTree tree;
  Solver solver;

  // Bodies (model order).
  std::vector<Mat3> Jc_;      ///< inertia about the centre of mass, body axes
  std::vector<Mat3> R_;       ///< world rotation
  std::vector<Vec3> r_, w_, v_;
  VecX Q_;                    ///< (6 nbodies) applied forces and gyroscopic terms [n − ω×Jω; f + m g]
  VecX rhs_, out_, prev_;     ///< (6 nbodies)
  VecX res_;                  ///< (6 nbodies) force residual of the position projection
  std::vector<Vec3> r_star_;  ///< positions before a projection
  std::vector<Mat3> R_star_;
  /// World inertia J about the centre of mass of the last factor() (at q* in the position
  /// projection): with the mass, the body's mass matrix diag(J, m 1), kept as J alone (a third of
  /// the 6 x 6 matrix's memory) since the sweeps read it at every leaf.
  std::vector<Mat3> inertia_;
  VecX stage_;  ///< (13 nbodies) the projected stage of derivative()
  VecX acc_;    ///< (6 nbodies) refine_at_loaded's accelerations
  std::vector<Mat3> loaded_inertia_;  ///< world inertias at the loaded positions (refine_at_loaded)

  // Rows: Φ, Φ̇, γ, ν, λ, c = G x + ν; G blocks (6 per row and body of its constraint).
  VecX phi_, phidot_, gamma_, nu_, lambda_, c_;
  VecX warm_lambda_;          ///< λ at the last accepted state: the first λ* of every evaluation
  bool refresh_warm_ = true;  ///< the next evaluation is the first at an accepted state
  Mat6X Gblk_;                ///< G's 6-block of each (row, constraint body) at the loaded positions (update_rows)
  std::vector<ConstraintData::Frame> fp_, fc_;
  std::vector<double> coupling_q_;  ///< last coordinate of every coupling term (near for the next)

  // Applied forces at the joint state.
  bool has_forces_ = false;
  KinematicsData kin_;
  ForceData forces_;
  VecX qf_, uf_;
  /// to_joint's continuity reference: the joint coordinates whose branch its angles follow. Set
  /// only by start(), accept() (and complete()) and accelerations(t, q, u), never by a const call.
  VecX reference_;
  // joint_state_of's scratch: overwritten whole by each call, read by nothing else.
  mutable BodyState state_;
  mutable VecX q_joint_, u_joint_;
  VecX x_joint_, a_joint_;  ///< accelerations(t, q, u)'s absolute state and a
  std::vector<Vec6> body_acc_;

  // multipliers(), computed on demand after accelerations(t, q, u) from its λ.
  mutable bool kept_stale_ = false;
  mutable VecX kept_lambda_, generalized_, kept_rhs_;  ///< λ on the model's kept rows, G_allᵀλ, G_k G_allᵀλ
  mutable MatX kept_normal_;                            ///< G_k G_kᵀ
  mutable PsdSolver kept_solver_;
  mutable ConstraintData joint_rows_;  ///< the joint-coordinate Jacobians of the unreduced and kept rows
  mutable MatX G_all_, G_kept_;

  Dca::Diagnostics diagnostics_;
};

}  // namespace loopdyn::dca
