#include "loopdyn/formulations/formulation.hpp"

#include "loopdyn/loops/loop_structure.hpp"
#include "loopdyn/loops/row_choice.hpp"

namespace loopdyn {

const Constraints& Formulation::constraints() const { return model_.loops().constraints; }

bool Formulation::choose_rows_again(RowChoice& rows, double t, const Eigen::Ref<const VecX>& q) const {
  const std::string exchanged = rows.choose_again(q);
  if (exchanged.empty()) return false;
  report(t, std::string(name()) + ": rows chosen again along the motion, where the kept ones lost rank and the " +
                "loop's others did not (geometric redundancy, row_choice.hpp): " + exchanged);
  return true;
}

Formulation::Formulation(const Model& model)
    : model_(model), q_(model.nq), u_(model.nv), udot_(model.nv), evaluated_(model.nq + model.nv) {}

void Formulation::to_state(const VecX& q, const VecX& u, Eigen::Ref<VecX> x) const {
  x.head(model_.nq) = q;
  x.tail(model_.nv) = u;
  model_.normalize(x.head(model_.nq));
}

void Formulation::derivative(double t, const VecX& x, Eigen::Ref<VecX> dx) {
  q_ = x.head(model_.nq);
  u_ = x.tail(model_.nv);
  complete_state(t, q_, u_);
  evaluated_t_ = std::numeric_limits<double>::quiet_NaN();  // until this call has its result
  accelerations(t, q_, u_, udot_);
  model_.qdot(q_, u_, dx.head(model_.nq));
  dx.tail(model_.nv) = udot_;
  evaluated_.head(model_.nq) = q_;
  evaluated_.tail(model_.nv) = u_;
  evaluated_t_ = t;
}

bool Formulation::evaluated_at(double t, const VecX& x) const {
  return t == evaluated_t_ && x.size() == evaluated_.size() && x == evaluated_;
}

void Formulation::accept(double t, Eigen::Ref<VecX> x) {
  model_.normalize(x.head(model_.nq));
  complete_accepted_state(t, x.head(model_.nq), x.tail(model_.nv));
}

void Formulation::complete(double t, Eigen::Ref<VecX> x) { complete_state(t, x.head(model_.nq), x.tail(model_.nv)); }

void Formulation::joint_accelerations(double t, const VecX& x, Eigen::Ref<VecX> udot) {
  to_joint(x, q_, u_);
  accelerations(t, q_, u_, udot);
}

void Formulation::to_joint(const VecX& x, Eigen::Ref<VecX> q, Eigen::Ref<VecX> u) const {
  q = x.head(model_.nq);
  u = x.tail(model_.nv);
}

}  // namespace loopdyn
