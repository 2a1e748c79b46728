// Tree dynamics (Featherstone, Rigid Body Dynamics Algorithms, ch. 5-7): recursive Newton-Euler
// (inverse dynamics), composite-rigid-body (joint-space inertia) and the articulated-body algorithm
// (forward dynamics). Loop formulations reuse them: the ABA is split into a factorization that
// depends on q only and a solve for given joint and body forces (style.md item 3).
//
// External forces `fext` are spatial forces on the bodies in body frames (6 x nbodies), or null.
// Nothing here allocates after the workspace is constructed.
#pragma once

#include <Eigen/Cholesky>
#include <vector>

#include "loopdyn/core/kinematics.hpp"

namespace loopdyn {

/// Workspace of the articulated-body algorithm, sized at construction.
struct AbaData {
  explicit AbaData(const Model& model);
  KinematicsData kin;
  std::vector<Mat6> Ia;       ///< (nbodies) articulated inertia, body frame
  std::vector<Mat6> Ia_proj;  ///< (nbodies) Ia − U D⁻¹ Uᵀ, what body i passes to its parent
  Mat6X U;                    ///< (6 x nv) U = Ia S
  std::vector<Mat6> Dinv;     ///< (nbodies) D⁻¹ = (Sᵀ Ia S)⁻¹ in the top-left nv_i x nv_i block
  std::vector<Vec6> pv;       ///< (nbodies) velocity-product force v ×* I v, body frame
  std::vector<Vec6> pa;       ///< (nbodies) articulated bias force, body frame
  std::vector<Vec6> a;        ///< (nbodies) spatial acceleration (gravity included as a base acceleration)
  VecX tau_eff;               ///< (nv) τ − Sᵀ pa
};

/// The sweep workspace of an aggregated body (AggregatedBody, aggregation.hpp) of constraint
/// embedding (Jain 002 §4.3, §6-7), as the articulated-body sweeps see it: bodies whose tree-joint speeds θ (in body order) are θ = X β + x with independent
/// speeds β (002 eq 25; x = Ẋ θ̇_R of eq 30, from the acceleration constraint). The embedding
/// formulation fills X and x before every factor and solve; the sweeps own the rest.
struct AggregatedBodyData {
  AggregatedBodyData(const Model& model, std::vector<int> bodies);
  std::vector<int> bodies;  ///< ascending
  std::vector<int> local_parent;  ///< (bodies) local index of each body's parent, −1 = parent_body
  std::vector<int> first;   ///< (bodies) row of each body's first speed in θ
  std::vector<int> speeds;  ///< (nθ) global speed of each row of θ
  /// (bodies) whether a body has children in the aggregate, and whether its contribution is the
  /// first its parent's sums (or the top's, U and Ia_proj) receive bottom up: the sums start by
  /// assignment, without zeroing the 6 x 6 blocks each call.
  std::vector<char> has_children, first_into_parent;
  int parent_body = -1;     ///< the body all top bodies hang from, −1 = ground
  MatX X;                   ///< (nθ x nβ)
  VecX x;                   ///< (nθ)
  // Sweep workspace (resized only when nβ changes). Column c of body j is column j·nβ + c.
  Mat6X H;                  ///< (6 x bodies·nβ) H_RS of eq 29: each body's velocity per unit β, body frame
  Mat6X F;                  ///< (6 x bodies·nβ) P H accumulated towards the top (body frames)
  std::vector<Mat6> C;      ///< (bodies) P accumulated towards the top: Σ φ P φ* (bodies with children)
  std::vector<Vec6> abar;   ///< (bodies) acceleration at β̈ = 0 relative to parent_body (a_S of eq 30)
  std::vector<Vec6> z;      ///< (bodies) z of eq 54 accumulated towards the top
  Mat6X U;                  ///< (6 x nβ) φ P_S H_RS in parent_body's frame
  Mat6X G;                  ///< (6 x nβ) G_S = U D⁻¹ of eq 50
  Mat6 Ia_proj;             ///< τ̄_S P_S of eq 50, in parent_body's frame
  MatX D;                   ///< (nβ x nβ) D_S of eq 51, lower triangle (factored in llt when nβ > 1)
  MatX Wt;                  ///< (nβ x 6) Gᵀ = D_S⁻¹ Uᵀ, then L⁻¹ Uᵀ: τ̄_S P_S = Σ φ P φ* − Wtᵀ Wt
  VecX eps, nu, theta_dd;   ///< ε_S, ν_S = D⁻¹ ε_S (nβ) of eq 54 and θ̈_S (nθ) of eq 56
  Eigen::LLT<MatX> llt;     ///< D_S = L Lᵀ: D_S⁻¹ is applied by solves, never formed
};

/// The workspaces of the aggregated bodies of a tree and, per model body, its aggregated body
/// (−1 = a single body, which the sweeps treat exactly as in `tree`).
struct AggregatedTreeData {
  std::vector<AggregatedBodyData> nodes;
  std::vector<int> node_of_body;  ///< (nbodies)
};

/// Whether a solve includes velocity products and gravity (`yes`) or maps forces alone (`no`,
/// the linear part used for constraint-force responses).
enum class Bias { yes, no };

/// ABA part that depends on q only: positions, articulated inertias, U, D⁻¹.
void aba_factor(const Model& model, AbaData& d, const Eigen::Ref<const VecX>& q);
/// Velocities and velocity-product terms (needs aba_factor at the same q).
void aba_velocity(const Model& model, AbaData& d, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& u);
/// The velocity-product forces of aba_velocity alone, for velocities already current in d.kin.
void aba_velocity_products(const Model& model, AbaData& d);
/// Accelerations for joint forces tau (nv) and body forces fext (body frames, may be null).
void aba_solve(const Model& model, AbaData& d, const Eigen::Ref<const VecX>& tau, const Mat6X* fext, Bias bias,
               Eigen::Ref<VecX> udot);
/// aba_factor over an aggregated tree (002 eq 50): positions in d.kin must be current, and X of
/// every aggregated body set. Throws std::runtime_error when D of an aggregated body is singular.
void aba_factor(const Model& model, AbaData& d, AggregatedTreeData& tree);
/// aba_solve over an aggregated tree (002 eqs 54-57; velocities current, x set). The accelerations
/// of an aggregated body's speeds are θ̈ = X β̈ + x.
void aba_solve(const Model& model, AbaData& d, AggregatedTreeData& tree, const Eigen::Ref<const VecX>& tau,
               const Mat6X* fext, Bias bias, Eigen::Ref<VecX> udot);
/// After aba_solve over an aggregated tree: ρ = τ − Sᵀ F on the speeds of aggregated body g (θ
/// order), F the force transmitted across each of its joints (P a + z of the bodies below it within
/// g, descendants included through the articulated quantities). ρ = (Q − M u̇) there: the joint-space
/// force its loops exert, Gᵀλ. `force` is workspace, one entry per body of g.
void aggregated_loop_forces(const Model& model, const AbaData& d, const AggregatedBodyData& g,
                            const Eigen::Ref<const VecX>& tau, std::vector<Vec6>& force, Eigen::Ref<VecX> rho);
/// Forward dynamics: factor, velocity and solve in one call.
void aba(const Model& model, AbaData& d, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& u,
         const Eigen::Ref<const VecX>& tau, const Mat6X* fext, Eigen::Ref<VecX> udot);

/// Workspace of the recursive Newton-Euler algorithm.
struct RneaData {
  explicit RneaData(const Model& model);
  KinematicsData kin;   ///< of the overload that takes (q, u)
  std::vector<Vec6> a;  ///< (nbodies) spatial accelerations (with the gravity base acceleration)
  std::vector<Vec6> f;  ///< (nbodies) spatial force transmitted by each body's joint, body frame
};
/// Inverse dynamics: τ = M(q) u̇ + C(q, u) − (joint-space image of fext).
void rnea(const Model& model, RneaData& d, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& u,
          const Eigen::Ref<const VecX>& udot, const Mat6X* fext, Eigen::Ref<VecX> tau);
/// rnea with positions and velocities already current in kin (a formulation's own kinematics of the
/// call): the same τ without a second kinematic sweep.
void rnea(const Model& model, const KinematicsData& kin, RneaData& d, const Eigen::Ref<const VecX>& udot,
          const Mat6X* fext, Eigen::Ref<VecX> tau);

/// Workspace of the composite-rigid-body algorithm.
struct CrbaData {
  explicit CrbaData(const Model& model);
  KinematicsData kin;     ///< of the overload that takes q
  std::vector<Mat6> Ic;  ///< (nbodies) composite inertia of the subtree, body frame
};
/// Joint-space inertia matrix M(q) (nv x nv), both triangles filled.
void crba(const Model& model, CrbaData& d, const Eigen::Ref<const VecX>& q, Eigen::Ref<MatX> M);
/// crba with positions already current in kin.
void crba(const Model& model, const KinematicsData& kin, CrbaData& d, Eigen::Ref<MatX> M);

}  // namespace loopdyn
