// Velocity-level loop-closure Jacobian of loop-closing joints (see loops.hpp).
#include "loopdyn/loops.hpp"

#include <Eigen/QR>
#include <Eigen/SVD>
#include <limits>

namespace loopdyn {

namespace {

// Basis (6 x dof) of the motion a joint allows, in the child joint frame, for the current relative
// pose R_rel of Fc in Fp. Only the universal joint's subspace depends on the pose: its first axis is
// fixed in Fp, so in Fc it reads R_relᵀ axis.
Mat6X allowed_motion(const Joint& joint, const Mat3& R_rel) {
  return std::visit(
      [&](const auto& k) -> Mat6X {
        using K = std::decay_t<decltype(k)>;
        if constexpr (std::is_same_v<K, Universal>) {
          Mat6X S = Mat6X::Zero(6, 2);
          S.block<3, 1>(0, 0) = R_rel.transpose() * k.axis;
          S.block<3, 1>(0, 1) = k.axis2;
          return S;
        } else {
          // Every other subspace is constant in Fc up to a rotation within the joint's own
          // motion, which leaves its span unchanged; evaluate at the neutral q.
          std::array<double, 7> q{};
          k.neutral(q.data());
          return Mat6X(k.subspace(q.data()));
        }
      },
      joint);
}

// Orthonormal complement (6 x (6 − dof)) of the allowed motion.
Mat6X constrained_directions(const Mat6X& allowed) {
  const int dof = static_cast<int>(allowed.cols());
  Eigen::HouseholderQR<Mat6X> qr(allowed);
  const Mat6 Q = qr.householderQ();
  return Q.rightCols(6 - dof);
}

}  // namespace

int loop_rows(const ModelJoint& joint) { return 6 - joint_nv(joint.joint); }

int loop_rows(const Model& model) {
  int m = 0;
  for (const ModelJoint& lj : model.loop_joints) m += loop_rows(lj);
  return m;
}

void loop_jacobian(const Model& model, const KinematicsData& kin, Eigen::Ref<MatX> G) {
  G.setZero();
  Mat6X Jc(6, model.nv), Jp(6, model.nv);
  int row = 0;
  for (const ModelJoint& lj : model.loop_joints) {
    // Relative twist of Fc w.r.t. Fp in Fc's axes: Jc u − (Fc⁻¹ Fp) Jp u.
    const Transform Fp = lj.parent < 0 ? lj.parent_frame : kin.X_world[lj.parent] * lj.parent_frame;
    const Transform Fc = lj.child < 0 ? lj.child_frame : kin.X_world[lj.child] * lj.child_frame;
    const Transform Fc_Fp = Fc.inverse() * Fp;
    frame_jacobian(model, kin, lj.child, lj.child_frame, Jc);
    frame_jacobian(model, kin, lj.parent, lj.parent_frame, Jp);
    const Mat6X rel = Jc - Fc_Fp.motion_matrix() * Jp;
    const Mat6X T = constrained_directions(allowed_motion(lj.joint, (Fp.inverse() * Fc).R));
    const int r = static_cast<int>(T.cols());
    G.middleRows(row, r).noalias() = T.transpose() * rel;
    row += r;
  }
}

RankInfo loop_rank(const Model& model, const VecX& q) {
  KinematicsData kin(model);
  update_positions(model, kin, q);
  MatX G(loop_rows(model), model.nv);
  loop_jacobian(model, kin, G);
  RankInfo info;
  if (G.rows() == 0 || G.cols() == 0) {
    info.dof = model.nv;
    return info;
  }
  const Eigen::JacobiSVD<MatX> svd(G);
  const VecX s = svd.singularValues();
  info.tolerance = static_cast<double>(std::max(G.rows(), G.cols())) * std::numeric_limits<double>::epsilon() *
                   (s.size() ? s(0) : 0.0);
  info.rank = static_cast<int>((s.array() > info.tolerance).count());
  info.dof = model.nv - info.rank;
  return info;
}

}  // namespace loopdyn
