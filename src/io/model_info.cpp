#include "loopdyn/io/model_info.hpp"

#include "loopdyn/core/names.hpp"
#include "loopdyn/formulations/formulation.hpp"
#include "loopdyn/loops/loop_structure.hpp"
#include "loopdyn/loops/constraints.hpp"
#include "loopdyn/formulations/registry.hpp"
#include "loopdyn/run/method_choice.hpp"

namespace loopdyn {

nlohmann::json describe(const Model& model) {
  using nlohmann::json;
  auto body_label = [&](int b) { return b < 0 ? std::string(ground_name) : model.body_name[b]; };
  json bodies = json::array(), joints = json::array(), loops = json::array();
  for (int i = 0; i < model.nbodies; ++i) {
    bodies.push_back({{"name", model.body_name[i]}, {"mass", model.mass[i]}, {"parent", body_label(model.parent[i])}});
    const ModelJoint& j = model.joints[i];
    joints.push_back({{"name", j.name}, {"type", joint_type_name(j.joint)}, {"parent", body_label(j.parent)},
                      {"child", body_label(j.child)}, {"nq", model.nq_joint[i]}, {"nv", model.nv_joint[i]}});
  }
  const Constraints& cons = model.loops().constraints;
  for (std::size_t k = 0; k < model.loop_joints.size(); ++k) {
    const ModelJoint& j = model.loop_joints[k];
    json dropped = json::array(), alternates = json::array();
    for (const ConstraintRow& r : cons.dropped())
      if (r.loop == static_cast<int>(k) && r.kind != ConstraintRow::Kind::coupling) dropped.push_back(r.label);
    for (const ConstraintRow& r : cons.alternates())
      if (r.loop == static_cast<int>(k)) alternates.push_back(r.label);
    loops.push_back({{"name", j.name}, {"type", joint_type_name(j.joint)}, {"parent", body_label(j.parent)},
                     {"child", body_label(j.child)}, {"constraint_rows", 6 - joint_nv(j.joint)},
                     {"redundant_rows", dropped}, {"alternate_rows", alternates}});
  }
  json drives = json::array();
  for (const ModelCoupling& c : model.couplings)
    if (c.drive)
      drives.push_back({{"name", c.name}, {"joint", model.joints[c.terms[0].joint].name}, {"motion", c.value.describe()}});
  const RankInfo rank = constraint_rank(model, cons, model.q0);
  // 002 §4.2 aggregated bodies, with their independent speeds at the initial state.
  const AggregatedTree& agg = model.loops().aggregation;
  const std::vector<int> independent = model.loops().independent_speeds(model, model.q0);
  json aggregated = json::array();
  for (std::size_t n = 0; n < agg.nodes.size(); ++n) {
    const AggregatedBody& node = agg.nodes[n];
    if (!node.aggregated()) continue;
    json held = json::array(), cuts = json::array(), gears = json::array();
    for (int b : node.bodies) held.push_back(model.body_name[b]);
    for (int k : node.loop_joints) cuts.push_back(model.loop_joints[k].name);
    for (int k : node.couplings) gears.push_back(model.couplings[k].name);
    aggregated.push_back({{"bodies", held}, {"loop_joints", cuts}, {"couplings", gears},
                          {"parent", body_label(node.parent_body)}, {"joint_speeds", node.nv},
                          {"independent_speeds", independent[n]}});
  }
  // For the default integrator (dopri5, run.hpp), and for a fixed step (rk4) when it differs.
  const MethodChoice choice = default_method(model, IntegratorKind::dopri5);
  const MethodChoice fixed = default_method(model, IntegratorKind::rk4);
  json scope = json::object();
  for (const MethodInfo& m : loopdyn::methods())
    if (m.implemented()) {
      const std::string problem = m.scope_problem(model, model.q0);
      scope[std::string(m.name)] = {{"covers", problem.empty()}, {"reason", problem}};
    }
  return {{"name", model.name},
          {"bodies", bodies},
          {"tree_joints", joints},
          {"loop_joints", loops},
          {"drives", drives},
          {"nq", model.nq},
          {"nv", model.nv},
          {"loop_constraint_rows", cons.rows() + cons.dropped().size()},
          {"redundant_rows", cons.dropped().size()},
          {"constraints", cons.rows()},
          {"loop_jacobian_rank", rank.rank},
          {"dof_gruebler", model.dof_gruebler},
          {"dof_rank", rank.dof},
          {"aggregated_bodies", aggregated},
          {"default_method", {{"method", choice.method}, {"reason", choice.reason}}},
          {"default_method_fixed_step", {{"method", fixed.method}, {"reason", fixed.reason}}},
          {"methods", scope},
          {"markers", model.markers.size()},
          {"force_elements", model.forces.size()}};
}

std::string model_headline(const Model& model) {
  return model.name + " (" + counted(static_cast<std::size_t>(model.nbodies), "body", "bodies") +
         ", nq = " + std::to_string(model.nq) + ", nv = " + std::to_string(model.nv) + ", " +
         counted(model.loop_joints.size(), "loop-closing joint", "loop-closing joints") + ")";
}

}  // namespace loopdyn
