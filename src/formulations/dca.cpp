#include "loopdyn/formulations/dca.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <thread>

#include <Eigen/Cholesky>
#include <metis.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_invoke.h>
#include <tbb/task_arena.h>

#include "loops/constraint_rows.hpp"
#include "loopdyn/core/kinematics.hpp"
#include "loopdyn/loops/loop_structure.hpp"
#include "formulations/setting_check.hpp"

namespace loopdyn {

namespace {

using Kind = ConstraintRow::Kind;
constexpr int kMaxConstraintBodies = 4;  // a joint's two; a coupling of two joints' four

void check_setting(bool ok, const char* what, double value) { detail::check_setting(ok, "dca", what, value); }

// Rotation vector θ with Rot(θ) = R (log map), for the small rotations of a projection.
Vec3 rotation_vector(const Mat3& R) {
  const Eigen::AngleAxisd aa(R);
  return aa.angle() * aa.axis();
}

// The smallest correction worth asking for: the tolerance, or 100 ulps of the largest value being
// corrected, whichever is larger. 004's absolute ε_p = 1e-14 m sits below the round-off of
// positions far from the origin (a 1024-link chain reaches 1e3 m, whose ulp is 1e-13 m): there
// every projection would run the maximum number of iterations.
double floor_of(double tolerance, double largest) {
  return std::max(tolerance, 100.0 * std::numeric_limits<double>::epsilon() * largest);
}

Mat3 rotation_of(const Vec3& theta) {
  const double angle = theta.norm();
  return angle > 0.0 ? Mat3(Eigen::AngleAxisd(angle, theta / angle)) : Mat3::Identity();
}

// Largest m · n · min(m, n) of the loop rows' Jacobian whose rank geometric_redundancy computes
// (a dense SVD, well under a second): about 200 rows and speeds.
constexpr double kRankBudget = 1e7;

// Whether the loops' redundancy is geometric: rows dependent where the loops close (those the
// LoopStructure drops) that become independent off the closed set, as in the Bennett linkage (its
// closing revolute's 5 rows have rank 2 on the loop, 3 off it) and Bricard's (5 rows, rank 4 and
// 5). Checked at q0 moved off the closed set by a fixed, generic increment of 0.05 rad (or m) per
// speed: there the rank of every loop row exceeds the kept rows'. The redundancy of a planar loop
// stays (its out-of-plane rows vanish at every q of parallel axes); the spatial ladder's is
// geometric too (rank 4L on the loops, 4L + 1 off them: generators.hpp). Models beyond kRankBudget
// are not checked (false).
bool geometric_redundancy(const Model& model) {
  const LoopStructure& loops = model.loops();
  const int m = loops.unreduced.rows(), n = model.nv;
  if (loops.constraints.rows() == m) return false;  // no row dropped: no redundancy
  if (static_cast<double>(m) * n * std::min(m, n) > kRankBudget) return false;
  VecX du(n);
  for (int k = 0; k < n; ++k) du(k) = 0.05 * std::sin(1.0 + 2.3 * k);
  VecX q = model.q0;
  integrate_q(model, q, du);
  return constraint_rank(model, loops.unreduced, q).rank > loops.constraints.rows();
}

}  // namespace

// A joint (tree or loop) or coupling: its rows act on the velocities of `bodies` (ground left out).
struct Dca::Constraint {
  enum class Source { tree_joint, loop_joint, coupling };
  Source source = Source::tree_joint;
  int index = -1;  ///< body (tree joint), loop joint or coupling
  int first_row = 0, rows = 0;
  std::array<int, kMaxConstraintBodies> bodies{};
  int nbodies = 0;
  int first_term = 0;  ///< couplings: index of its first term in coupling_q_
  const ModelJoint* joint = nullptr;  ///< joints

  int slot(int body) const {
    for (int k = 0; k < nbodies; ++k)
      if (bodies[k] == body) return k;
    return -1;
  }
  void add_body(int body) {
    if (body >= 0 && slot(body) < 0) bodies[nbodies++] = body;
  }
};

// A node of the assembly tree (see the file comment of dca.hpp). What the sweeps read comes first,
// so that a visit touches little of the node itself.
struct Dca::Node {
  int left = -1, right = -1, parent = -1;
  int body = -1;                 ///< leaves
  int hc = 0, he = 0, rows = 0;  ///< handles kept, bodies eliminated here, rows eliminated here
  int blocks = 0;  ///< G's 6-blocks on the rows eliminated here (one per row and constraint body)
  /// In Dca::index_, from here: keep (hc: positions in the children's handles H of this node's own
  /// handles), elim (he: those of the bodies eliminated here), row (rows: the global row of each
  /// local row), column (kMaxConstraintBodies per local row: the offset in K and R, 6 · position in
  /// H, of each of its constraint's bodies, −1 past them).
  std::ptrdiff_t index = 0;
  // K = diag(children's K_C) + α GᵀG (6h x 6h, 004 eqs 9-10) lives only while the node is
  // factored, in the thread's Scratch, and so do the right-hand side R and the accelerations a_H of
  // the handles during a solve. What the solves read is kept in Dca::tree_, one stretch per node,
  // the nodes in post order (their ids), at these offsets, in this order:
  std::ptrdiff_t G = 0;   ///< (6 x blocks) G's blocks of the rows eliminated here, copied when factored
  std::ptrdiff_t X = 0;   ///< (6e x 6c) L⁻¹ K_ek, L the Cholesky factor of K_ee
  std::ptrdiff_t L = 0;   ///< L, lower triangle packed by columns (6e (6e + 1) / 2)
  std::ptrdiff_t z = 0;   ///< (6e) L⁻¹ R_e
  std::ptrdiff_t RC = 0;  ///< (6c) R on the handles after the elimination (004 eqs 31-32)
  std::ptrdiff_t aC = 0;  ///< (6c) the handles' accelerations, from the parent
  /// (6c x 6c) K on the handles after the elimination (004 eqs 27-30), K_cc − XᵀX, read only by
  /// the parent's factor: in Dca::kc_ when the parent's two subtrees may run as two tasks, else on
  /// the stack of the thread that factors the parent's whole subtree (Scratch::kc_stack), where it
  /// stays in the caches.
  std::ptrdiff_t KC = 0;
  bool kc_on_stack = false;
  int lo = 0, hi = 0;  ///< range in the body order
  std::vector<int> H;  ///< handles of the children (the body, at a leaf), in order
  std::vector<int> constraints;  ///< eliminated here

  int h() const { return hc + he; }
};

/// K and K_ee of the node being factored, and the vectors a solve needs only inside one node: one
/// per thread, sized for the largest node, so that the nodes keep only what the solves read.
struct Dca::Scratch {
  MatX K, Kee;
  std::vector<double> kc_stack;  ///< the K_C of the nodes below kParallelGrain (Node::kc_on_stack)
  VecX R, aH, tmp;  ///< a node's right-hand side, handle accelerations and a_e
};

struct Dca::Pool {
  explicit Pool(int threads) : arena(threads) {}
  tbb::task_arena arena;

