#include "loopdyn/formulation.hpp"

#include <type_traits>

#include "loopdyn/change_points.hpp"
#include "loopdyn/formulations/embedding.hpp"
#include "loopdyn/formulations/lagrange_dense.hpp"
#include "loopdyn/formulations/gcp.hpp"
#include "loopdyn/formulations/lagrange_on.hpp"
#include "loopdyn/formulations/nullspace.hpp"
#include "loopdyn/formulations/rcr.hpp"
#include "loopdyn/formulations/dca.hpp"
#include "loopdyn/formulations/srm.hpp"
#include "loopdyn/formulations/tree.hpp"
#include "loopdyn/loop_structure.hpp"
#include "loopdyn/row_choice.hpp"

namespace loopdyn {

namespace {

template <class F>
std::unique_ptr<Formulation> make(const Model& model, const FormulationSettings& settings) {
  if constexpr (std::is_constructible_v<F, const Model&, const FormulationSettings&>)
    return std::make_unique<F>(model, settings);
  else
    return std::make_unique<F>(model);
}

}  // namespace

const Constraints& Formulation::constraints() const { return model_.loops().constraints; }

void Formulation::choose_rows_again(RowChoice& rows, double t, const Eigen::Ref<const VecX>& q) const {
  if (const std::string exchanged = rows.choose_again(q); !exchanged.empty())
    report(t, std::string(name()) + ": rows chosen again along the motion, where the kept ones lost rank and the " +
                  "loop's others did not (geometric redundancy, row_choice.hpp): " + exchanged);
}

Formulation::Formulation(const Model& model)
    : model_(model), q_(model.nq), u_(model.nv), udot_(model.nv) {}

void Formulation::to_state(const VecX& q, const VecX& u, Eigen::Ref<VecX> x) const {
  x.head(model_.nq) = q;
  x.tail(model_.nv) = u;
  model_.normalize(x.head(model_.nq));
}

void Formulation::derivative(double t, const VecX& x, Eigen::Ref<VecX> dx) {
  q_ = x.head(model_.nq);
  u_ = x.tail(model_.nv);
  complete_state(t, q_, u_);
  accelerations(t, q_, u_, udot_);
  model_.qdot(q_, u_, dx.head(model_.nq));
  dx.tail(model_.nv) = udot_;
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

const std::vector<MethodInfo>& methods() {
  using C = Coordinates;
  static const std::vector<MethodInfo> table{
      {"tree", "articulated-body algorithm, trees only", "Featherstone; 002 §6", "O(n)", C::joint, false,
       &TreeFormulation::out_of_scope, &make<TreeFormulation>},
      {"lagrange-dense", "CRBA mass matrix, (n+m) KKT solve, Baumgarte", "001 §2.1", "O(n³ + m³)", C::joint, true,
       nullptr, &make<LagrangeDense>},
      {"lagrange-on", "\"traditional O(n)\": u̇ = η + ζλ, m×m solve", "000 §2.3-2.6", "O(n + nm² + m³)", C::joint, true,
       nullptr, &make<LagrangeOn>},
      {"gcp", "generalized coordinate partitioning, Newton position and velocity analysis", "001 §2.2",
       "O(n³ + m³)", C::joint, true, nullptr, &make<Gcp>},
      {"nullspace", "partial velocity matrix B, Bᵀ M B in the independent speeds", "001 §3", "O(n³)", C::joint, true, nullptr,
       &make<Nullspace>},
      {"rcr", "recursive coordinate reduction, loop by loop, velocity constraints exact; loops sharing a base",
       "000 §3-4", "O(n + m)", C::joint, true, &Rcr::out_of_scope, &make<Rcr>},
      {"embedding", "constraint embedding: loops folded into aggregated bodies, ABA over them", "002 §4-9",
       "O(n) for small loops", C::joint, true, nullptr, &make<Embedding>},
      {"srm", "sequential regularization: S penalty iterates, loops as body wrenches, fixed-step rk2/rk4",
       "003 §3", "O(n + m) × S", C::joint, true, nullptr, &make<Srm>, true},
      {"dca", "divide and conquer over an assembly tree, augmented Lagrangian, mass-orthogonal projections, parallel",
       "004 §2-3", "O(k n), O(k log n) parallel; nets O(k n^1.5)", C::absolute, true, nullptr, &make<Dca>},
  };
  return table;
}

const MethodInfo* find_method(std::string_view name) {
  for (const MethodInfo& m : methods())
    if (m.name == name) return &m;
  return nullptr;
}

const MethodInfo& method_info(std::string_view name) {
  if (const MethodInfo* m = find_method(name)) return *m;
  std::string list;
  for (const MethodInfo& m : methods()) list.append(list.empty() ? "" : ", ").append(m.name);
  throw ModelError("unknown method '" + std::string(name) + "' (known: " + list + ")");
}

std::vector<std::string> loop_methods() {
  std::vector<std::string> out;
  for (const MethodInfo& m : methods())
    if (m.implemented() && m.name != "tree") out.emplace_back(m.name);
  return out;
}

std::string methods_markdown() {
  std::string s = "| `--method` | what | paper | cost per call | coordinates | multipliers | status |\n";
  s += "|---|---|---|---|---|---|---|\n";
  for (const MethodInfo& m : methods()) {
    s.append("| `").append(m.name).append("` | ").append(m.what).append(" | ").append(m.paper).append(" | ");
    s.append(m.cost).append(" | ").append(m.coordinates == Coordinates::joint ? "joint" : "absolute").append(" | ");
    s.append(m.multipliers ? "yes" : "no").append(" | ").append(m.implemented() ? "available" : "planned").append(" |\n");
  }
  return s;
}

MethodChoice default_method(const Model& model, IntegratorKind integrator) {
  return default_method(model, model.q0, integrator);
}

MethodChoice default_method(const Model& model, const VecX& q, IntegratorKind integrator) {
  if (!model.has_loops()) return {"tree", "no loop-closing joints or couplings: the articulated-body algorithm"};
  const int largest = model.loops().aggregation.largest_nv();
  std::string size = "the largest aggregated body has ";
  size.append(std::to_string(largest)).append(" joint speeds");
  if (largest <= kSmallAggregatedBody)
    return {"embedding", size + " (<= " + std::to_string(kSmallAggregatedBody) +
                             "): constraint embedding, linear in the number of aggregated bodies"};
  size.append(" (> ").append(std::to_string(kSmallAggregatedBody)).append(")");
  for (const ChangePoint& p : survey_change_points(model, model.loops().constraints, q).points)
    if (may_reach(model, p, q, model.u0))
      return {"embedding", size + ", but the motion can reach a change point of the loops (" + describe(model, p) +
                               "): embedding is the method within IFToMM's bound on the 40-loop N-four-bar (docs/results.md)"};
  if (method_info("rcr").scope_problem(model, q).empty())
    return {"rcr", size + ", but its loops share their base and close one at a time: recursive coordinate "
                          "reduction stays linear in its size"};
  if (integrator != IntegratorKind::dopri5 && largest >= kSrmAggregatedBody)
    return {"srm", size + " (>= " + std::to_string(kSrmAggregatedBody) +
                       "), its loops do not close one at a time, and the step is fixed: sequential "
                       "regularization is the linear method, where the dense one is cubic in that size"};
  return {"lagrange-dense", size + ": embedding's local solves would cost as much as the dense one" +
                                (integrator == IntegratorKind::dopri5 && largest >= kSrmAggregatedBody
                                     ? std::string(", and dopri5's tolerances rule out srm's fixed-step regularization")
                                     : std::string())};
}

std::unique_ptr<Formulation> make_formulation(std::string_view name, const Model& model,
                                              const FormulationSettings& settings) {
  const MethodInfo& m = method_info(name);
  if (!m.implemented())
    throw ModelError("method '" + std::string(name) + "' (paper " + std::string(m.paper) + ") is not implemented yet");
  return m.make(model, settings);
}

}  // namespace loopdyn
