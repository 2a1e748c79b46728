#include "formulations/dca/solver.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include <Eigen/Cholesky>

namespace loopdyn::dca {

namespace {

// out = K restricted to the 6 x 6 blocks (rows[a], cols[b]), a < nrows, b < ncols.
template <class In, class Out>
void gather(const In& K, const int* rows, int nrows, const int* cols, int ncols, Out&& out) {
  for (int a = 0; a < nrows; ++a)
    for (int b = 0; b < ncols; ++b) out.template block<6, 6>(6 * a, 6 * b) = K.template block<6, 6>(6 * rows[a], 6 * cols[b]);
}

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

double floor_of(double tolerance, double largest) {
  return std::max(tolerance, 100.0 * std::numeric_limits<double>::epsilon() * largest);
}

Solver::Solver(const Model& model, const ConstraintSet& set, const AssemblyTree& tree, const ParallelDriver& parallel,
               const Parameters& parameters)
    : model_(model), set_(set), tree_(tree), parallel_(parallel), alpha_(parameters.alpha),
      max_iterations_(parameters.max_iterations) {
  data_.assign(tree.tree_size, 0.0);
  kc_.assign(tree.kc_size, 0.0);
  scratch_.resize(parallel.threads());
  for (Scratch& sc : scratch_) {
    sc.K.setZero(tree.largest_h6, tree.largest_h6);
    sc.Kee.setZero(tree.largest_e6, tree.largest_e6);
    sc.kc_stack.assign(tree.stack_size, 0.0);
    for (VecX* v : {&sc.R, &sc.aH, &sc.tmp}) v->setZero(tree.largest_h6);
  }
  dlambda_.setZero(set.size());
  c_.setZero(set.size());
  delta_.setZero(BodyVector::size(model.nbodies));
}

Factorization Solver::factor(const std::vector<Mat3>& inertia, const Mat6X& G) {
  inertia_ = &inertia;
  G_ = &G;
  pending_ = true;
  return Factorization(++generation_);
}

void Solver::factor_node(int id) {
  const Node& n = tree_.nodes[id];
  const NodeIndex ix(tree_.index, n);
  Scratch& s = scratch();
  const int h6 = 6 * n.h(), c6 = 6 * n.hc, e6 = 6 * n.he;
  // The solves use G as factored: the projections' modified Newton keeps the matrices of q*
  // while Engine::update_rows moves Engine::Gblk_ with q.
  {
    double* g = data_.data() + n.G;
    for (int k = 0; k < n.rows; ++k)
      for (int j = 0; j < kMaxConstraintBodies && ix.column[kMaxConstraintBodies * k + j] >= 0; ++j, g += 6)
        Vec6::Map(g) = G_->col(set_.first_block[ix.row[k]] + j);
  }
  auto K = s.K.topLeftCorner(h6, h6);
  if (n.body >= 0) {
    K.setZero();
    K.topLeftCorner<3, 3>() = (*inertia_)[n.body];
    K.bottomRightCorner<3, 3>().diagonal().setConstant(model_.mass[n.body]);
  } else {
    // diag(K_A, K_B) on the children's handles.
    K.setZero();
    const Node &a = tree_.nodes[n.left], &b = tree_.nodes[n.right];
    K.topLeftCorner(6 * a.hc, 6 * a.hc) = MatX::Map(kc_of(a, s), 6 * a.hc, 6 * a.hc);
    K.bottomRightCorner(6 * b.hc, 6 * b.hc) = MatX::Map(kc_of(b, s), 6 * b.hc, 6 * b.hc);
  }
  // The joining rows' penalty α GᵀG (004 eqs 9-10), one row's 6-blocks at a time.
  const double* g = data_.data() + n.G;
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
  pack_lower(Kee, data_.data() + n.L);
  if (n.hc == 0) return;
  auto X = MatX::Map(data_.data() + n.X, e6, c6);
  gather(K, ix.elim, n.he, ix.keep, n.hc, X);
  Lee.matrixL().solveInPlace(X);
  gather(K, ix.keep, n.hc, ix.keep, n.hc, KC);
  KC.noalias() -= X.transpose() * X;
}

void Solver::solve(const Factorization& f, const VecX& F, const VecX* x, const VecX* lambda, const VecX& nu, VecX& out) {
  if (f.generation_ != generation_)
    throw std::logic_error("dca: a solve with a factorization that a later factor() has replaced");
  const bool factoring = pending_;
  // Cleared also when a node cannot be factored (an exception): every solve follows a factor().
  struct Cleared {
    bool& pending;
    ~Cleared() { pending = false; }
  } cleared{pending_};
  parallel_.in_pool([&] {
    parallel_.post_order(tree_.nodes, tree_.root, [&](int id) {
      if (factoring) factor_node(id);
      solve_up(id, F, x, lambda, nu);
    });
    parallel_.pre_order(tree_.nodes, tree_.root, [&](int id) { solve_down(id, out); });
  });
}

void Solver::solve_up(int id, const VecX& F, const VecX* x, const VecX* lambda, const VecX& nu) {
  // Assembly of the right-hand side: F − M x at a body, R − Gᵀ (λ + α c) with c = G x + ν on the
  // joining rows, then the elimination R_C = R_k − K_ke K_ee⁻¹ R_e (004 eqs 9-10, 31-32). The
  // residuals of refine() are gathered here, each row's at the node that eliminates it, with the
  // node's own copy of G's blocks, rather than in passes of their own over all bodies and rows:
  // Gᵀλ on a body added at its leaf or at the node of the row is the same sum, since the body is a
  // handle of every node in between and passes through their eliminations unchanged.
  const Node& n = tree_.nodes[id];
  const NodeIndex ix(tree_.index, n);
  const int c6 = 6 * n.hc, e6 = 6 * n.he;
  auto R = scratch().R.head(6 * n.h());
  if (n.body >= 0) {
    R = BodyVector::body(F, n.body);
    if (x) R -= mass_times(n.body, BodyVector::body(*x, n.body));
  } else {
    const Node &a = tree_.nodes[n.left], &b = tree_.nodes[n.right];
    R.head(6 * a.hc) = VecX::Map(data_.data() + a.RC, 6 * a.hc);
    R.tail(6 * b.hc) = VecX::Map(data_.data() + b.RC, 6 * b.hc);
  }
  const double* g = data_.data() + n.G;
  for (int k = 0; k < n.rows; ++k) {
    const int row = ix.row[k];
    const int* col = ix.column + kMaxConstraintBodies * k;
    const int* body = set_.block_body.data() + set_.first_block[row];
    const int count = set_.first_block[row + 1] - set_.first_block[row];
    double c = nu(row);
    if (x)
      for (int j = 0; j < count; ++j) c += Vec6::Map(g + 6 * j).dot(BodyVector::body(*x, body[j]));
    c_(row) = c;  // read by solve_down
    const double t = alpha_ * c + (lambda ? (*lambda)(row) : 0.0);
    for (int j = 0; j < count; ++j) R.segment<6>(col[j]) -= t * Vec6::Map(g + 6 * j);
    g += 6 * count;
  }
  // With K_ee = L Lᵀ and X = L⁻¹ K_ek: K_ke K_ee⁻¹ R_e = Xᵀ z, z = L⁻¹ R_e.
  auto z = VecX::Map(data_.data() + n.z, e6);
  for (int k = 0; k < n.he; ++k) z.segment<6>(6 * k) = R.segment<6>(6 * ix.elim[k]);
  solve_lower(data_.data() + n.L, e6, z.data());
  auto RC = VecX::Map(data_.data() + n.RC, c6);
  for (int k = 0; k < n.hc; ++k) RC.segment<6>(6 * k) = R.segment<6>(6 * ix.keep[k]);
  if (e6 > 0 && c6 > 0) RC.noalias() -= MatX::Map(data_.data() + n.X, e6, c6).transpose() * z;
}

void Solver::solve_down(int id, VecX& out) {
  // Disassembly: the eliminated bodies' a_e = K_ee⁻¹ (R_e − K_ek a_k) from the handles' a_k, and
  // the multipliers' change α (G a + c) (004 eqs 17, 21, 23), c the rows' residual of solve_up.
  const Node& n = tree_.nodes[id];
  const NodeIndex ix(tree_.index, n);
  const int c6 = 6 * n.hc, e6 = 6 * n.he;
  Scratch& s = scratch();
  auto aH = s.aH.head(6 * n.h());
  const auto aC = VecX::Map(data_.data() + n.aC, c6);
  for (int k = 0; k < n.hc; ++k) aH.segment<6>(6 * ix.keep[k]) = aC.segment<6>(6 * k);
  if (e6 > 0) {
    // a_e = K_ee⁻¹ (R_e − K_ek a_k) = L⁻ᵀ (z − X a_k).
    auto ae = s.tmp.head(e6);
    ae = VecX::Map(data_.data() + n.z, e6);
    if (c6 > 0) ae.noalias() -= MatX::Map(data_.data() + n.X, e6, c6) * aC;
    solve_upper(data_.data() + n.L, e6, ae.data());
    for (int k = 0; k < n.he; ++k) aH.segment<6>(6 * ix.elim[k]) = ae.segment<6>(6 * k);
  }
  const double* g = data_.data() + n.G;
  for (int k = 0; k < n.rows; ++k) {
    double ga = c_(ix.row[k]);
    const int* col = ix.column + kMaxConstraintBodies * k;
    for (int j = 0; j < kMaxConstraintBodies && col[j] >= 0; ++j, g += 6) ga += Vec6::Map(g).dot(aH.segment<6>(col[j]));
    dlambda_(ix.row[k]) = alpha_ * ga;
  }
  if (n.body >= 0) {
    BodyVector::body(out, n.body) = aH;
  } else {
    const Node &a = tree_.nodes[n.left], &b = tree_.nodes[n.right];
    VecX::Map(data_.data() + a.aC, 6 * a.hc) = aH.head(6 * a.hc);
    VecX::Map(data_.data() + b.aC, 6 * b.hc) = aH.tail(6 * b.hc);
  }
}

int Solver::refine(const Factorization& f, const VecX& F, const VecX& nu, double tolerance, VecX& x, VecX& lambda) {
  int k = 0;
  while (k < max_iterations_) {
    solve(f, F, &x, &lambda, nu, delta_);
    x += delta_;
    lambda += dlambda_;
    ++k;
    if (delta_.cwiseAbs().maxCoeff() < floor_of(tolerance, x.cwiseAbs().maxCoeff())) break;
  }
  return k;
}

}  // namespace loopdyn::dca