  /// One arena per thread count for the whole process, shared by every dca that asks for it:
  /// oneTBB's workers serve the arenas that exist, and with one per formulation the two-thread
  /// speed-up vanished after a dozen formulations had been made (bench/bench_dca.cpp).
  static std::shared_ptr<Pool> shared(int threads) {
    static std::mutex mutex;
    static std::map<int, std::weak_ptr<Pool>> pools;
    const std::lock_guard<std::mutex> lock(mutex);
    std::shared_ptr<Pool> pool = pools[threads].lock();
    if (!pool) {
      pool = std::make_shared<Pool>(threads);
      pools[threads] = pool;
    }
    return pool;
  }
};

namespace {

// Balanced bisections of sets of bodies on the graph whose edges join the bodies of each constraint,
// by METIS's multilevel recursive bisection: two parts of equal body count (within METIS's default
// tolerance) with the fewest edges between them. Applied to each node's bodies in turn, from the
// root, this is a nested dissection: on a net a node's handles are the perimeter of its patch, of
// O(√n) bodies, where the bisection of one fixed order by count keeps the whole wave front of O(√n)
// at every node of the upper levels (George 1973; Karypis and Kumar 1998).
class Bisection {
 public:
  explicit Bisection(const std::vector<std::vector<int>>& adjacency)
      : adjacency_(adjacency), local_(adjacency.size(), -1) {}

  /// Reorders the bodies [first, last) (at least two) so that the first part comes first, each part
  /// in the order given; returns the first part's size.
  std::ptrdiff_t split(std::vector<int>::iterator first, std::vector<int>::iterator last) {
    const std::vector<int> bodies(first, last);
    idx_t count = static_cast<idx_t>(bodies.size()), constraints = 1, parts = 2, cut = 0;
    for (idx_t k = 0; k < count; ++k) local_[bodies[k]] = k;
    xadj_.assign(1, 0);
    adjncy_.clear();
    for (int b : bodies) {
      for (int n : adjacency_[b])
        if (local_[n] >= 0) adjncy_.push_back(local_[n]);
      xadj_.push_back(static_cast<idx_t>(adjncy_.size()));
    }
    for (int b : bodies) local_[b] = -1;
    part_.assign(bodies.size(), 0);
    idx_t options[METIS_NOPTIONS];
    METIS_SetDefaultOptions(options);
    options[METIS_OPTION_SEED] = 1;  // the same tree at every run
    const int status = METIS_PartGraphRecursive(&count, &constraints, xadj_.data(), adjncy_.data(), nullptr, nullptr,
                                                nullptr, &parts, nullptr, nullptr, options, &cut, part_.data());
    if (status != METIS_OK)
      throw std::runtime_error("dca: METIS could not bisect " + std::to_string(count) + " bodies of the assembly tree (status " +
                               std::to_string(status) + ")");
    const std::ptrdiff_t size = std::count(part_.begin(), part_.end(), 0);
    if (size == 0 || size == count) return count / 2;  // bodies without joints between them: any half
    for (int p : {0, 1})
      for (idx_t k = 0; k < count; ++k)
        if (part_[k] == p) *first++ = bodies[k];
    return size;
  }

