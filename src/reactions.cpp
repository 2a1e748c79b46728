// Joint reaction forces from the multipliers and the Newton-Euler pass (reactions.hpp has the math).
#include "loopdyn/reactions.hpp"

#include <sstream>
#include <stdexcept>

namespace loopdyn {

namespace {

// Spatial force [n; f] acting at world point x (world axes) as a body-frame force on `body`.
Vec6 world_wrench_on_body(const KinematicsData& kin, int body, const Vec6& w, const Vec3& x) {
  Vec6 about_origin = w;
  about_origin.head<3>() += x.cross(w.tail<3>());  // moment about the world origin
  return kin.X_world[body].inv_act_force(about_origin);
}

void check_size(const char* what, Eigen::Index actual, Eigen::Index expected) {
  if (actual == expected) return;
  std::ostringstream s;
  s << "Reactions::compute: " << what << " has " << actual << " entries, expected " << expected;
  throw std::invalid_argument(s.str());
}

}  // namespace

Reactions::Reactions(const Model& model, const Constraints& constraints)
    : model_(model), constraints_(constraints), kin_(model), cons_data_(model), forces_(model),
      rnea_(model), phi_(constraints_.rows()), tau_(model.nv), fext_(6, model.nbodies),
      loop_world_(6, model.loop_joints.size()), wrenches_(6, model.nbodies + model.loop_joints.size()) {}

void Reactions::loop_wrenches(const VecX& lambda) {
  // Joint frames at q (constraint_position updates them; Φ itself is not needed).
  constraint_position(model_, constraints_, kin_, cons_data_, phi_);
  loop_world_.setZero();
  const std::vector<ConstraintRow>& rows = constraints_.kept();
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const ConstraintRow& row = rows[r];
    if (row.kind == ConstraintRow::Kind::coupling) continue;  // a joint torque, in rnea's τ
    const auto &p = cons_data_.fp[row.loop], &c = cons_data_.fc[row.loop];
    const Vec3 b = p.R * row.u;
    if (row.kind == ConstraintRow::Kind::dot)
      loop_world_.col(row.loop).head<3>() -= lambda(r) * (c.R * row.w).cross(b);  // moment −λ a × b
    else
      loop_world_.col(row.loop).tail<3>() -= lambda(r) * b;  // force −λ b at x_c
  }
  for (std::size_t k = 0; k < model_.loop_joints.size(); ++k) {
    const ModelJoint& lj = model_.loop_joints[k];
    const auto& c = cons_data_.fc[k];
    const Vec6 w = loop_world_.col(k);
    auto out = wrenches_.col(model_.nbodies + static_cast<Eigen::Index>(k));  // child joint frame axes
    out.head<3>().noalias() = c.R.transpose() * w.head<3>();
    out.tail<3>().noalias() = c.R.transpose() * w.tail<3>();
    // Child side gets w, parent side −w, both at x_c.
    if (lj.child >= 0) fext_.col(lj.child) += world_wrench_on_body(kin_, lj.child, w, c.x);
    if (lj.parent >= 0) fext_.col(lj.parent) -= world_wrench_on_body(kin_, lj.parent, w, c.x);
  }
}

void Reactions::compute(double t, const VecX& q, const VecX& u, const VecX& udot, const VecX& lambda) {
  check_size("q", q.size(), model_.nq);
  check_size("u", u.size(), model_.nv);
  check_size("udot", udot.size(), model_.nv);
  check_size("lambda (multipliers of the kept constraint rows)", lambda.size(), constraints_.rows());
  update_positions(model_, kin_, q);
  update_velocities(model_, kin_, q, u);
  evaluate_forces(model_, kin_, t, q, u, forces_);
  fext_ = forces_.f_body;
  loop_wrenches(lambda);
  // Newton-Euler: f_i = I a_i + v_i ×* I v_i − fext_i + Σ_children X* f_child (Featherstone Table 5.1).
  rnea(model_, kin_, rnea_, udot, &fext_, tau_);
  for (int i = 0; i < model_.nbodies; ++i)
    wrenches_.col(i) = model_.joints[i].child_frame.inv_act_force(rnea_.f[i]);
}

std::vector<std::string> Reactions::column_names(const Model& model) {
  std::vector<std::string> names;
  auto add = [&](const std::string& joint) {
    for (const char* c : {".fx", ".fy", ".fz", ".tx", ".ty", ".tz"}) {
      std::string name = "reaction.";
      names.push_back(name.append(joint).append(c));
    }
  };
  for (const ModelJoint& j : model.joints) add(j.name);
  for (const ModelJoint& j : model.loop_joints) add(j.name);
  return names;
}

void Reactions::write_columns(Eigen::Ref<VecX> out) const {
  for (Eigen::Index k = 0; k < wrenches_.cols(); ++k) {
    out.segment<3>(6 * k) = wrenches_.col(k).tail<3>();     // fx fy fz
    out.segment<3>(6 * k + 3) = wrenches_.col(k).head<3>(); // tx ty tz
  }
}

}  // namespace loopdyn
