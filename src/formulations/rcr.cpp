#include "loopdyn/formulations/rcr.hpp"

#include <Eigen/LU>
#include <Eigen/QR>
#include <Eigen/SVD>
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "loopdyn/loops/aggregation.hpp"
#include "loopdyn/core/linalg.hpp"
#include "loopdyn/loops/loop_structure.hpp"

namespace loopdyn {

namespace {

// A speed counts as spanning a new constraint direction when Δ_k / ‖g_k‖² (sin² of its angle to
// the columns already eliminated) exceeds this: the rank rule of the loop's rows.
constexpr double kRankTolerance = 1e-10;
// A speed nearer the loop-closing joint is preferred while its Δ / ‖g‖² is within this factor of
// the best remaining one (000's order, unless it is markedly worse conditioned).
constexpr double kPreference = 0.1;

std::string body_label(const Model& m, int body) { return body < 0 ? std::string("ground") : m.body_name[body]; }

struct LoopInfo {
  std::string name;
  Subgraph graph;
  int loop_joint = -1, coupling = -1;
};

std::vector<LoopInfo> loops_of(const Model& m) {
  std::vector<LoopInfo> out;
  for (int k = 0; k < static_cast<int>(m.loop_joints.size()); ++k)
    out.push_back({m.loop_joints[k].name, loop_subgraph(m, k), k, -1});
  for (int k = 0; k < static_cast<int>(m.couplings.size()); ++k)
    out.push_back({m.couplings[k].name, coupling_subgraph(m, k), -1, k});
  return out;
}

// 000 §4.4: coupled loops must share their base body. Two loops are coupled when a body of one
// (base excluded) is a body or the base of the other. Empty when they do.
std::string scope_problem(const Model& m, const std::vector<LoopInfo>& loops) {
  std::vector<int> owner(m.nbodies, -1);  // first loop with the body in its sub-graph
  for (int i = 0; i < static_cast<int>(loops.size()); ++i)
    for (int b : loops[i].graph.bodies)
      if (owner[b] < 0) owner[b] = i;
  for (int j = 0; j < static_cast<int>(loops.size()); ++j) {
    std::vector<int> touched = loops[j].graph.bodies;
    if (loops[j].graph.base >= 0) touched.push_back(loops[j].graph.base);
    for (int b : touched) {
      const int i = owner[b];
      if (i < 0 || i == j || loops[i].graph.base == loops[j].graph.base) continue;
      std::string msg = "rcr: loops '";
      msg.append(loops[i].name).append("' and '").append(loops[j].name).append("' are coupled (they share body '");
      msg.append(m.body_name[b]).append("') but have different base bodies ('").append(body_label(m, loops[i].graph.base));
      msg.append("' and '").append(body_label(m, loops[j].graph.base));
      msg.append("'); recursive coordinate reduction covers coupled loops only when they share their base body "
                 "(paper 000 §4.3-4.4). Use `method = embedding` (linear in the number of such loops) or "
                 "`method = lagrange-dense`");
      return msg;
    }
  }
  return {};
}

// Joints between a body of the loop and the loop-closing joint, along the loop (1 = adjacent).
std::vector<int> distances(const Model& m, const LoopInfo& info) {
  std::vector<int> out(m.nbodies, 0);
  if (info.loop_joint < 0) return out;
  const ModelJoint& lj = m.loop_joints[info.loop_joint];
  for (int side : {lj.parent, lj.child}) {
    int d = 1;
    for (int b = side; b != info.graph.base; b = m.parent[b]) out[b] = d++;
  }
  return out;
}

// Why `loop` cannot be closed on its own, among the loops `names` of its aggregated body.
std::string not_one_at_a_time(const std::string& loop, const std::vector<std::string>& names) {
  std::vector<std::string> others;
  for (const std::string& name : names)
    if (name != loop) others.push_back(name);
  return "rcr: loop '" + loop + "' cannot be closed one loop at a time: it shares bodies with loop(s) " +
         quoted_list(others) +
         " and together they must be solved simultaneously (e.g. loops closing on one common body, as a parallel "
         "manipulator whose end-effector is not reached through independent coordinates alone, 000 §4.2). Use "
         "`method = embedding` or `method = lagrange-dense`";
}

// Every row of one loop joint or coupling on the bodies of its sub-graph.
ConstraintBlock loop_block(const Model& model, const LoopInfo& info) {
  const Constraints& rows = model.loops().unreduced;
  return info.loop_joint >= 0 ? ConstraintBlock::of(model, rows, info.graph.bodies, {info.loop_joint}, {})
                              : ConstraintBlock::of(model, rows, info.graph.bodies, {}, {info.coupling});
}

// The loops of each aggregated body, in the order RCR closes them.
std::vector<std::vector<LoopInfo>> loops_by_body(const Model& model, const std::vector<LoopInfo>& loops) {
  std::vector<std::vector<LoopInfo>> out;
  for (const AggregatedBody& body : model.loops().aggregation.nodes) {
    if (!body.aggregated()) continue;
    std::vector<LoopInfo>& mine = out.emplace_back();
    for (const LoopInfo& info : loops)
      if (std::binary_search(body.bodies.begin(), body.bodies.end(), info.graph.bodies.front())) mine.push_back(info);
  }
  return out;
}

// The configuration part of rcr's scope, without building it (check_closed fails exactly then):
// RCR solves loop i of an aggregated body for speeds that no earlier loop of that body acts on
// (its open columns), the others being known, so all its rows hold for every value of the known
// speeds exactly when the open columns carry the whole rank of its rows at q.
std::string one_at_a_time_problem(const Model& model, const std::vector<LoopInfo>& loops, const VecX& q) {
  const Constraints& rows = model.loops().unreduced;
  KinematicsData kin(model);
  update_positions(model, kin, q);
  ConstraintData data(model);
  for (const std::vector<LoopInfo>& body : loops_by_body(model, loops)) {
    std::vector<std::string> names;
    for (const LoopInfo& info : body) names.push_back(info.name);
    std::vector<char> earlier(model.nv, 0);  // speeds an earlier loop of the body acts on
    for (const LoopInfo& info : body) {
      const ConstraintBlock block = loop_block(model, info);
      // No row (a free joint closing the loop): nothing to solve, and JacobiSVD of 0 x n crashes.
      if (block.rows.empty()) continue;
      VecX phi(block.rows.size());
      MatX G(block.rows.size(), block.columns);
      block_position_jacobian(model, rows, block, kin, kWithoutDrives, data, phi, G);
      const std::vector<int> speeds = block.speeds(model);
      std::vector<int> open;
      for (int c = 0; c < block.columns; ++c)
        if (!earlier[speeds[c]]) open.push_back(c);
      // Ranks by rcr's own rule (kRankTolerance: sin² of a direction's angle to the others, i.e.
      // singular values above √kRankTolerance of the largest). numerical_rank's round-off
      // tolerance, n ε σ_max, took the noise of the spatial ladder's structurally redundant row for
      // rank from L = 74 on (its loops' lever arms grow with L), and `auto` left rcr for the cubic
      // lagrange-dense there: 87.8 s for 1 s of L = 256 instead of rcr's 0.3 s.
      const VecX sigma = Eigen::JacobiSVD<MatX>(G).singularValues();
      const double floor = std::sqrt(kRankTolerance) * (sigma.size() ? sigma(0) : 0.0);
      // No open column (a coupling of joints that earlier loops act on): nothing left to solve it.
      const VecX open_sigma = open.empty() ? VecX() : VecX(Eigen::JacobiSVD<MatX>(G(Eigen::all, open)).singularValues());
      if ((open_sigma.array() > floor).count() < (sigma.array() > floor).count())
        return not_one_at_a_time(info.name, names);
      for (int speed : speeds) earlier[speed] = 1;
    }
  }
  return {};
}

}  // namespace

std::string Rcr::out_of_scope(const Model& model, const VecX& q) {
  const std::vector<LoopInfo> loops = loops_of(model);
  if (std::string problem = scope_problem(model, loops); !problem.empty()) return problem;
  return one_at_a_time_problem(model, loops, q);
}

Rcr::Rcr(const Model& model, const FormulationSettings& settings)
    : Formulation(model), settings_(settings), rows_(model.loops().unreduced), kept_(model.loops().constraints), cons_data_(model),
      aba_(model), forces_(model), u_(VecX::Zero(model.nv)), lambda_(VecX::Zero(kept_.rows())),
      on_demand_(model.nq, model.nv), reduced_q_(VecX::Zero(model.nq)),
      swept_u_(VecX::Zero(model.nv)) {
  if (!(settings.rcr.indicator_growth > 1.0) || !(settings.rcr.singular_condition > 1.0))
    throw ModelError("rcr: `rcr_indicator_growth` and `singular_condition` must be > 1 (the indicator is >= 1)");
  const std::vector<LoopInfo> loops = loops_of(model);
  if (std::string problem = scope_problem(model, loops); !problem.empty()) throw ModelError(problem);
  const AggregatedTree& aggregation = model.loops().aggregation;
  // The kept rows of each loop joint, then of each coupling (Constraints::kept() indices).
  const int nloops = static_cast<int>(model.loop_joints.size());
  std::vector<std::vector<int>> kept_of(nloops + model.couplings.size());
  for (int k = 0; k < kept_.rows(); ++k) {
    const ConstraintRow& row = kept_.kept()[k];
    kept_of[row.kind == ConstraintRow::Kind::coupling ? nloops + row.loop : row.loop].push_back(k);
  }
  tree_.node_of_body.assign(model.nbodies, -1);
  tree_.nodes.reserve(aggregation.nodes.size());  // an AggregatedBodyData is never moved (its LLT)
  const std::vector<std::vector<LoopInfo>> by_body = loops_by_body(model, loops);
  std::size_t next = 0;
  for (const AggregatedBody& an : aggregation.nodes) {
    if (!an.aggregated()) continue;
    Node node;
    node.body = static_cast<int>(tree_.nodes.size());
    const AggregatedBodyData& g = tree_.nodes.emplace_back(model, an.bodies);
    for (int b : an.bodies) tree_.node_of_body[b] = node.body;
    for (const LoopInfo& info : by_body[next++]) {
      Loop loop;
      loop.name = info.name;
      loop.block = loop_block(model, info);
      const std::vector<int> dist = distances(model, info);
      for (int b : info.graph.bodies) {
        const int j = static_cast<int>(std::find(g.bodies.begin(), g.bodies.end(), b) - g.bodies.begin());
        for (int k = 0; k < model.nv_joint[b]; ++k) {
          loop.theta.push_back(g.first[j] + k);
          loop.distance.push_back(dist[b]);
        }
      }
      for (int k : kept_of[info.loop_joint >= 0 ? info.loop_joint : nloops + info.coupling])
        for (std::size_t r = 0; r < loop.block.rows.size(); ++r)
          if (rows_.kept()[loop.block.rows[r]].label == kept_.kept()[k].label) {
            loop.kept_local.push_back(static_cast<int>(r));
            loop.kept_index.push_back(k);
          }
      const int r = static_cast<int>(loop.block.rows.size());
      loop.G.resize(r, loop.block.columns);
      loop.phi.resize(r);
      loop.gamma.resize(r);
      node.loops.push_back(std::move(loop));
    }
    node.force.resize(an.bodies.size());
    node.rho.resize(g.speeds.size());
    nodes_.push_back(std::move(node));
  }
}

// Greedy choice of one loop's dependent speeds among those no earlier loop fixed (see the header).
void Rcr::choose_loop(Node& node, Loop& loop, std::vector<char>& assigned, double t) {
  const int r = static_cast<int>(loop.G.rows());
  const AggregatedBodyData& g = tree_.nodes[node.body];
  std::vector<int> open;  // block columns, nearest the loop-closing joint first
  for (int c = 0; c < loop.block.columns; ++c)
    if (!assigned[loop.theta[c]]) open.push_back(c);
  std::stable_sort(open.begin(), open.end(), [&](int a, int b) {
    return loop.distance[a] != loop.distance[b] ? loop.distance[a] < loop.distance[b] : loop.theta[a] > loop.theta[b];
  });
  const auto pinned = [&](int c) { return model_.joints[model_.v_body[g.speeds[loop.theta[c]]]].independent; };
  // The dependent speeds picked, and the loop's condition indicator with them (1 / √ of the
  // smallest Δ / ‖g‖² picked).
  const auto greedy = [&](bool allow_pinned, double& indicator) {
    std::vector<int> candidates, dependent;
    indicator = 1.0;
    for (int c : open)
      if (allow_pinned || !pinned(c)) candidates.push_back(c);
    MatX tau = MatX::Identity(r, r);
    while (!candidates.empty()) {
      std::vector<double> score;
      for (int c : candidates) {
        const double gg = loop.G.col(c).squaredNorm();
        score.push_back(gg > 0.0 ? loop.G.col(c).dot(tau * loop.G.col(c)) / gg : 0.0);
      }
      const double best = *std::max_element(score.begin(), score.end());
      if (best <= kRankTolerance) break;
      std::size_t pick = 0;
      while (score[pick] < kPreference * best) ++pick;
      indicator = std::max(indicator, 1.0 / std::sqrt(score[pick]));
      const VecX tc = tau * loop.G.col(candidates[pick]);
      tau -= tc * tc.transpose() / loop.G.col(candidates[pick]).dot(tc);
      dependent.push_back(candidates[pick]);
      candidates.erase(candidates.begin() + static_cast<std::ptrdiff_t>(pick));
    }
    return dependent;
  };
  double indicator = 1.0, free_indicator = 1.0;
  std::vector<int> dependent = greedy(false, indicator);
  loop.free_indicator = std::numeric_limits<double>::infinity();
  if (std::any_of(open.begin(), open.end(), pinned)) {
    std::vector<int> unpinned = greedy(true, free_indicator);
    if (unpinned.size() > dependent.size()) {
      report(t, "rcr: the speeds of joints marked independent in loop '" + loop.name +
                    "' cannot all stay independent (its constraints would not be solvable); marks dropped there");
      dependent = std::move(unpinned);
    } else if (indicator > settings_.rcr.indicator_growth * free_indicator) {
      // A marked joint near a limit of its motion: kept independent, it would make the loop as ill
      // conditioned as the re-choice rule does not keep (the mark is a preference).
      std::ostringstream s;
      s << "rcr: the speeds of joints marked independent in loop '" << loop.name
        << "' are taken as dependent here: with them independent its condition indicator would be " << indicator
        << ", " << indicator / free_indicator << " times that of the free choice (a marked joint near a limit of its motion)";
      report(t, s.str());
      dependent = std::move(unpinned);
    } else {
      loop.free_indicator = free_indicator;  // the marks kept are held to the free choice (choose)
    }
  }
  for (int c : open) assigned[loop.theta[c]] = 1;
  loop.dependent = dependent;
  loop.known.clear();
  for (int c = 0; c < loop.block.columns; ++c)
    if (std::find(dependent.begin(), dependent.end(), c) == dependent.end()) loop.known.push_back(c);
  // n_i rows independent on the dependent columns, by column-pivoted QR of G_Dᵀ.
  loop.rows.clear();
  const int n = static_cast<int>(dependent.size());
  if (n == 0) return;
  const MatX GD = loop.G(Eigen::all, dependent);
  const Eigen::ColPivHouseholderQR<MatX> qr(GD.transpose());
  for (int i = 0; i < n; ++i) loop.rows.push_back(qr.colsPermutation().indices()(i));
}

void Rcr::choose(Node& node, double t, bool first) {
  AggregatedBodyData& g = tree_.nodes[node.body];
  const int ntheta = static_cast<int>(g.speeds.size());
  std::vector<char> assigned(ntheta, 0);
  for (Loop& loop : node.loops) {
    block_position_jacobian(model_, rows_, loop.block, aba_.kin, kWithoutDrives, cons_data_, loop.phi, loop.G);
    choose_loop(node, loop, assigned, t);
  }
  std::vector<char> dependent(ntheta, 0);
  for (const Loop& loop : node.loops)
    for (int c : loop.dependent) dependent[loop.theta[c]] = 1;
  std::vector<int> beta;
  for (int i = 0; i < ntheta; ++i)
    if (!dependent[i]) beta.push_back(i);
  if (!first && beta.size() != node.beta.size()) {
    std::ostringstream s;
    s << "rcr: at t = " << t << " the loops of '" << model_.body_name[g.bodies.front()] << "' have "
      << beta.size() << " independent speeds instead of " << node.beta.size()
      << " (a singular configuration: the loops lost or gained rank); use dca, embedding or nullspace through it";
    throw SingularConfigurationError(s.str());
  }
  if (!first && beta != node.beta) {
    std::vector<std::string> loops;
    for (const Loop& loop : node.loops) loops.push_back(loop.name);
    report(t, "rcr: independent speeds chosen again (loops " + quoted_list(loops) + "): " + speed_names(node, beta) + " (were " +
                  speed_names(node, node.beta) + ")");
    ++switches_;
  }
  node.beta = std::move(beta);
  const int nbeta = static_cast<int>(node.beta.size());
  g.X.setZero(ntheta, nbeta);
  g.x.setZero(ntheta);
  node.W.setZero(6, nbeta);
  reduce(node);
  for (Loop& loop : node.loops) {
    // Marks kept are held to the free choice's indicator, so that they yield before the loop
    // degrades by more than rcr_indicator_growth.
    loop.chosen_indicator = std::min(loop.indicator, loop.free_indicator);
    check_closed(node, loop);
  }
}

// Every row of the loop, the n_i used and the others, must hold for every independent speed: it
// fails when loops close on a common body and have to be solved together (a double wishbone:
// both arms end on the upright), which RCR, solving one loop at a time, does not cover.
void Rcr::check_closed(const Node& node, const Loop& loop) const {
  const AggregatedBodyData& g = tree_.nodes[node.body];
  const MatX Xloop = g.X(loop.theta, Eigen::all);
  const MatX residual = loop.G * Xloop;
  if (residual.size() == 0) return;
  const double scale = std::max(1.0, loop.G.cwiseAbs().maxCoeff() * std::max(1.0, Xloop.cwiseAbs().maxCoeff()));
  if (residual.cwiseAbs().maxCoeff() <= 1e-8 * scale) return;
  std::vector<std::string> names;
  for (const Loop& other : node.loops) names.push_back(other.name);
  throw ModelError(not_one_at_a_time(loop.name, names));
}

std::string Rcr::speed_names(const Node& node, const std::vector<int>& theta_rows) const {
  std::vector<int> speeds;
  for (int i : theta_rows) speeds.push_back(tree_.nodes[node.body].speeds[i]);
  return model_.speed_names(speeds);
}

namespace {

// τ, Δ and t of one loop's N dependent speeds from the loop-closing joint inwards (the first part
// of eqs 44-53): t_e = τ g_e, Δ_e = g_eᵀ t_e, τ ← τ − t_e t_eᵀ / Δ_e from τ = 1. N is fixed at
// compile time: τ was 6 x 6, padded with zeros past the loop's n <= 6 rows (the spatial ladder's
// loops have 4; callgrind over a 1 s run of its 64 cells, Rcr::reduce 150.7 M -> 133.3 M
// instructions, the trajectory bit for bit). Returns the condition indicator
// max sqrt(|g_e|² / Δ_e), ∞ when a Δ is not positive.
template <int N>
double eliminate(const MatX& G, const std::vector<int>& rows, const std::vector<int>& dependent, Mat6& T,
                 Vec6& delta) {
  using VecN = Eigen::Matrix<double, N, 1>;
  Eigen::Matrix<double, N, N> tau = Eigen::Matrix<double, N, N>::Identity();
  double indicator = 1.0;
  for (int e = 0; e < N; ++e) {
    VecN gk;
    for (int i = 0; i < N; ++i) gk(i) = G(rows[i], dependent[e]);
    const VecN tk = tau * gk;
    const double d = gk.dot(tk);
    T.col(e).template head<N>() = tk;
    delta(e) = d;
    tau.noalias() -= tk * (tk.transpose() / d);
    indicator = d > 0.0 ? std::max(indicator, std::sqrt(gk.squaredNorm() / d)) : std::numeric_limits<double>::infinity();
  }
  return indicator;
}

double eliminate(int n, const MatX& G, const std::vector<int>& rows, const std::vector<int>& dependent, Mat6& T,
                 Vec6& delta) {
  switch (n) {
    case 0: return 1.0;
    case 1: return eliminate<1>(G, rows, dependent, T, delta);
    case 2: return eliminate<2>(G, rows, dependent, T, delta);
    case 3: return eliminate<3>(G, rows, dependent, T, delta);
    case 4: return eliminate<4>(G, rows, dependent, T, delta);
    case 5: return eliminate<5>(G, rows, dependent, T, delta);
    case 6: return eliminate<6>(G, rows, dependent, T, delta);
    default: throw std::logic_error("rcr: a loop with more than 6 dependent speeds");
  }
}

}  // namespace

// Eqs 44-53 per loop: τ, Δ and t from the loop-closing joint inwards (eliminate), then the rows of
// X from the independent speeds outwards.
void Rcr::reduce(Node& node) {
  AggregatedBodyData& g = tree_.nodes[node.body];
  g.X.setZero();
  for (int c = 0; c < static_cast<int>(node.beta.size()); ++c) g.X(node.beta[c], c) = 1.0;
  for (Loop& loop : node.loops) {
    block_position_jacobian(model_, rows_, loop.block, aba_.kin, kWithoutDrives, cons_data_, loop.phi, loop.G);
    const int n = static_cast<int>(loop.dependent.size());
    loop.indicator = eliminate(n, loop.G, loop.rows, loop.dependent, loop.T, loop.delta);
    if (!std::isfinite(loop.indicator)) continue;  // check_conditioning reports it
    auto W = node.W.topRows(n);
    W.setZero();
    for (int j : loop.known)
      for (int i = 0; i < n; ++i)
        if (const double gij = loop.G(loop.rows[i], j); gij != 0.0) W.row(i) += gij * g.X.row(loop.theta[j]);
    for (int e = n - 1; e >= 0; --e) {
      const int k = loop.dependent[e];
      auto xk = g.X.row(loop.theta[k]);
      for (Eigen::Index c = 0; c < W.cols(); ++c) {  // x_k = −Δ⁻¹ t_kᵀ W, column by column (no temporary)
        double tw = 0.0;
        for (int i = 0; i < n; ++i) tw += loop.T(i, e) * W(i, c);
        xk(c) = -tw / loop.delta(e);
      }
      for (int i = 0; i < n; ++i) W.row(i) += loop.G(loop.rows[i], k) * xk;
    }
  }
}

// Eqs 54-55 and 79-80: the dependent accelerations at β̈ = 0.
void Rcr::remainders(Node& node) {
  AggregatedBodyData& g = tree_.nodes[node.body];
  g.x.setZero();
  for (Loop& loop : node.loops) {
    block_bias(model_, rows_, loop.block, aba_.kin, kWithoutDrives, cons_data_, loop.gamma);
    const int n = static_cast<int>(loop.dependent.size());
    Vec6 w = Vec6::Zero();
    for (int i = 0; i < n; ++i) {
      double v = -loop.gamma(loop.rows[i]);
      for (int j : loop.known) v += loop.G(loop.rows[i], j) * g.x(loop.theta[j]);
      w(i) = v;
    }
    for (int e = n - 1; e >= 0; --e) {
      const int k = loop.dependent[e];
      double tw = 0.0;  // t_kᵀ w (a loop, not head(n).dot(): GCC 12 misreads its bounds)
      for (int i = 0; i < n; ++i) tw += loop.T(i, e) * w(i);
      const double xk = -tw / loop.delta(e);
      g.x(loop.theta[k]) = xk;
      for (int i = 0; i < n; ++i) w(i) += loop.G(loop.rows[i], k) * xk;
    }
  }
}

void Rcr::recover_multipliers(Node& node) {
  using Small = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, 6, 6>;
  using SmallVec = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 6, 1>;
  aggregated_loop_forces(model_, aba_, tree_.nodes[node.body], forces_.applied.tau, node.force, node.rho);
  for (auto it = node.loops.rbegin(); it != node.loops.rend(); ++it) {
    const Loop& loop = *it;
    const int n = static_cast<int>(loop.dependent.size()), k = static_cast<int>(loop.kept_local.size());
    if (n == 0 || k == 0) continue;
    Small A(n, k);
    SmallVec b(n);
    for (int e = 0; e < n; ++e) {
      b(e) = node.rho(loop.theta[loop.dependent[e]]);
      for (int r = 0; r < k; ++r) A(e, r) = loop.G(loop.kept_local[r], loop.dependent[e]);
    }
    // Square and regular when the kept rows are the loop's independent ones (the usual case): LU;
    // otherwise the minimum-norm least-squares solution.
    const SmallVec lambda = k == n ? SmallVec(Eigen::PartialPivLU<Small>(A).solve(b))
                                   : SmallVec(Eigen::CompleteOrthogonalDecomposition<Small>(A).solve(b));
    for (int c = 0; c < loop.block.columns; ++c)
      for (int r = 0; r < k; ++r) node.rho(loop.theta[c]) -= loop.G(loop.kept_local[r], c) * lambda(r);
    for (int r = 0; r < k; ++r) lambda_(loop.kept_index[r]) = lambda(r);
  }
}

void Rcr::check_conditioning(double t, bool between_steps) {
  for (Node& node : nodes_) {
    for (int pass = 0; pass < 2; ++pass) {
      const Loop* worst = nullptr;
      bool grown = false;
      for (const Loop& loop : node.loops) {
        if (!(loop.indicator <= settings_.rcr.singular_condition) && (!worst || !(loop.indicator <= worst->indicator)))
          worst = &loop;
        grown = grown || loop.indicator > settings_.rcr.indicator_growth * loop.chosen_indicator;
      }
      // Between steps when the indicator has grown, so that every step integrates one smooth
      // right-hand side; at once when it is beyond singular_condition.
      if (pass == 0 && (worst || (grown && between_steps))) {
        choose(node, t, false);
        continue;
      }
      if (!worst) {
        node.singular = false;
        break;
      }
      std::ostringstream s;
      s << "rcr: at t = " << t << " loop '" << worst->name
        << "' is at or near a singular configuration: the condition indicator of its dependent speeds ("
        << speed_names(node, [&] {
             std::vector<int> rows;
             for (int c : worst->dependent) rows.push_back(worst->theta[c]);
             return rows;
           }())
        << ") is " << worst->indicator << " > " << settings_.rcr.singular_condition
        << " with every choice of independent speeds";
      if (settings_.on_singular == FormulationSettings::OnSingular::proceed) {
        if (!node.singular) report(t, s.str() + "; going on (`on_singular = continue`)");
        node.singular = true;
        break;
      }
      throw SingularConfigurationError(s.str() + "; use dca, embedding or nullspace through it");
    }
  }
}

void Rcr::prepare(double t, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& u, bool between_steps) {
  if (!q.allFinite() || !u.allFinite()) {  // else a NaN would read as a singular configuration
    std::ostringstream s;
    s << "rcr: non-finite coordinates or speeds at t = " << t;
    throw std::runtime_error(s.str());
  }
  // The same q again (a stage state completed, then its accelerations; dopri5's last stage, then
  // its accepted state): its positions and reductions stand.
  // A call refused part way (a singular configuration: the loops lost rank) leaves no trace on
  // the next: its kinematics are not marked as reduced, and a choice it left half made (loops
  // chosen anew, the node's independent speeds not) is made afresh. Both had made every later
  // call at the start state of a four-bar return accelerations that broke the loops.
  try {
    if (!reduced_ || q != reduced_q_) {
      reduced_ = swept_ = completed_ = false;
      update_positions(model_, aba_.kin, q);
      for (Node& node : nodes_) {
        if (chosen_) reduce(node);
        else choose(node, t, true);
      }
      chosen_ = reduced_ = true;
      reduced_q_ = q;
    }
    check_conditioning(t, between_steps);
  } catch (...) {
    chosen_ = reduced_ = false;
    throw;
  }
  u_ = u;
  for (const Node& node : nodes_) {
    const AggregatedBodyData& g = tree_.nodes[node.body];
    for (int i = 0; i < static_cast<int>(g.speeds.size()); ++i) {
      double v = 0.0;
      for (int c = 0; c < static_cast<int>(node.beta.size()); ++c) v += g.X(i, c) * u(g.speeds[node.beta[c]]);
      u_(g.speeds[i]) = v;
    }
  }
}

void Rcr::sweep_velocities() {
  if (swept_ && u_ == swept_u_) return;
  completed_ = false;
  update_velocities(model_, aba_.kin, reduced_q_, u_);
  swept_u_ = u_;
  swept_ = true;
}

// The velocities are swept here rather than in accelerations() (which finds them standing at the
// same state): an output row, or the run's checks of an accepted state, read them
// (completed_kinematics) instead of sweeping the state again.
void Rcr::complete(double t, Eigen::Ref<VecX> q, Eigen::Ref<VecX> u, bool between_steps) {
  on_demand_.overwritten();
  prepare(t, q, u, between_steps);
  sweep_velocities();
  completed_ = true;
  u = u_;
}

void Rcr::complete_state(double t, Eigen::Ref<VecX> q, Eigen::Ref<VecX> u) { complete(t, q, u, false); }

void Rcr::complete_accepted_state(double t, Eigen::Ref<VecX> q, Eigen::Ref<VecX> u) { complete(t, q, u, true); }

void Rcr::accelerations(double t, const VecX& q, const VecX& u, Eigen::Ref<VecX> udot) {
  prepare(t, q, u, false);
  sweep_velocities();
  for (Node& node : nodes_) remainders(node);
  aba_factor(model_, aba_, tree_);  // eqs 56-66 as 002 eq 50
  aba_velocity_products(model_, aba_);
  evaluate_forces(model_, aba_.kin, t, q, u_, forces_);
  aba_solve(model_, aba_, tree_, forces_.applied.tau, &forces_.f_body, Bias::yes, udot);  // eqs 67-71
  on_demand_.evaluated(t, q, u);
  if (!udot.allFinite()) {
    std::ostringstream s;
    s << "rcr: non-finite acceleration at t = " << t << " (check the state and the applied forces)";
    throw std::runtime_error(s.str());
  }
}

std::vector<int> Rcr::independent_speeds() const {
  std::vector<char> dependent(model_.nv, 0);
  for (const Node& node : nodes_)
    for (const Loop& loop : node.loops)
      for (int c : loop.dependent) dependent[tree_.nodes[node.body].speeds[loop.theta[c]]] = 1;
  std::vector<int> out;
  for (int k = 0; k < model_.nv; ++k)
    if (!dependent[k]) out.push_back(k);
  return out;
}

double Rcr::condition() const {
  double c = 1.0;
  for (const Node& node : nodes_)
    for (const Loop& loop : node.loops) c = std::max(c, loop.indicator);
  return c;
}

void Rcr::settle_multipliers() {
  on_demand_.settle([this](double t, const VecX& q, const VecX& u, VecX& udot) { accelerations(t, q, u, udot); },
                    [this] {
                      for (Node& node : nodes_) recover_multipliers(node);
                    });
}

const VecX& Rcr::multipliers() const {
  // The interface's getter is const; what it settles is workspace (multipliers_on_demand.hpp), and
  // no Rcr is made const by the library (make_formulation).
  if (!on_demand_.current()) const_cast<Rcr&>(*this).settle_multipliers();
  return lambda_;
}

}  // namespace loopdyn