 private:
  const std::vector<std::vector<int>>& adjacency_;
  std::vector<idx_t> local_, xadj_, adjncy_, part_;
};

}  // namespace

Dca::Dca(const Model& model, const FormulationSettings& settings)
    : Formulation(model), alpha_(settings.dca_alpha), mu_(settings.dca_mu), omega_(settings.dca_omega),
      max_iterations_(settings.dca_max_iterations), eps_p_(settings.dca_position_tolerance),
      eps_v_(settings.dca_velocity_tolerance), eps_a_(settings.dca_acceleration_tolerance),
      projections_(settings.dca_projections), project_stages_(projections_ && geometric_redundancy(model)),
      threads_(settings.threads > 0 ? settings.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))),
      kept_solver_(model.loops().constraints.rows(), settings.rank_tolerance), joint_rows_(model), kin_(model),
      forces_(model), q_near_(model.q0) {
  check_setting(std::isfinite(alpha_) && alpha_ > 0.0, "the penalty α (--dca-alpha) must be finite and > 0", alpha_);
  check_setting(std::isfinite(mu_) && mu_ >= 0.0, "μ (--dca-mu) must be finite and >= 0", mu_);
  check_setting(std::isfinite(omega_) && omega_ >= 0.0, "Ω (--dca-omega) must be finite and >= 0", omega_);
  check_setting(max_iterations_ >= 1, "the largest number of iterations (--dca-iterations) must be at least 1",
                max_iterations_);
  for (const auto& [eps, what] : {std::pair{eps_p_, "ε_p (--dca-position-tolerance) must be finite and > 0"},
                                  std::pair{eps_v_, "ε_v (--dca-velocity-tolerance) must be finite and > 0"},
                                  std::pair{eps_a_, "ε_a (--dca-acceleration-tolerance) must be finite and > 0"}})
    check_setting(std::isfinite(eps) && eps > 0.0, what, eps);
  check_setting(settings.threads >= 0, "the number of threads (--threads) must be >= 0 (0: the machine's cores)",
                settings.threads);
  if (threads_ > 1) pool_ = Pool::shared(threads_);

  const int nb = model.nbodies;
  for (int i = 0; i < nb; ++i) {
    const Mat3 Jc = model.inertia[i].topLeftCorner<3, 3>() - model.mass[i] * skew(model.com[i]) * skew(model.com[i]).transpose();
    Jc_.push_back(Jc);
  }

  // Constraints and rows: tree joints, loop joints, couplings.
  auto add_joint = [&](Constraint::Source source, int index, const ModelJoint& mj) {
    Constraint c;
    c.source = source;
    c.index = index;
    c.joint = &mj;
    c.add_body(mj.parent);
    c.add_body(mj.child);
    c.first_row = static_cast<int>(rows_.size());
    detail::joint_rows(mj, static_cast<int>(constraints_.size()), rows_);
    c.rows = static_cast<int>(rows_.size()) - c.first_row;
    if (c.rows > 0) constraints_.push_back(c);
  };
  for (int i = 0; i < nb; ++i) add_joint(Constraint::Source::tree_joint, i, model.joints[i]);
  for (int k = 0; k < static_cast<int>(model.loop_joints.size()); ++k)
    add_joint(Constraint::Source::loop_joint, k, model.loop_joints[k]);
  for (int k = 0; k < static_cast<int>(model.couplings.size()); ++k) {
    Constraint c;
    c.source = Constraint::Source::coupling;
    c.index = k;
    c.first_row = static_cast<int>(rows_.size());
    c.rows = 1;
    c.first_term = static_cast<int>(coupling_q_.size());
    for (const ModelCoupling::Term& t : model.couplings[k].terms) {
      if (model.nq_joint[t.joint] != 1 || model.nv_joint[t.joint] != 1)
        throw std::invalid_argument("dca: coupling '" + model.couplings[k].name + "' couples joint '" +
                                    model.joints[t.joint].name + "', which has not one coordinate");
      c.add_body(model.parent[t.joint]);
      c.add_body(t.joint);
      coupling_q_.push_back(model.q0(t.q_index));
    }
    if (c.nbodies > kMaxConstraintBodies)
      throw std::invalid_argument("dca: coupling '" + model.couplings[k].name + "' acts on more than " +
                                  std::to_string(kMaxConstraintBodies) + " bodies");
    rows_.push_back({Kind::coupling, static_cast<int>(constraints_.size()), Vec3::Zero(), Vec3::Zero(),
                     model.couplings[k].name});
    constraints_.push_back(c);
  }
  const int m = static_cast<int>(rows_.size());

  // Assembly tree: nested dissection of the bodies, each node's into its children's by Bisection.
  std::vector<std::vector<int>> adjacency(nb);
  for (const Constraint& c : constraints_)
    for (int a = 0; a < c.nbodies; ++a)
      for (int b = 0; b < c.nbodies; ++b)
        if (a != b) adjacency[c.bodies[a]].push_back(c.bodies[b]);
  for (auto& adj : adjacency) {
    std::sort(adj.begin(), adj.end());
    adj.erase(std::unique(adj.begin(), adj.end()), adj.end());
  }
  std::vector<int> order(nb);
  std::iota(order.begin(), order.end(), 0);
  Bisection bisection(adjacency);
  leaf_of_body_.assign(nb, -1);
  nodes_.reserve(2 * nb);
  auto build = [&](auto& self, int lo, int hi) -> int {
    int left = -1, right = -1;
    if (hi - lo > 1) {
      const int mid = lo + static_cast<int>(bisection.split(order.begin() + lo, order.begin() + hi));
      left = self(self, lo, mid);
      right = self(self, mid, hi);
    }
    Node& n = nodes_.emplace_back();
    n.lo = lo;
    n.hi = hi;
    n.left = left;
    n.right = right;
    if (left < 0) n.body = order[lo];
    const int id = static_cast<int>(nodes_.size()) - 1;
    if (nodes_[id].body >= 0) leaf_of_body_[nodes_[id].body] = id;
    else nodes_[nodes_[id].left].parent = nodes_[nodes_[id].right].parent = id;
    return id;
  };
  if (nb > 0) root_ = build(build, 0, nb);
  std::vector<int> position(nb);
  for (int k = 0; k < nb; ++k) position[order[k]] = k;

  // Each constraint to the smallest node holding its bodies; handles up to there.
  std::vector<std::vector<char>> handle(nodes_.size());
  for (int k = 0; k < static_cast<int>(constraints_.size()); ++k) {
    Constraint& c = constraints_[k];
    int lo = nb, hi = -1;
    for (int j = 0; j < c.nbodies; ++j) {
      lo = std::min(lo, position[c.bodies[j]]);
      hi = std::max(hi, position[c.bodies[j]]);
    }
    int node = root_;
    for (;;) {
      const Node& n = nodes_[node];
      if (n.body >= 0) break;
      if (hi < nodes_[n.left].hi) node = n.left;
      else if (lo >= nodes_[n.right].lo) node = n.right;
      else break;
    }
    nodes_[node].constraints.push_back(k);
    for (int j = 0; j < c.nbodies; ++j)
      for (int n = leaf_of_body_[c.bodies[j]]; n != node; n = nodes_[n].parent) {
        auto& mark = handle[n];
        if (mark.empty()) mark.assign(nb, 0);
        mark[c.bodies[j]] = 1;
      }
  }
  // Handles (children before parents: nodes_ is in post order), rows and columns, workspaces.
  int largest_h6 = 0, largest_e6 = 0;
  std::ptrdiff_t tree_size = 0, kc_size = 0, stack_top = 0, stack_size = 0;
  std::vector<std::vector<int>> keep(nodes_.size());
  for (int id = 0; id < static_cast<int>(nodes_.size()); ++id) {
    Node& n = nodes_[id];
    if (n.body >= 0) {
      n.H = {n.body};
    } else {
      for (int child : {n.left, n.right})
        for (int k : keep[child]) n.H.push_back(nodes_[child].H[k]);
    }
    std::vector<int> elim, row, column;
    for (int k = 0; k < static_cast<int>(n.H.size()); ++k)
      (!handle[id].empty() && handle[id][n.H[k]] ? keep[id] : elim).push_back(k);
    for (int k : n.constraints) {
      const Constraint& c = constraints_[k];
      for (int r = 0; r < c.rows; ++r) {
        row.push_back(c.first_row + r);
        for (int j = 0; j < kMaxConstraintBodies; ++j)
          column.push_back(j < c.nbodies ? 6 * static_cast<int>(std::find(n.H.begin(), n.H.end(), c.bodies[j]) - n.H.begin()) : -1);
        n.blocks += c.nbodies;
      }
    }
    n.hc = static_cast<int>(keep[id].size());
    n.he = static_cast<int>(elim.size());
    n.rows = static_cast<int>(row.size());
    n.index = static_cast<std::ptrdiff_t>(index_.size());
    for (const std::vector<int>* part : {&keep[id], &elim, &row, &column}) index_.insert(index_.end(), part->begin(), part->end());
    const std::ptrdiff_t h6 = 6 * n.h(), c6 = 6 * n.hc, e6 = 6 * n.he;
    largest_h6 = std::max(largest_h6, static_cast<int>(h6));
    largest_e6 = std::max(largest_e6, static_cast<int>(e6));
    // The node's stretch of tree_, from a cache line (8 doubles).
    std::ptrdiff_t at = (static_cast<std::ptrdiff_t>(tree_size) + 7) / 8 * 8;
    for (auto [offset, size] : {std::pair{&n.G, 6 * static_cast<std::ptrdiff_t>(n.blocks)}, std::pair{&n.X, e6 * c6},
                                std::pair{&n.L, e6 * (e6 + 1) / 2}, std::pair{&n.z, e6}, std::pair{&n.RC, c6},
                                std::pair{&n.aC, c6}}) {
      *offset = at;
      at += size;
    }
    tree_size = at;
    // K_C: on the thread's stack where the parent's children run one after the other in the same
    // task (post_order), pushed here and popped by the parent, so that a subtree below the grain
    // leaves the stack as it found it; else in kc_.
    if (n.body < 0)
      for (int child : {n.right, n.left})
        if (nodes_[child].kc_on_stack) stack_top = nodes_[child].KC;
    n.kc_on_stack = n.parent >= 0 && nodes_[n.parent].hi - nodes_[n.parent].lo < kParallelGrain;
    std::ptrdiff_t& top = n.kc_on_stack ? stack_top : kc_size;
    n.KC = top;
    top += c6 * c6;
    stack_size = std::max(stack_size, stack_top);
  }
  if (root_ >= 0 && nodes_[root_].hc != 0) throw std::logic_error("dca: the root of the assembly tree has handles");
  tree_.assign(tree_size, 0.0);
  kc_.assign(kc_size, 0.0);
  scratch_.resize(threads_);
  for (Scratch& sc : scratch_) {
    sc.K.setZero(largest_h6, largest_h6);
    sc.Kee.setZero(largest_e6, largest_e6);
    sc.kc_stack.assign(stack_size, 0.0);
    for (VecX* v : {&sc.R, &sc.aH, &sc.tmp}) v->setZero(largest_h6);
  }

  R_.assign(nb, Mat3::Identity());
  r_.assign(nb, Vec3::Zero());
  w_.assign(nb, Vec3::Zero());
  v_.assign(nb, Vec3::Zero());
  r_star_.assign(nb, Vec3::Zero());
  R_star_.assign(nb, Mat3::Identity());
  inertia_.assign(nb, Mat3::Identity());
  Q_.setZero(6 * nb);
  rhs_.setZero(6 * nb);
  out_.setZero(6 * nb);
  prev_.setZero(6 * nb);
  for (VecX* v : {&phi_, &phidot_, &gamma_, &nu_, &lambda_, &dlambda_, &c_, &warm_lambda_}) v->setZero(m);
  res_.setZero(6 * nb);
  delta_.setZero(6 * nb);
  stage_.setZero(13 * nb);
  // Row r's 6-blocks, one per body of its constraint, from column first_block_[r] of Gblk_.
  first_block_.assign(m + 1, 0);
  for (int r = 0; r < m; ++r) first_block_[r + 1] = first_block_[r] + constraints_[rows_[r].loop].nbodies;
  Gblk_.setZero(6, first_block_[m]);
  block_body_.resize(first_block_[m]);
  for (int r = 0; r < m; ++r)
    for (int j = 0; j < constraints_[rows_[r].loop].nbodies; ++j) block_body_[first_block_[r] + j] = constraints_[rows_[r].loop].bodies[j];
  body_first_.assign(nb + 1, 0);
  for (int r = 0; r < m; ++r)
    for (int j = 0; j < constraints_[rows_[r].loop].nbodies; ++j) ++body_first_[constraints_[rows_[r].loop].bodies[j] + 1];
  for (int i = 0; i < nb; ++i) body_first_[i + 1] += body_first_[i];
  body_blocks_.resize(body_first_[nb]);
  std::vector<int> filled(body_first_.begin(), body_first_.end() - 1);
  for (int r = 0; r < m; ++r)
    for (int j = 0; j < constraints_[rows_[r].loop].nbodies; ++j)
      body_blocks_[filled[constraints_[rows_[r].loop].bodies[j]]++] = {r, first_block_[r] + j};
  fp_.resize(constraints_.size());
  fc_.resize(constraints_.size());
  has_forces_ = !model.forces.empty() || !model.callbacks.empty();
  qf_.setZero(model.nq);
  uf_.setZero(model.nv);
  state_.pose.resize(nb);
  state_.velocity.resize(nb);
  q_joint_.setZero(model.nq);
  u_joint_.setZero(model.nv);
  x_joint_.setZero(13 * nb);
  a_joint_.setZero(6 * nb);
  body_acc_.assign(nb, Vec6::Zero());

  const LoopStructure& loops = model.loops();
  kept_lambda_.setZero(loops.constraints.rows());
  G_all_.setZero(loops.unreduced.rows(), model.nv);
  G_kept_.setZero(loops.constraints.rows(), model.nv);
  generalized_.setZero(model.nv);
  kept_rhs_.setZero(loops.constraints.rows());
  kept_normal_.setZero(loops.constraints.rows(), loops.constraints.rows());
  // The rows of the loop joints and couplings come last, in the order of Constraints::all_rows.
  loop_rows_ = loops.unreduced.rows();
}

