// Forward kinematics over the spanning tree (Featherstone ch. 3-4). For body i with tree joint
// (parent frame Tp, joint transform Tj(q), child frame Tc), the pose in the parent is
// X_parent = Tp Tj(q) Tc⁻¹ and the motion subspace in the body frame is S = Tc·S_joint.
#include "loopdyn/core/kinematics.hpp"

namespace loopdyn {

KinematicsData::KinematicsData(const Model& model)
    : q(model.neutral_q()), X_parent(model.nbodies), X_world(model.nbodies), S(Mat6X::Zero(6, model.nv)),
      v(model.nbodies, Vec6::Zero()), c(model.nbodies, Vec6::Zero()) {}

void update_positions(const Model& model, KinematicsData& kin, const Eigen::Ref<const VecX>& q) {
  kin.q = q;
  for (int i = 0; i < model.nbodies; ++i) update_position(model, kin, q, i);
}

void update_position(const Model& model, KinematicsData& kin, const Eigen::Ref<const VecX>& q, int i) {
  const ModelJoint& mj = model.joints[i];
  std::visit(
      [&](const auto& k) {
        constexpr int NV = std::decay_t<decltype(k)>::nv;
        const double* qi = q.data() + model.q_index[i];
        // X_parent = Tp Tj(q) Tc⁻¹; S = Tc S_joint.
        const Transform Tj = k.transform(qi);
        auto S = kin.S.template middleCols<NV>(model.v_index[i]);
        // Tp Tj with Tp = (I, p) is (Rj, pj + p): skip the rotation product.
        kin.X_parent[i] = mj.parent_frame_unrotated ? Transform{Tj.R, Tj.p + mj.parent_frame.p} : mj.parent_frame * Tj;
        if (mj.child_frame_identity) {
          S = k.subspace(qi);
        } else {
          kin.X_parent[i] = kin.X_parent[i] * mj.child_frame.inverse();
          S.noalias() = mj.child_frame.motion_matrix() * k.subspace(qi);
        }
      },
      mj.joint);
  const int p = model.parent[i];
  kin.X_world[i] = p < 0 ? kin.X_parent[i] : kin.X_world[p] * kin.X_parent[i];
}

void update_velocities(const Model& model, KinematicsData& kin, const Eigen::Ref<const VecX>& q,
                       const Eigen::Ref<const VecX>& u) {
  for (int i = 0; i < model.nbodies; ++i) update_velocity(model, kin, q, u, i);
}

void update_velocity(const Model& model, KinematicsData& kin, const Eigen::Ref<const VecX>& q,
                     const Eigen::Ref<const VecX>& u, int i) {
  const ModelJoint& mj = model.joints[i];
  std::visit(
      [&](const auto& k) {
        constexpr int NV = std::decay_t<decltype(k)>::nv;
        const int vi = model.v_index[i];
        // vJ = S u_i; v_i = X⁻¹ v_parent + vJ; c_i = Ṡu + v_i × vJ (Featherstone eq 5.7).
        Vec6 vJ = Vec6::Zero();
        if constexpr (NV > 0) vJ.noalias() = kin.S.template middleCols<NV>(vi) * u.template segment<NV>(vi);
        const int p = model.parent[i];
        kin.v[i] = p < 0 ? vJ : Vec6(kin.X_parent[i].inv_act_motion(kin.v[p]) + vJ);
        const Vec6 cJ = k.bias(q.data() + model.q_index[i], u.data() + vi);
        kin.c[i] = (mj.child_frame_identity ? cJ : mj.child_frame.act_motion(cJ)) + cross_motion(kin.v[i], vJ);
      },
      mj.joint);
}

void body_accelerations(const Model& model, const KinematicsData& kin, const Eigen::Ref<const VecX>& udot,
                        std::vector<Vec6>& a) {
  a.resize(model.nbodies);
  for (int i = 0; i < model.nbodies; ++i) {
    // a_i = X⁻¹ a_parent + S u̇_i + c_i.
    const int p = model.parent[i];
    a[i] = kin.c[i] + kin.S.middleCols(model.v_index[i], model.nv_joint[i]) *
                          udot.segment(model.v_index[i], model.nv_joint[i]);
    if (p >= 0) a[i] += kin.X_parent[i].inv_act_motion(a[p]);
  }
}

Vec3 point_position(const KinematicsData& kin, int body, const Vec3& point) {
  return body < 0 ? point : kin.X_world[body].apply(point);
}

Vec6 body_velocity_world(const KinematicsData& kin, int body) {
  return body < 0 ? Vec6::Zero() : kin.X_world[body].act_motion(kin.v[body]);
}

Vec3 point_velocity(const KinematicsData& kin, int body, const Vec3& point) {
  // v_point = v_O + ω × x (world frame, about the world origin).
  const Vec6 v = body_velocity_world(kin, body);
  return v.tail<3>() + v.head<3>().cross(point_position(kin, body, point));
}

void frame_jacobian(const Model& model, const KinematicsData& kin, int body, const Transform& frame,
                    Eigen::Ref<Mat6X> J) {
  J.setZero();
  if (body < 0) return;
  // Column k of an ancestor joint j: its subspace column moved from body j to the frame.
  const Transform frame_world = kin.X_world[body] * frame;
  for (int j = body; j >= 0; j = model.parent[j]) {
    for (int k = 0; k < model.nv_joint[j]; ++k) {
      const int col = model.v_index[j] + k;
      J.col(col) = frame_world.inv_act_motion(kin.X_world[j].act_motion(kin.S.col(col)));
    }
  }
}

void point_jacobian(const Model& model, const KinematicsData& kin, int body, const Vec3& point,
                    Eigen::Ref<Eigen::Matrix<double, 3, Eigen::Dynamic>> J) {
  J.setZero();
  if (body < 0) return;
  const Vec3 x = point_position(kin, body, point);
  for (int j = body; j >= 0; j = model.parent[j]) {
    for (int k = 0; k < model.nv_joint[j]; ++k) {
      const int col = model.v_index[j] + k;
      const Vec6 s = kin.X_world[j].act_motion(kin.S.col(col));
      J.col(col) = s.tail<3>() + s.head<3>().cross(x);  // v = v_O + ω × x
    }
  }
}

}  // namespace loopdyn
