// Tree dynamics (Featherstone, Rigid Body Dynamics Algorithms, ch. 5-7): recursive Newton-Euler
// (inverse dynamics), composite-rigid-body (joint-space inertia) and the articulated-body algorithm
// (forward dynamics). Loop formulations reuse them: the ABA is split into a factorization that
// depends on q only and a solve for given joint and body forces (style.md item 3).
//
// External forces `fext` are spatial forces on the bodies in body frames (6 x nbodies), or null.
// Nothing here allocates after the workspace is constructed.
#pragma once

#include <vector>

#include "loopdyn/kinematics.hpp"

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

/// Whether a solve includes velocity products and gravity (`yes`) or maps forces alone (`no`,
/// the linear part used for constraint-force responses).
enum class Bias { yes, no };

/// ABA part that depends on q only: positions, articulated inertias, U, D⁻¹.
void aba_factor(const Model& model, AbaData& d, const Eigen::Ref<const VecX>& q);
/// Velocities and velocity-product terms (needs aba_factor at the same q).
void aba_velocity(const Model& model, AbaData& d, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& u);
/// Accelerations for joint forces tau (nv) and body forces fext (body frames, may be null).
void aba_solve(const Model& model, AbaData& d, const Eigen::Ref<const VecX>& tau, const Mat6X* fext, Bias bias,
               Eigen::Ref<VecX> udot);
/// Forward dynamics: factor, velocity and solve in one call.
void aba(const Model& model, AbaData& d, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& u,
         const Eigen::Ref<const VecX>& tau, const Mat6X* fext, Eigen::Ref<VecX> udot);

/// Workspace of the recursive Newton-Euler algorithm.
struct RneaData {
  explicit RneaData(const Model& model);
  KinematicsData kin;
  std::vector<Vec6> a;  ///< (nbodies) spatial accelerations (with the gravity base acceleration)
  std::vector<Vec6> f;  ///< (nbodies) spatial force transmitted by each body's joint, body frame
};
/// Inverse dynamics: τ = M(q) u̇ + C(q, u) − (joint-space image of fext).
void rnea(const Model& model, RneaData& d, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& u,
          const Eigen::Ref<const VecX>& udot, const Mat6X* fext, Eigen::Ref<VecX> tau);

/// Workspace of the composite-rigid-body algorithm.
struct CrbaData {
  explicit CrbaData(const Model& model);
  KinematicsData kin;
  std::vector<Mat6> Ic;  ///< (nbodies) composite inertia of the subtree, body frame
};
/// Joint-space inertia matrix M(q) (nv x nv), both triangles filled.
void crba(const Model& model, CrbaData& d, const Eigen::Ref<const VecX>& q, Eigen::Ref<MatX> M);

}  // namespace loopdyn