Dca::~Dca() = default;

void Dca::start(const StepPlan& /*plan*/, const VecX& q0, const VecX& /*u0*/) {
  warm_lambda_.setZero();
  refresh_warm_ = true;
  q_near_ = q0;
}

Dca::TreeShape Dca::tree_shape() const {
  TreeShape s;
  s.nodes = static_cast<int>(nodes_.size());
  s.rows = static_cast<int>(rows_.size());
  s.solve_bytes = tree_.size() * sizeof(double) + index_.size() * sizeof(int);
  s.kc_bytes = kc_.size() * sizeof(double);
  s.stack_bytes = scratch_.empty() ? 0 : scratch_[0].kc_stack.size() * sizeof(double);
  // Children before parents (ids in post order): work[id] = the subtree's multiply-adds,
  // path[id] = its critical path.
  std::vector<double> work(nodes_.size()), path(nodes_.size());
  for (int id = 0; id < s.nodes; ++id) {
    const Node& n = nodes_[id];
    s.max_handles = std::max(s.max_handles, n.hc);
    const double e = 6.0 * n.he, c = 6.0 * n.hc;
    const double own = e * e * e / 3.0 + e * e * c + e * c * c;
    s.factor_madds += own;
    work[id] = path[id] = own;
    if (n.body < 0) {
      work[id] += work[n.left] + work[n.right];
      path[id] = n.hi - n.lo >= kParallelGrain ? own + std::max(path[n.left], path[n.right]) : work[id];
    }
    int depth = 0;
    for (int k = id; nodes_[k].parent >= 0; k = nodes_[k].parent) ++depth;
    s.depth = std::max(s.depth, depth);
  }
  s.critical_madds = s.nodes ? path[root_] : 0.0;
  return s;
}

template <class F>
void Dca::post_order(int node, const F& f) {
  const Node& n = nodes_[node];
  if (n.body < 0) {
    if (pool_ && n.hi - n.lo >= kParallelGrain)
      tbb::parallel_invoke([&] { post_order(n.left, f); }, [&] { post_order(n.right, f); });
    else {
      post_order(n.left, f);
      post_order(n.right, f);
    }
  }
  f(node);
}

template <class F>
void Dca::pre_order(int node, const F& f) {
  f(node);
  const Node& n = nodes_[node];
  if (n.body >= 0) return;
  if (pool_ && n.hi - n.lo >= kParallelGrain)
    tbb::parallel_invoke([&] { pre_order(n.left, f); }, [&] { pre_order(n.right, f); });
  else {  // right first: the exact reverse of the post order, in which tree_ is laid out
    pre_order(n.right, f);
    pre_order(n.left, f);
  }
}

template <class F>
void Dca::in_pool(const F& f) {
  if (pool_) pool_->arena.execute(f);
  else f();
}

template <class F>
void Dca::for_each(int n, const F& f) {
  if (!pool_ || n < 2 * kParallelLoopGrain) {
    for (int i = 0; i < n; ++i) f(i);
    return;
  }
  in_pool([&] {
    tbb::parallel_for(tbb::blocked_range<int>(0, n, kParallelLoopGrain),
                      [&](const tbb::blocked_range<int>& range) {
                        for (int i = range.begin(); i < range.end(); ++i) f(i);
                      },
                      tbb::simple_partitioner());
  });
}

void Dca::load_bodies(const Eigen::Ref<const VecX>& x, bool velocities) {
  const int nb = model_.nbodies;
  for_each(nb, [&](int i) {
    r_[i] = x.segment<3>(7 * i);
    const Eigen::Map<const Eigen::Vector4d> p(x.data() + 7 * i + 3);
    R_[i] = Quat(p(0), p(1), p(2), p(3)).normalized().toRotationMatrix();
    if (velocities) {
      w_[i] = x.segment<3>(7 * nb + 6 * i);
      v_[i] = x.segment<3>(7 * nb + 6 * i + 3);
    }
  });
}

