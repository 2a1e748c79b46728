// Tree kinematics: body poses, velocities, accelerations, point and frame Jacobians.
// One forward sweep over the spanning tree serves every formulation (kinematics.cpp).
#pragma once

#include <vector>

#include "loopdyn/core/model.hpp"

namespace loopdyn {

/// Kinematic state of the tree, sized once from the model.
struct KinematicsData {
  explicit KinematicsData(const Model& model);
  VecX q;                           ///< (nq) coordinates of the last update_positions
  std::vector<Transform> X_parent;  ///< (nbodies) pose of body i in its parent's frame (world for roots)
  std::vector<Transform> X_world;   ///< (nbodies) pose of body i in the world frame
  Mat6X S;                          ///< (6 x nv) joint motion subspaces, body frames
  std::vector<Vec6> v;              ///< (nbodies) spatial velocity, body frame
  std::vector<Vec6> c;              ///< (nbodies) velocity-product acceleration Ṡu + v × Su, body frame
};

/// X_parent, X_world and S from q.
void update_positions(const Model& model, KinematicsData& kin, const Eigen::Ref<const VecX>& q);
/// X_parent, X_world and S of body i alone (its parent's X_world must be current); kin.q is not
/// touched. The loops of constraint embedding update one aggregated body at a time with it.
void update_position(const Model& model, KinematicsData& kin, const Eigen::Ref<const VecX>& q, int i);
/// v and c from q and u; positions must be current.
void update_velocities(const Model& model, KinematicsData& kin, const Eigen::Ref<const VecX>& q,
                       const Eigen::Ref<const VecX>& u);
/// v and c of body i alone (its parent's v must be current).
void update_velocity(const Model& model, KinematicsData& kin, const Eigen::Ref<const VecX>& q,
                     const Eigen::Ref<const VecX>& u, int i);
/// Spatial accelerations of the bodies (body frames) from u̇; positions and velocities current.
/// Gravity is not included.
void body_accelerations(const Model& model, const KinematicsData& kin, const Eigen::Ref<const VecX>& udot,
                        std::vector<Vec6>& a);

/// World position of a point given in the body frame (body −1 = ground).
Vec3 point_position(const KinematicsData& kin, int body, const Vec3& point);
/// World velocity of a body point.
Vec3 point_velocity(const KinematicsData& kin, int body, const Vec3& point);
/// Spatial velocity of a body, expressed in the world frame (about the world origin).
Vec6 body_velocity_world(const KinematicsData& kin, int body);

/// Jacobian (6 x nv) of a frame rigidly attached to `body` (pose `frame` in the body frame):
/// [ω; v_origin] of that frame, expressed in the frame's own axes, equals J u. Overwrites J.
void frame_jacobian(const Model& model, const KinematicsData& kin, int body, const Transform& frame,
                    Eigen::Ref<Mat6X> J);
/// Jacobian (3 x nv) of a body point's world velocity. Overwrites J.
void point_jacobian(const Model& model, const KinematicsData& kin, int body, const Vec3& point,
                    Eigen::Ref<Eigen::Matrix<double, 3, Eigen::Dynamic>> J);

}  // namespace loopdyn
