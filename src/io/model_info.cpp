#include "loopdyn/io/model_info.hpp"

#include "loopdyn/core/names.hpp"
#include "loopdyn/formulations/formulation.hpp"
#include "loopdyn/loops/loop_structure.hpp"
#include "loopdyn/loops/constraints.hpp"
#include "loopdyn/formulations/registry.hpp"
#include "loopdyn/run/method_choice.hpp"
#include "loopdyn/run/start_state.hpp"

#include <memory>
#include <optional>

namespace loopdyn {

namespace {

// The survey of change points from the start state `loopdyn simulate` takes (the model's state,
// assembled) when the motion can reach one of them; nullopt otherwise, or when the state does not
// assemble (the run says why).
std::optional<SurveyedStart> reachable_change_points(const Model& model) {
  if (!model.has_loops()) return std::nullopt;
  try {
    const StartState start = start_state(model, model.q0, model.u0, true);
    SurveyedStart s{start.q, start.u, survey_change_points(model, model.loops().constraints, start.q, start.u)};
    if (first_reachable(model, s.survey, s.q0, s.u0)) return s;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

// Why method m does not take the model: its scope at q0, or, where the motion can reach a change
// point, the refusal its run would make (the Simulator's, with default settings).
std::string scope_problem(const Model& model, const MethodInfo& m, const std::optional<SurveyedStart>& start) {
  std::string problem = m.scope_problem(model, model.q0);
  if (!problem.empty() || !start) return problem;
  try {
    const std::unique_ptr<Formulation> f = make_formulation(m.name, model, FormulationSettings{});
    return change_point_problem(model, start->survey, start->q0, start->u0, m.name, f->change_point_refusal());
  } catch (const std::exception& e) {
    return e.what();
  }
}

}  // namespace

ModelSummary summarize(const Model& model) {
  auto body_label = [&](int b) { return b < 0 ? ground_name : std::string_view(model.body_name[b]); };
  ModelSummary s{};
  s.name = model.name;
  s.bodies.reserve(static_cast<std::size_t>(model.nbodies));
  s.tree_joints.reserve(static_cast<std::size_t>(model.nbodies));
  for (int i = 0; i < model.nbodies; ++i) {
    s.bodies.push_back({model.body_name[i], model.mass[i], body_label(model.parent[i])});
    const ModelJoint& j = model.joints[i];
    s.tree_joints.push_back({j.name, joint_type_name(j.joint), body_label(j.parent), body_label(j.child),
                             model.nq_joint[i], model.nv_joint[i]});
  }
  const Constraints& cons = model.loops().constraints;
  for (std::size_t k = 0; k < model.loop_joints.size(); ++k) {
    const ModelJoint& j = model.loop_joints[k];
    ModelSummary::LoopJoint& loop = s.loop_joints.emplace_back(ModelSummary::LoopJoint{
        j.name, joint_type_name(j.joint), body_label(j.parent), body_label(j.child), 6 - joint_nv(j.joint), {}, {}});
    for (const ConstraintRow& r : cons.dropped())
      if (r.loop == static_cast<int>(k) && r.kind != ConstraintRow::Kind::coupling) loop.redundant_rows.push_back(r.label);
    for (const ConstraintRow& r : cons.alternates())
      if (r.loop == static_cast<int>(k)) loop.alternate_rows.push_back(r.label);
  }
  for (const ModelCoupling& c : model.couplings)
    if (c.drive) s.drives.push_back({c.name, model.joints[c.terms[0].joint].name, c.value.describe()});
  s.nq = model.nq;
  s.nv = model.nv;
  s.constraints = static_cast<std::size_t>(cons.rows());
  s.redundant_rows = cons.dropped().size();
  const RankInfo rank = constraint_rank(model, cons, model.q0);
  s.loop_jacobian_rank = rank.rank;
  s.dof_gruebler = model.dof_gruebler;
  s.dof_rank = rank.dof;
  // 002 §4.2 aggregated bodies, with their independent speeds at the initial state.
  const AggregatedTree& agg = model.loops().aggregation;
  const std::vector<int> independent = model.loops().independent_speeds(model, model.q0);
  for (std::size_t n = 0; n < agg.nodes.size(); ++n) {
    const AggregatedBody& node = agg.nodes[n];
    if (!node.aggregated()) continue;
    ModelSummary::Aggregated a{{}, {}, {}, body_label(node.parent_body), node.nv, independent[n]};
    for (int b : node.bodies) a.bodies.push_back(model.body_name[b]);
    for (int k : node.loop_joints) a.loop_joints.push_back(model.loop_joints[k].name);
    for (int k : node.couplings) a.couplings.push_back(model.couplings[k].name);
    s.aggregated.push_back(std::move(a));
  }
  // For the default integrator (dopri5, run.hpp), and for a fixed step (rk4).
  s.default_method = default_method(model, IntegratorKind::dopri5);
  s.default_method_fixed_step = default_method(model, IntegratorKind::rk4);
  const std::optional<SurveyedStart> start = reachable_change_points(model);
  for (const MethodInfo& m : loopdyn::methods())
    if (m.implemented()) s.methods.push_back({m.name, scope_problem(model, m, start)});
  s.markers = model.markers.size();
  s.force_elements = model.forces.size();
  return s;
}

nlohmann::json describe(const ModelSummary& s) {
  using nlohmann::json;
  json bodies = json::array(), joints = json::array(), loops = json::array(), drives = json::array(),
       aggregated = json::array(), scope = json::object();
  for (const ModelSummary::Body& b : s.bodies)
    bodies.push_back({{"name", b.name}, {"mass", b.mass}, {"parent", b.parent}});
  for (const ModelSummary::Joint& j : s.tree_joints)
    joints.push_back({{"name", j.name}, {"type", j.type}, {"parent", j.parent}, {"child", j.child}, {"nq", j.nq}, {"nv", j.nv}});
  for (const ModelSummary::LoopJoint& j : s.loop_joints)
    loops.push_back({{"name", j.name}, {"type", j.type}, {"parent", j.parent}, {"child", j.child},
                     {"constraint_rows", j.constraint_rows}, {"redundant_rows", j.redundant_rows},
                     {"alternate_rows", j.alternate_rows}});
  for (const ModelSummary::Drive& d : s.drives) drives.push_back({{"name", d.name}, {"joint", d.joint}, {"motion", d.motion}});
  for (const ModelSummary::Aggregated& a : s.aggregated)
    aggregated.push_back({{"bodies", a.bodies}, {"loop_joints", a.loop_joints}, {"couplings", a.couplings},
                          {"parent", a.parent}, {"joint_speeds", a.joint_speeds},
                          {"independent_speeds", a.independent_speeds}});
  for (const ModelSummary::Scope& m : s.methods)
    scope[std::string(m.method)] = {{"covers", m.problem.empty()}, {"reason", m.problem}};
  return {{"name", s.name},
          {"bodies", bodies},
          {"tree_joints", joints},
          {"loop_joints", loops},
          {"drives", drives},
          {"nq", s.nq},
          {"nv", s.nv},
          {"loop_constraint_rows", s.constraints + s.redundant_rows},
          {"redundant_rows", s.redundant_rows},
          {"constraints", s.constraints},
          {"loop_jacobian_rank", s.loop_jacobian_rank},
          {"dof_gruebler", s.dof_gruebler},
          {"dof_rank", s.dof_rank},
          {"aggregated_bodies", aggregated},
          {"default_method", {{"method", s.default_method.method}, {"reason", s.default_method.reason}}},
          {"default_method_fixed_step",
           {{"method", s.default_method_fixed_step.method}, {"reason", s.default_method_fixed_step.reason}}},
          {"methods", scope},
          {"markers", s.markers},
          {"force_elements", s.force_elements}};
}

nlohmann::json describe(const Model& model) { return describe(summarize(model)); }

std::string model_headline(const Model& model) {
  return model.name + " (" + counted(static_cast<std::size_t>(model.nbodies), "body", "bodies") +
         ", nq = " + std::to_string(model.nq) + ", nv = " + std::to_string(model.nv) + ", " +
         counted(model.loop_joints.size(), "loop-closing joint", "loop-closing joints") + ")";
}

}  // namespace loopdyn