void Dca::update_rows(bool velocities) {
  if (factor_pending_) throw std::logic_error("dca: update_rows between factor() and the solve that factors");
  // Frames: pose, velocity and acceleration at zero body accelerations (ω̇ = 0, r̈ = 0).
  auto frame = [&](int body, const Transform& X, ConstraintData::Frame& f) {
    if (body < 0) {
      f.R = X.R;
      f.x = X.p;
      f.w = f.v = f.dw0 = f.a0 = Vec3::Zero();
      return;
    }
    const Vec3 s = R_[body] * (X.p - model_.com[body]);  // frame origin − centre of mass
    f.R = R_[body] * X.R;
    f.x = r_[body] + s;
    if (!velocities) return;
    f.w = w_[body];
    f.v = v_[body] + f.w.cross(s);
    f.dw0.setZero();
    f.a0 = f.w.cross(f.w.cross(s));
  };
  for_each(static_cast<int>(constraints_.size()), [&](int k) {
    const Constraint& c = constraints_[k];
    if (c.source == Constraint::Source::coupling) return;
    frame(c.joint->parent, c.joint->parent_frame, fp_[k]);
    frame(c.joint->child, c.joint->child_frame, fc_[k]);
  });
  for_each(static_cast<int>(rows_.size()), [&](int r) {
    const ConstraintRow& row = rows_[r];
    const Constraint& c = constraints_[row.loop];
    Gblk_.middleCols(first_block_[r], c.nbodies).setZero();
    auto block = [&](int body) { return Gblk_.block<6, 1>(0, first_block_[r] + c.slot(body)); };
    if (row.kind != Kind::coupling) {
      const ConstraintData::Frame &p = fp_[row.loop], &ch = fc_[row.loop];
      phi_(r) = detail::frame_position_row(row, p, ch);
      if (velocities) {
        phidot_(r) = detail::frame_velocity_row(row, p, ch);
        gamma_(r) = detail::frame_bias_row(row, p, ch);
      }
      // dot: Φ̇ = n·(ω_c − ω_p), n = a × b. along: Φ̇ = b·(v_fc − v_fp) + (b × d)·ω_p, which on the
      // velocities [ω; ṙ] of body k (centre r_k, σ = +1 child, −1 parent) is σ [(x_c − r_k) × b; b].
      const Vec3 b = p.R * row.u;
      for (int side : {c.joint->child, c.joint->parent}) {
        if (side < 0) continue;
        const double sigma = side == c.joint->child ? 1.0 : -1.0;
        Vec6 g;
        if (row.kind == Kind::dot) g << (ch.R * row.w).cross(b), Vec3::Zero();
        else g << (ch.x - r_[side]).cross(b), b;
        block(side) += sigma * g;
      }
      return;
    }
    // Coupling Φ = Σ c_k q_k − value over one-coordinate joints: a revolute joint's q̇ = b·(ω_c − ω_p),
    // b the axis in the world, a prismatic joint's the `along` rate of its axis.
    const ModelCoupling& mc = model_.couplings[c.index];
    double e = -mc.value, edot = 0.0, bias = 0.0;
    for (std::size_t t = 0; t < mc.terms.size(); ++t) {
      const ModelCoupling::Term& term = mc.terms[t];
      const ModelJoint& mj = model_.joints[term.joint];
      ConstraintData::Frame p, ch;
      frame(mj.parent, mj.parent_frame, p);
      frame(mj.child, mj.child_frame, ch);
      double& q = coupling_q_[c.first_term + t];
      joint_coordinates(mj.joint, Transform{p.R, p.x}.inverse() * Transform{ch.R, ch.x}, &q, &q);
      e += term.coefficient * q;
      const bool revolute = std::holds_alternative<Revolute>(mj.joint);
      const Vec3 axis = revolute ? std::get<Revolute>(mj.joint).axis : std::get<Prismatic>(mj.joint).axis;
      const ConstraintRow along{Kind::along, 0, axis, axis, {}};
      const Vec3 b = p.R * axis;
      if (velocities) {
        edot += term.coefficient * (revolute ? b.dot(ch.w - p.w) : detail::frame_velocity_row(along, p, ch));
        bias += term.coefficient * (revolute ? -p.w.cross(b).dot(ch.w - p.w) : detail::frame_bias_row(along, p, ch));
      }
      for (int side : {mj.child, mj.parent}) {
        if (side < 0) continue;
        const double sigma = side == mj.child ? 1.0 : -1.0;
        Vec6 g;
        if (revolute) g << b, Vec3::Zero();
        else g << (ch.x - r_[side]).cross(b), b;
        block(side) += sigma * term.coefficient * g;
      }
    }
    phi_(r) = e;
    if (velocities) {
      phidot_(r) = edot;
      gamma_(r) = bias;
    }
  });
}

namespace {

// out = K restricted to the 6 x 6 blocks (rows[a], cols[b]), a < nrows, b < ncols.
template <class In, class Out>
void gather(const In& K, const int* rows, int nrows, const int* cols, int ncols, Out&& out) {
  for (int a = 0; a < nrows; ++a)
    for (int b = 0; b < ncols; ++b) out.template block<6, 6>(6 * a, 6 * b) = K.template block<6, 6>(6 * rows[a], 6 * cols[b]);
}

// A node's parts of Dca::index_ (Node::index).
struct NodeIndex {
  NodeIndex(const std::vector<int>& index, const Dca::Node& n)
      : keep(index.data() + n.index), elim(keep + n.hc), row(elim + n.he), column(row + n.rows) {}
  const int *keep, *elim, *row;
  const int* column;  ///< kMaxConstraintBodies per row
};

// A lower-triangular n x n L packed by columns: column j, L(j..n−1, j), from j n − j (j − 1) / 2.
// Half of a dense factor's memory, which the solves stream through at every iteration.
void pack_lower(const Eigen::Ref<const MatX>& L, double* packed) {
  for (Eigen::Index j = 0; j < L.cols(); ++j)
    for (Eigen::Index i = j; i < L.rows(); ++i) *packed++ = L(i, j);
}

// x = L⁻¹ x, L packed (pack_lower).
void solve_lower(const double* L, int n, double* x) {
  for (int j = 0; j < n; ++j) {
    x[j] /= L[0];
    const double xj = x[j];
    for (int i = j + 1; i < n; ++i) x[i] -= L[i - j] * xj;
    L += n - j;
  }
}

// x = L⁻ᵀ x, L packed (pack_lower).
void solve_upper(const double* L, int n, double* x) {
  for (int j = n - 1; j >= 0; --j) {
    const double* col = L + (static_cast<std::ptrdiff_t>(j) * n - static_cast<std::ptrdiff_t>(j) * (j - 1) / 2);
    double xj = x[j];
    for (int i = j + 1; i < n; ++i) xj -= col[i - j] * x[i];
    x[j] = xj / col[0];
  }
}

}  // namespace

void Dca::factor() {
  for_each(model_.nbodies, [&](int i) { inertia_[i] = R_[i] * Jc_[i] * R_[i].transpose(); });
  // The nodes are factored by the next solve, each just before its upward step, so that the tree's
  // memory is streamed through once for both (factor_node copies G's blocks then).
  factor_pending_ = true;
}

Dca::Scratch& Dca::scratch() {
  // The arena's threads are numbered 0 .. threads_ − 1 (Pool); one thread runs outside it.
  return scratch_[threads_ > 1 ? tbb::this_task_arena::current_thread_index() : 0];
}

double* Dca::kc_of(const Node& n, Scratch& s) { return (n.kc_on_stack ? s.kc_stack.data() : kc_.data()) + n.KC; }

