#include "loopdyn/formulations/tree.hpp"

#include <cmath>
#include <sstream>

namespace loopdyn {

std::string TreeFormulation::out_of_scope(const Model& model, const VecX& /*q*/) {
  if (!model.has_loops()) return {};
  std::ostringstream s;
  s << "method 'tree' handles mechanisms without loops or coordinate couplings, but '" << model.name << "' has";
  if (!model.loop_joints.empty()) {
    s << " loop-closing joint(s)";
    for (const ModelJoint& lj : model.loop_joints) s << " '" << lj.name << "'";
  }
  if (!model.couplings.empty()) {
    s << (model.loop_joints.empty() ? "" : " and") << " coupling(s)";
    for (const ModelCoupling& c : model.couplings) s << " '" << c.name << "'";
  }
  s << "; choose a loop formulation as `method` (`loopdyn methods` lists them)";
  return s.str();
}

namespace {
const Model& require_tree(const Model& model) {
  if (std::string problem = TreeFormulation::out_of_scope(model, model.q0); !problem.empty()) throw ModelError(problem);
  return model;
}
}  // namespace

TreeFormulation::TreeFormulation(const Model& model) : Formulation(require_tree(model)), aba_(model), forces_(model) {}

void TreeFormulation::accelerations(double t, const VecX& q, const VecX& u, Eigen::Ref<VecX> udot) {
  aba_factor(model_, aba_, q);
  aba_velocity(model_, aba_, q, u);
  evaluate_forces(model_, aba_.kin, t, q, u, forces_);
  aba_solve(model_, aba_, forces_.applied.tau, &forces_.f_body, Bias::yes, udot);
  if (!udot.allFinite()) {
    std::ostringstream s;
    s << "tree: non-finite acceleration at t = " << t << " (check the state and the applied forces)";
    throw std::runtime_error(s.str());
  }
}

}  // namespace loopdyn
