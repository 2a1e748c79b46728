#include "loopdyn/formulations/embedding.hpp"

#include <sstream>

#include "loopdyn/core/linalg.hpp"
#include "loopdyn/loops/loop_structure.hpp"

namespace loopdyn {

namespace {

std::vector<ConstraintBlock> node_blocks(const Model& model, const Constraints& cons, const AggregatedTree& a) {
  std::vector<ConstraintBlock> out;
  for (const AggregatedBody& node : a.nodes)
    out.push_back(ConstraintBlock::of(model, cons, node.bodies, node.loop_joints, node.couplings));
  return out;
}

}  // namespace

Embedding::Embedding(const Model& model, const FormulationSettings& settings)
    : Formulation(model), rows_(model), cons_(rows_.constraints()), aggregation_(model.loops().aggregation), aba_(model),
      partition_(model, cons_, aba_.kin, node_blocks(model, cons_, aggregation_), settings,
                 [this](double t, std::string message) { report(t, message.insert(0, "embedding: ")); }),
      forces_(model), lambda_(VecX::Zero(cons_.rows())), on_demand_(model.nq, model.nv) {
  tree_.node_of_body.assign(model.nbodies, -1);
  // Reserved: an AggregatedBodyData is not moved after construction (Eigen's LLT leaves its status
  // uninitialized until the first factorization, and a move would read it).
  tree_.nodes.reserve(aggregation_.nodes.size());
  for (int n = 0; n < static_cast<int>(aggregation_.nodes.size()); ++n) {
    const AggregatedBody& node = aggregation_.nodes[n];
    if (!node.aggregated()) continue;
    Embedded e;
    e.node = static_cast<int>(tree_.nodes.size());
    e.block = n;
    const int rows = static_cast<int>(partition_.block(n).block().rows.size());
    e.gamma.resize(rows);
    e.lambda.resize(rows);
    e.rho.resize(node.nv);
    e.force.resize(node.bodies.size());
    tree_.nodes.emplace_back(model, node.bodies);
    for (int b : node.bodies) tree_.node_of_body[b] = e.node;
    embedded_.push_back(std::move(e));
  }
}

void Embedding::complete_state(double t, Eigen::Ref<VecX> q, Eigen::Ref<VecX> u) {
  on_demand_.overwritten();
  partition_.complete(t, q, u, false);
}

void Embedding::complete_accepted_state(double t, Eigen::Ref<VecX> q, Eigen::Ref<VecX> u) {
  on_demand_.overwritten();
  if (choose_rows_again(rows_, t, q)) partition_.forget();  // other rows: a new analysis
  partition_.complete(t, q, u, true);
}

void Embedding::embed(double t) {
  for (Embedded& e : embedded_) {
    BlockPartition& p = partition_.block(e.block);
    AggregatedBodyData& g = tree_.nodes[e.node];
    p.partial_velocity_matrix(g.X);  // 002 eq 60
    // The same span in an orthonormal basis: any basis gives the same θ̈ (eq 56), and this one
    // does not multiply the condition number of D_S = Xᵀ P X (eq 51) by cond(X)². One column has
    // no condition number to lose: it keeps eq 60's, whose β is the independent speed itself.
    if (g.X.cols() > 1) orthonormalize_columns(g.X);
    block_bias(model_, cons_, p.block(), aba_.kin, t, partition_.constraint_data(), e.gamma);
    p.particular_solution(e.gamma, g.x);  // Ẋ θ̇ of 002 eqs 30, 61
  }
}

void Embedding::recover_multipliers() {
  for (Embedded& e : embedded_) {
    aggregated_loop_forces(model_, aba_, tree_.nodes[e.node], forces_.applied.tau, e.force, e.rho);
    BlockPartition& p = partition_.block(e.block);
    p.multipliers(e.rho, e.lambda);  // 001 eq 24 on the aggregated body's rows
    for (std::size_t r = 0; r < p.block().rows.size(); ++r) lambda_(p.block().rows[r]) = e.lambda(r);
  }
}

void Embedding::accelerations(double t, const VecX& q_in, const VecX& u_in, Eigen::Ref<VecX> udot) {
  partition_.prepare(t, q_in, u_in);  // positions and velocities, loops closed node by node
  const VecX& q = partition_.state_q();
  const VecX& u = partition_.state_u();
  embed(t);
  aba_factor(model_, aba_, tree_);  // 002 eq 50
  aba_velocity_products(model_, aba_);
  evaluate_forces(model_, aba_.kin, t, q, u, forces_);
  aba_solve(model_, aba_, tree_, forces_.applied.tau, &forces_.f_body, Bias::yes, udot);  // 002 eqs 54-57
  on_demand_.evaluated(t, q_in, u_in);
  if (!udot.allFinite()) {
    std::ostringstream s;
    s << "embedding: non-finite acceleration at t = " << t << " (check the state and the applied forces)";
    throw std::runtime_error(s.str());
  }
}

void Embedding::settle_multipliers() {
  on_demand_.settle([this](double t, const VecX& q, const VecX& u, VecX& udot) { accelerations(t, q, u, udot); },
                    [this] { recover_multipliers(); });
}

const VecX& Embedding::multipliers() const {
  // The interface's getter is const; what it settles is workspace (multipliers_on_demand.hpp), and
  // no Embedding is made const by the library (make_formulation).
  if (!on_demand_.current()) const_cast<Embedding&>(*this).settle_multipliers();
  return lambda_;
}

}  // namespace loopdyn