void Dca::factor_node(int id) {
  const Node& n = nodes_[id];
  const NodeIndex ix(index_, n);
  Scratch& s = scratch();
  const int h6 = 6 * n.h(), c6 = 6 * n.hc, e6 = 6 * n.he;
  // The solves use G as factored: the projections' modified Newton keeps the matrices of q*
  // while update_rows moves Gblk_ with q.
  {
    double* g = tree_.data() + n.G;
    for (int k = 0; k < n.rows; ++k)
      for (int j = 0; j < kMaxConstraintBodies && ix.column[kMaxConstraintBodies * k + j] >= 0; ++j, g += 6)
        Vec6::Map(g) = Gblk_.col(first_block_[ix.row[k]] + j);
  }
  auto K = s.K.topLeftCorner(h6, h6);
  if (n.body >= 0) {
    K.setZero();
    K.topLeftCorner<3, 3>() = inertia_[n.body];
    K.bottomRightCorner<3, 3>().diagonal().setConstant(model_.mass[n.body]);
  } else {
    // diag(K_A, K_B) on the children's handles.
    K.setZero();
    const Node &a = nodes_[n.left], &b = nodes_[n.right];
    K.topLeftCorner(6 * a.hc, 6 * a.hc) = MatX::Map(kc_of(a, s), 6 * a.hc, 6 * a.hc);
    K.bottomRightCorner(6 * b.hc, 6 * b.hc) = MatX::Map(kc_of(b, s), 6 * b.hc, 6 * b.hc);
  }
  // The joining rows' penalty α GᵀG (004 eqs 9-10), one row's 6-blocks at a time.
  const double* g = tree_.data() + n.G;
  for (int k = 0; k < n.rows; ++k) {
    const int* col = ix.column + kMaxConstraintBodies * k;
    int count = 0;
    while (count < kMaxConstraintBodies && col[count] >= 0) ++count;
    for (int a = 0; a < count; ++a) {
      const Vec6 ga = alpha_ * Vec6::Map(g + 6 * a);
      for (int b = 0; b < count; ++b)
        K.template block<6, 6>(col[a], col[b]).noalias() += ga * Vec6::Map(g + 6 * b).transpose();
    }
    g += 6 * count;
  }
  auto KC = MatX::Map(kc_of(n, s), c6, c6);  // over the children's on the stack: K holds them now
  if (n.he == 0) {
    gather(K, ix.keep, n.hc, ix.keep, n.hc, KC);
    return;
  }
  // Eliminate the bodies no constraint above acts on (004 eqs 21-30, as a Schur complement).
  Eigen::Ref<MatX> Kee = s.Kee.topLeftCorner(e6, e6);
  gather(K, ix.elim, n.he, ix.elim, n.he, Kee);
  const Eigen::LLT<Eigen::Ref<MatX>> Lee(Kee);  // in place
  if (Lee.info() != Eigen::Success) {
    std::string names;
    for (int k = 0; k < n.he; ++k) names += (names.empty() ? "'" : ", '") + model_.body_name[n.H[ix.elim[k]]] + "'";
    throw std::runtime_error("dca: the motion of bod" + std::string(n.he > 1 ? "ies " : "y ") + names +
                             " is held neither by inertia nor by constraints (a direction without mass that "
                             "no joint fixes): absolute coordinates need it");
  }
  pack_lower(Kee, tree_.data() + n.L);
  if (n.hc == 0) return;
  auto X = MatX::Map(tree_.data() + n.X, e6, c6);
  gather(K, ix.elim, n.he, ix.keep, n.hc, X);
  Lee.matrixL().solveInPlace(X);
  gather(K, ix.keep, n.hc, ix.keep, n.hc, KC);
  KC.noalias() -= X.transpose() * X;
}

Vec6 Dca::mass_times(int i, const Vec6& v) const {
  Vec6 out;
  out << inertia_[i] * v.head<3>(), model_.mass[i] * v.tail<3>();
  return out;
}

void Dca::solve(const VecX& F, const VecX* x, const VecX* lambda, const VecX& nu, VecX& out) {
  const bool factoring = factor_pending_;
  // Cleared also when a node cannot be factored (an exception): every solve follows a factor().
  struct Cleared {
    bool& pending;
    ~Cleared() { pending = false; }
  } cleared{factor_pending_};
  in_pool([&] {
    post_order(root_, [&](int id) {
      if (factoring) factor_node(id);
      solve_up(id, F, x, lambda, nu);
    });
    pre_order(root_, [&](int id) { solve_down(id, out); });
  });
}

void Dca::solve_up(int id, const VecX& F, const VecX* x, const VecX* lambda, const VecX& nu) {
  // Assembly of the right-hand side: F − M x at a body, R − Gᵀ (λ + α c) with c = G x + ν on the
  // joining rows, then the elimination R_C = R_k − K_ke K_ee⁻¹ R_e (004 eqs 9-10, 31-32). The
  // residuals of refine() are gathered here, each row's at the node that eliminates it, with the
  // node's own copy of G's blocks, rather than in passes of their own over all bodies and rows:
  // Gᵀλ on a body added at its leaf or at the node of the row is the same sum, since the body is a
  // handle of every node in between and passes through their eliminations unchanged.
  const Node& n = nodes_[id];
  const NodeIndex ix(index_, n);
  const int c6 = 6 * n.hc, e6 = 6 * n.he;
  auto R = scratch().R.head(6 * n.h());
  if (n.body >= 0) {
    R = F.segment<6>(6 * n.body);
    if (x) R -= mass_times(n.body, x->segment<6>(6 * n.body));
  } else {
    const Node &a = nodes_[n.left], &b = nodes_[n.right];
    R.head(6 * a.hc) = VecX::Map(tree_.data() + a.RC, 6 * a.hc);
    R.tail(6 * b.hc) = VecX::Map(tree_.data() + b.RC, 6 * b.hc);
  }
  const double* g = tree_.data() + n.G;
  for (int k = 0; k < n.rows; ++k) {
    const int row = ix.row[k];
    const int* col = ix.column + kMaxConstraintBodies * k;
    const int* body = block_body_.data() + first_block_[row];
    const int count = first_block_[row + 1] - first_block_[row];
    double c = nu(row);
    if (x)
      for (int j = 0; j < count; ++j) c += Vec6::Map(g + 6 * j).dot(x->segment<6>(6 * body[j]));
    c_(row) = c;  // read by solve_down
    const double t = alpha_ * c + (lambda ? (*lambda)(row) : 0.0);
    for (int j = 0; j < count; ++j) R.segment<6>(col[j]) -= t * Vec6::Map(g + 6 * j);
    g += 6 * count;
  }
  // With K_ee = L Lᵀ and X = L⁻¹ K_ek: K_ke K_ee⁻¹ R_e = Xᵀ z, z = L⁻¹ R_e.
  auto z = VecX::Map(tree_.data() + n.z, e6);
  for (int k = 0; k < n.he; ++k) z.segment<6>(6 * k) = R.segment<6>(6 * ix.elim[k]);
  solve_lower(tree_.data() + n.L, e6, z.data());
  auto RC = VecX::Map(tree_.data() + n.RC, c6);
  for (int k = 0; k < n.hc; ++k) RC.segment<6>(6 * k) = R.segment<6>(6 * ix.keep[k]);
  if (e6 > 0 && c6 > 0) RC.noalias() -= MatX::Map(tree_.data() + n.X, e6, c6).transpose() * z;
}

void Dca::solve_down(int id, VecX& out) {
  // Disassembly: the eliminated bodies' a_e = K_ee⁻¹ (R_e − K_ek a_k) from the handles' a_k, and
  // the multipliers' change α (G a + c) (004 eqs 17, 21, 23), c the rows' residual of solve_up.
  const Node& n = nodes_[id];
  const NodeIndex ix(index_, n);
  const int c6 = 6 * n.hc, e6 = 6 * n.he;
  Scratch& s = scratch();
  auto aH = s.aH.head(6 * n.h());
  const auto aC = VecX::Map(tree_.data() + n.aC, c6);
  for (int k = 0; k < n.hc; ++k) aH.segment<6>(6 * ix.keep[k]) = aC.segment<6>(6 * k);
  if (e6 > 0) {
    // a_e = K_ee⁻¹ (R_e − K_ek a_k) = L⁻ᵀ (z − X a_k).
    auto ae = s.tmp.head(e6);
    ae = VecX::Map(tree_.data() + n.z, e6);
    if (c6 > 0) ae.noalias() -= MatX::Map(tree_.data() + n.X, e6, c6) * aC;
    solve_upper(tree_.data() + n.L, e6, ae.data());
    for (int k = 0; k < n.he; ++k) aH.segment<6>(6 * ix.elim[k]) = ae.segment<6>(6 * k);
  }
  const double* g = tree_.data() + n.G;
  for (int k = 0; k < n.rows; ++k) {
    double ga = c_(ix.row[k]);
    const int* col = ix.column + kMaxConstraintBodies * k;
    for (int j = 0; j < kMaxConstraintBodies && col[j] >= 0; ++j, g += 6) ga += Vec6::Map(g).dot(aH.segment<6>(col[j]));
    dlambda_(ix.row[k]) = alpha_ * ga;
  }
  if (n.body >= 0) {
    out.segment<6>(6 * n.body) = aH;
  } else {
    const Node &a = nodes_[n.left], &b = nodes_[n.right];
    VecX::Map(tree_.data() + a.aC, 6 * a.hc) = aH.head(6 * a.hc);
    VecX::Map(tree_.data() + b.aC, 6 * b.hc) = aH.tail(6 * b.hc);
  }
}

