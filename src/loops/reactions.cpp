// Joint reaction forces from the multipliers and the Newton-Euler pass (reactions.hpp has the math).
#include "loopdyn/loops/reactions.hpp"

#include <sstream>
#include <stdexcept>

namespace loopdyn {

namespace {

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
  constraint_position(model_, constraints_, kin_, 0.0, cons_data_, phi_);
  // Coupling rows act as joint torques, which the Newton-Euler pass returns in τ.
  constraint_forces(model_, constraints_, kin_, cons_data_, lambda, loop_world_, fext_, nullptr);
  for (std::size_t k = 0; k < model_.loop_joints.size(); ++k) {
    const Mat3& R = cons_data_.fc[k].R;  // child joint frame axes
    auto out = wrenches_.col(model_.nbodies + static_cast<Eigen::Index>(k));
    out.head<3>().noalias() = R.transpose() * loop_world_.col(k).head<3>();
    out.tail<3>().noalias() = R.transpose() * loop_world_.col(k).tail<3>();
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