void Dca::applied_forces(double t, const VecX& x) {
  const int nb = model_.nbodies;
  // Wrenches [moment about the world origin; force], world axes, then about each centre of mass.
  Q_.setZero();
  if (has_forces_) {
    to_joint(x, qf_, uf_);
    update_positions(model_, kin_, qf_);
    update_velocities(model_, kin_, qf_, uf_);
    evaluate_forces(model_, kin_, t, qf_, uf_, forces_);
    for (int i = 0; i < nb; ++i) {
      Q_.segment<6>(6 * i) += forces_.applied.f_world.col(i);
      // Joint forces τ as the wrench F = S (SᵀS)⁻¹ τ on the child, −F on the parent (Sᵀ F = τ).
      const int nv = model_.nv_joint[i];
      if (nv == 0) continue;
      const auto S = kin_.S.middleCols(model_.v_index[i], nv);
      const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, 6, 6> StS = S.transpose() * S;
      const Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 6, 1> tau = forces_.applied.tau.segment(model_.v_index[i], nv);
      const Vec6 F = kin_.X_world[i].act_force(S * StS.ldlt().solve(tau));
      Q_.segment<6>(6 * i) += F;
      if (model_.parent[i] >= 0) Q_.segment<6>(6 * model_.parent[i]) -= F;
    }
  }
  for_each(nb, [&](int i) {
    auto q = Q_.segment<6>(6 * i);
    const Vec3 f = q.tail<3>() + model_.mass[i] * model_.gravity;
    const Mat3 J = R_[i] * Jc_[i] * R_[i].transpose();
    q.head<3>() = q.head<3>() - r_[i].cross(q.tail<3>()) - w_[i].cross(J * w_[i]);
    q.tail<3>() = f;
  });
}

void Dca::body_accelerations(double t, const VecX& x, Eigen::Ref<VecX> a) {
  load_bodies(x, true);
  applied_forces(t, x);
  update_rows(true);
  factor();
  // ν = −γ + 2μΩ Φ̇ + Ω² Φ (004 eq 6, with G a = γ).
  nu_ = -gamma_ + 2.0 * mu_ * omega_ * phidot_ + omega_ * omega_ * phi_;
  out_.setZero();
  lambda_ = warm_lambda_;
  diagnostics_.acceleration_iterations = refine(Q_, nu_, eps_a_, out_);
  if (refresh_warm_) warm_lambda_ = lambda_;
  refresh_warm_ = false;
  constraint_residual(out_, nu_);
  diagnostics_.acceleration_residual = max_abs(c_);
  a = out_;
}


void Dca::constraint_residual(const VecX& x, const VecX& nu) {
  for_each(static_cast<int>(rows_.size()), [&](int r) {
    double c = nu(r);
    for (int b = first_block_[r]; b < first_block_[r + 1]; ++b) c += Gblk_.col(b).dot(x.segment<6>(6 * block_body_[b]));
    c_(r) = c;
  });
}

void Dca::subtract_constraint_forces(int i) {
  for (int k = body_first_[i]; k < body_first_[i + 1]; ++k)
    res_.segment<6>(6 * i) -= lambda_(body_blocks_[k].first) * Gblk_.col(body_blocks_[k].second);
}

int Dca::refine(const VecX& F, const VecX& nu, double tolerance, VecX& x) {
  int k = 0;
  while (k < max_iterations_) {
    solve(F, &x, &lambda_, nu, delta_);
    x += delta_;
    lambda_ += dlambda_;
    ++k;
    if (delta_.cwiseAbs().maxCoeff() < floor_of(tolerance, x.cwiseAbs().maxCoeff())) break;
  }
  return k;
}

void Dca::derivative(double t, const VecX& x, Eigen::Ref<VecX> dx) {
  const int nb = model_.nbodies;
  for_each(nb, [&](int i) {
    dx.segment<3>(7 * i) = x.segment<3>(7 * nb + 6 * i + 3);
    const Eigen::Map<const Eigen::Vector4d> p(x.data() + 7 * i + 3);
    const Vec3 w = x.segment<3>(7 * nb + 6 * i);
    // ṗ = ½ (0, ω) ⊗ p, ω in world axes.
    dx(7 * i + 3) = -0.5 * w.dot(p.tail<3>());
    dx.segment<3>(7 * i + 4) = 0.5 * (p(0) * w + w.cross(p.tail<3>()));
  });
  if (!project_stages_) return body_accelerations(t, x, dx.tail(6 * nb));
  // The accelerations at the stage's positions projected onto the constraints, with its velocities
  // (see project_stages_).
  stage_ = x;
  project_positions(stage_);
  body_accelerations(t, stage_, dx.tail(6 * nb));
}

int Dca::project_positions(Eigen::Ref<VecX> x) {
  const int nb = model_.nbodies;
  // 004 eqs 48-49, 56, 99: matrices at q*, Δ from −M(q − q*) and ν = Φ(q).
  load_bodies(x, false);
  r_star_ = r_;
  R_star_ = R_;
  update_rows(false);
  factor();  // and the inertia at q*, the metric
  lambda_.setZero();
  int k = 0;
  while (k < max_iterations_) {
    // Residuals of M (q − q*) + Gᵀλ = 0 and Φ(q) = 0 at the current q and λ; the correction Δ of
    // the modified Newton iteration (eq 99), with the matrices at q*, solves for them.
    for_each(nb, [&](int i) {
      Vec6 d;
      d << rotation_vector(R_[i] * R_star_[i].transpose()), r_[i] - r_star_[i];
      res_.segment<6>(6 * i) = -mass_times(i, d);
      subtract_constraint_forces(i);
    });
    solve(res_, nullptr, nullptr, phi_, out_);
    lambda_ += dlambda_;
    ++k;
    for_each(nb, [&](int i) {
      R_[i] = rotation_of(out_.segment<3>(6 * i)) * R_[i];
      r_[i] += out_.segment<3>(6 * i + 3);
    });
    update_rows(false);
    double reach = 1.0;  // radians, and the farthest centre of mass
    for (int i = 0; i < nb; ++i) reach = std::max(reach, r_[i].cwiseAbs().maxCoeff());
    if (out_.cwiseAbs().maxCoeff() < floor_of(eps_p_, reach)) break;
  }
  for (int i = 0; i < nb; ++i) {
    x.segment<3>(7 * i) = r_[i];
    const Quat p(R_[i]);
    Quat old(x(7 * i + 3), x(7 * i + 4), x(7 * i + 5), x(7 * i + 6));
    const double sign = p.coeffs().dot(old.coeffs()) < 0.0 ? -1.0 : 1.0;  // keep the sign: continuous p
    x(7 * i + 3) = sign * p.w();
    x.segment<3>(7 * i + 4) = sign * p.vec();
  }
  return k;
}

void Dca::project_velocities(Eigen::Ref<VecX> x) {
  const int nb = model_.nbodies;
  // 004 eqs 64-65, 72: matrices at the (projected) q, v from M v* and ν = 0.
  load_bodies(x, true);
  update_rows(true);
  factor();
  for (int i = 0; i < nb; ++i) {  // F = M v*, x from v*
    prev_.segment<3>(6 * i) = w_[i];
    prev_.segment<3>(6 * i + 3) = v_[i];
    rhs_.segment<6>(6 * i) = mass_times(i, prev_.segment<6>(6 * i));
  }
  out_ = prev_;
  nu_.setZero();
  lambda_.setZero();
  diagnostics_.velocity_iterations = refine(rhs_, nu_, eps_v_, out_);
  x.tail(6 * nb) = out_;
  load_bodies(x, true);
  update_rows(true);
  diagnostics_.velocity_residual = max_abs(phidot_);
}

void Dca::project(Eigen::Ref<VecX> x) {
  diagnostics_.position_iterations = project_positions(x);
  diagnostics_.position_residual = max_abs(phi_);
  project_velocities(x);
}

void Dca::accept(double /*t*/, Eigen::Ref<VecX> x) {
  for (int i = 0; i < model_.nbodies; ++i) x.segment<4>(7 * i + 3).normalize();
  refresh_warm_ = true;
  if (projections_) {
    project(x);
  } else {
    load_bodies(x, true);
    update_rows(true);
    diagnostics_.position_iterations = diagnostics_.velocity_iterations = 0;
    diagnostics_.position_residual = max_abs(phi_);
    diagnostics_.velocity_residual = max_abs(phidot_);
  }
  joint_state_of(x);  // the joint angles' reference, so that output stays continuous
}

void Dca::complete(double t, Eigen::Ref<VecX> x) {
  const Diagnostics step = diagnostics_;
  accept(t, x);
  diagnostics_ = step;
}

std::vector<std::string> Dca::diagnostic_names() const {
  return {"dca.iterations.acceleration", "dca.iterations.position", "dca.iterations.velocity",
          "dca.residual.position",       "dca.residual.velocity",   "dca.residual.acceleration"};
}

void Dca::diagnostic_values(Eigen::Ref<VecX> out) const {
  const Diagnostics& d = diagnostics_;
  out << d.acceleration_iterations, d.position_iterations, d.velocity_iterations, d.position_residual,
      d.velocity_residual, d.acceleration_residual;
}

void Dca::to_state(const VecX& q, const VecX& u, Eigen::Ref<VecX> x) const {
  const int nb = model_.nbodies;
  BodyState s;
  body_state(model_, q, u, s);
  for (int i = 0; i < nb; ++i) {
    const Transform& X = s.pose[i];
    const Vec3 c = X.R * model_.com[i];
    const Quat p(X.R);
    x.segment<3>(7 * i) = X.p + c;
    x(7 * i + 3) = p.w();
    x.segment<3>(7 * i + 4) = p.vec();
    // Body-frame spatial velocity [ω; v of the body frame origin] to world ω and ṙ of the centre.
    const Vec3 w = X.R * s.velocity[i].head<3>();
    x.segment<3>(7 * nb + 6 * i) = w;
    x.segment<3>(7 * nb + 6 * i + 3) = X.R * s.velocity[i].tail<3>() + w.cross(c);
  }
  q_near_ = q;
}

void Dca::to_joint(const VecX& x, Eigen::Ref<VecX> q, Eigen::Ref<VecX> u) const {
  joint_state_of(x);
  q = q_joint_;
  u = u_joint_;
}

void Dca::joint_state_of(const Eigen::Ref<const VecX>& x) const {
  const int nb = model_.nbodies;
  for (int i = 0; i < nb; ++i) {
    const Eigen::Map<const Eigen::Vector4d> p(x.data() + 7 * i + 3);
    const Mat3 R = Quat(p(0), p(1), p(2), p(3)).normalized().toRotationMatrix();
    const Vec3 c = R * model_.com[i];
    state_.pose[i] = {R, Vec3(x.segment<3>(7 * i)) - c};
    const Vec3 w = x.segment<3>(7 * nb + 6 * i), v = x.segment<3>(7 * nb + 6 * i + 3);
    state_.velocity[i] << R.transpose() * w, R.transpose() * (v - w.cross(c));
  }
  joint_state(model_, state_, q_near_, q_joint_, u_joint_);
  q_near_ = q_joint_;
}

void Dca::accelerations(double t, const VecX& q, const VecX& u, Eigen::Ref<VecX> udot) {
  VecX& x = x_joint_;
  to_state(q, u, x);
  body_accelerations(t, x, a_joint_);
  // a_i (body frame) = X⁻¹ a_parent + S u̇ + c (kinematics.hpp): u̇ by least squares on S.
  update_positions(model_, kin_, q);
  update_velocities(model_, kin_, q, u);
  for (int i = 0; i < model_.nbodies; ++i) {
    const Vec3 dw = a_joint_.segment<3>(6 * i), ddr = a_joint_.segment<3>(6 * i + 3);
    const Vec3 w = x.segment<3>(7 * model_.nbodies + 6 * i), v = x.segment<3>(7 * model_.nbodies + 6 * i + 3);
    const Vec3 rc = x.segment<3>(7 * i);
    Vec6 A;  // world spatial acceleration about the world origin
    A << dw, ddr - dw.cross(rc) - w.cross(v);
    body_acc_[i] = kin_.X_world[i].inv_act_motion(A);
    Vec6 rel = body_acc_[i] - kin_.c[i];
    if (model_.parent[i] >= 0) rel -= kin_.X_parent[i].inv_act_motion(body_acc_[model_.parent[i]]);
    const int nv = model_.nv_joint[i];
    if (nv == 0) continue;
    const auto S = kin_.S.middleCols(model_.v_index[i], nv);
    const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, 6, 6> StS = S.transpose() * S;
    const Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 6, 1> Str = S.transpose() * rel;
    udot.segment(model_.v_index[i], nv) = StS.ldlt().solve(Str);
  }
  kept_stale_ = true;  // multipliers() maps λ on demand, at this (q, u)
}

const VecX& Dca::multipliers() const {
  // λ on the kept rows: G_keptᵀ λ_kept = G_allᵀ λ_all in the least-squares sense, by the normal
  // equations G_k G_kᵀ λ_kept = G_k G_allᵀ λ_all (minimum norm where G_k loses rank).
  const LoopStructure& loops = model_.loops();
  if (!kept_stale_ || loops.constraints.rows() == 0) return kept_lambda_;
  kept_stale_ = false;
  constraint_jacobian(model_, loops.unreduced, kin_, joint_rows_, G_all_);
  constraint_jacobian(model_, loops.constraints, kin_, joint_rows_, G_kept_);
  generalized_.noalias() = G_all_.transpose() * lambda_.tail(loop_rows_);
  kept_rhs_.noalias() = G_kept_ * generalized_;
  kept_normal_.noalias() = G_kept_ * G_kept_.transpose();
  kept_solver_.compute(kept_normal_);
  kept_solver_.solve(kept_rhs_, kept_lambda_);
  return kept_lambda_;
}

}  // namespace loopdyn
