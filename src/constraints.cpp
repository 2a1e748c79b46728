// Loop-closure constraints: rows, Φ, G, γ and the structural redundancy check (constraints.hpp).
#include "loopdyn/constraints.hpp"

#include <Eigen/QR>
#include <Eigen/SparseQR>
#include <algorithm>
#include <limits>
#include <random>

#include "loopdyn/assembly.hpp"
#include "loopdyn/linalg.hpp"

namespace loopdyn {

namespace {

using Kind = ConstraintRow::Kind;

// Rows of one loop-closing joint (see the table in constraints.hpp).
void joint_rows(const ModelJoint& lj, int loop, std::vector<ConstraintRow>& out) {
  const Vec3 ex = Vec3::UnitX(), ey = Vec3::UnitY(), ez = Vec3::UnitZ();
  auto along = [&](const Vec3& u, const char* name) { out.push_back({Kind::along, loop, u, u, lj.name + ".along." + name}); };
  auto dot = [&](const Vec3& u, const Vec3& w, const char* name) { out.push_back({Kind::dot, loop, u, w, lj.name + ".dot." + name}); };
  auto translation = [&] {
    along(ex, "x");
    along(ey, "y");
    along(ez, "z");
  };
  auto rotation_locked = [&] {
    dot(ey, ez, "yz");
    dot(ez, ex, "zx");
    dot(ex, ey, "xy");
  };
  // b1, b2: an orthonormal pair perpendicular to the axis a.
  auto axis_kept = [&](const Vec3& a) {
    dot(a.unitOrthogonal(), a, "b1");
    dot(a.cross(a.unitOrthogonal()), a, "b2");
  };
  auto off_axis = [&](const Vec3& a) {
    along(a.unitOrthogonal(), "b1");
    along(a.cross(a.unitOrthogonal()), "b2");
  };
  std::visit(
      [&](const auto& k) {
        using K = std::decay_t<decltype(k)>;
        if constexpr (std::is_same_v<K, Revolute>) {
          translation();
          axis_kept(k.axis);
        } else if constexpr (std::is_same_v<K, Prismatic>) {
          off_axis(k.axis);
          rotation_locked();
        } else if constexpr (std::is_same_v<K, Cylindrical>) {
          off_axis(k.axis);
          axis_kept(k.axis);
        } else if constexpr (std::is_same_v<K, Universal>) {
          translation();
          dot(k.axis, k.axis2, "axes");
        } else if constexpr (std::is_same_v<K, Spherical>) {
          translation();
        } else if constexpr (std::is_same_v<K, Planar>) {
          along(ez, "z");
          dot(ex, ez, "xz");
          dot(ey, ez, "yz");
        } else if constexpr (std::is_same_v<K, Fixed>) {
          translation();
          rotation_locked();
        }
      },
      lj.joint);
}

// World kinematics of a joint frame (pose `frame` on `body`, −1 = ground).
void frame_positions(const KinematicsData& kin, int body, const Transform& frame, ConstraintData::Frame& f) {
  const Transform W = body < 0 ? frame : kin.X_world[body] * frame;
  f.R = W.R;
  f.x = W.p;
}

void frame_motion(const KinematicsData& kin, const std::vector<Vec6>& a0, int body, ConstraintData::Frame& f) {
  if (body < 0) {
    f.w = f.v = f.dw0 = f.a0 = Vec3::Zero();
    return;
  }
  // World spatial velocity V = [ω; v_O] and acceleration A = [ω̇; a_O] about the world origin;
  // origin point: v = v_O + ω × x, a = a_O + ω̇ × x + ω × v.
  const Vec6 V = kin.X_world[body].act_motion(kin.v[body]);
  const Vec6 A = kin.X_world[body].act_motion(a0[body]);
  f.w = V.head<3>();
  f.v = V.tail<3>() + f.w.cross(f.x);
  f.dw0 = A.head<3>();
  f.a0 = A.tail<3>() + f.dw0.cross(f.x) + f.w.cross(f.v);
}

void update_loop_frames(const Model& model, const KinematicsData& kin, ConstraintData& d, int k) {
  const ModelJoint& lj = model.loop_joints[k];
  frame_positions(kin, lj.parent, lj.parent_frame, d.fp[k]);
  frame_positions(kin, lj.child, lj.child_frame, d.fc[k]);
}

void update_frames(const Model& model, const KinematicsData& kin, ConstraintData& d) {
  for (int k = 0; k < static_cast<int>(model.loop_joints.size()); ++k) update_loop_frames(model, kin, d, k);
}

// Φ = Σ c q − value of a coupling row.
double coupling_error(const ModelCoupling& c, const VecX& q) {
  double e = -c.value;
  for (const ModelCoupling::Term& t : c.terms) e += t.coefficient * q(t.q_index);
  return e;
}

double position_row(const Model& model, const ConstraintRow& row, const VecX& q, const ConstraintData& d) {
  if (row.kind == Kind::coupling) return coupling_error(model.couplings[row.loop], q);
  const auto &p = d.fp[row.loop], &c = d.fc[row.loop];
  // dot: (Rp u)·(Rc w); along: (Rp u)·(x_c − x_p).
  return row.kind == Kind::dot ? (p.R * row.u).dot(c.R * row.w) : (p.R * row.u).dot(c.x - p.x);
}

// Calls f(body, sign) for every body on the tree path between a loop joint's two bodies, below
// their common ancestor: sign +1 on the child side, −1 on the parent side. parent[i] < i, so the
// larger index is never an ancestor of the smaller one (ground is −1).
template <class F>
void for_path_bodies(const Model& model, const ModelJoint& lj, F f) {
  for (int child = lj.child, parent = lj.parent; child != parent;) {
    const bool child_side = child > parent;
    int& body = child_side ? child : parent;
    f(body, child_side ? 1.0 : -1.0);
    body = model.parent[body];
  }
}

// Row r of G for a loop-joint row, on the tree path between the joint's two bodies only. A column
// of a common ancestor moves both frames rigidly: ω_c − ω_p = 0 and v_c − v_p = ω × d, so
// b·(ω × d) + (b × d)·ω = 0 and both row kinds vanish there (the row is sparse in the tree).
// A path column s = [ω; v_O] (world axes, about the world origin) with σ = +1 on the child side,
// −1 on the parent side gives
//   dot    Φ̇ = (a × b)·(ω_c − ω_p)             → σ (a × b)·ω;
//   along  Φ̇ = b·(v_c − v_p) + (b × d)·ω_p     → σ b·(v_O + ω × x_c)
// (on the parent side −b·(v_O + ω × x_p) + (b × d)·ω = −b·(v_O + ω × (x_p + d))).
// `first_column(body)` is the column of the body's first speed in G.
template <class FirstColumn>
void loop_row(const Model& model, const KinematicsData& kin, const ModelJoint& lj, const ConstraintRow& row,
              const ConstraintData::Frame& p, const ConstraintData::Frame& c, Eigen::Ref<MatX> G, int r,
              FirstColumn first_column) {
  const bool dot = row.kind == Kind::dot;
  const Vec3 b = p.R * row.u;
  const Vec3 n = dot ? Vec3((c.R * row.w).cross(b)) : b;
  for_path_bodies(model, lj, [&](int body, double sign) {
    for (int k = 0, col = model.v_index[body], out = first_column(body); k < model.nv_joint[body]; ++k) {
      const Vec6 s = kin.X_world[body].act_motion(kin.S.col(col + k));
      const Vec3 w = s.head<3>();
      G(r, out + k) = sign * n.dot(dot ? w : Vec3(s.tail<3>() + w.cross(c.x)));
    }
  });
}

// Row r of G for `row`, columns placed by first_column (see loop_row); G's row must be zero.
template <class FirstColumn>
void jacobian_row(const Model& model, const ConstraintRow& row, const KinematicsData& kin, const ConstraintData& d,
                  Eigen::Ref<MatX> G, int r, FirstColumn first_column) {
  if (row.kind == Kind::coupling) {
    for (const ModelCoupling::Term& t : model.couplings[row.loop].terms)
      G(r, first_column(t.joint) + t.v_index - model.v_index[t.joint]) += t.coefficient;
    return;
  }
  loop_row(model, kin, model.loop_joints[row.loop], row, d.fp[row.loop], d.fc[row.loop], G, r, first_column);
}

void jacobian_rows(const Model& model, const std::vector<ConstraintRow>& rows, const KinematicsData& kin,
                   const ConstraintData& d, Eigen::Ref<MatX> G) {
  G.setZero();
  const auto global = [&](int body) { return model.v_index[body]; };
  for (std::size_t r = 0; r < rows.size(); ++r) jacobian_row(model, rows[r], kin, d, G, static_cast<int>(r), global);
}

double bias_row(const ConstraintRow& row, const ConstraintData& d) {
  if (row.kind == Kind::coupling) return 0.0;  // constant G: γ = 0
  const auto &p = d.fp[row.loop], &c = d.fc[row.loop];
  const Vec3 b = p.R * row.u, bdot = p.w.cross(b);
  double bias;
  if (row.kind == Kind::dot) {
    // Φ̈ − G u̇ = ṅ·Δω + n·(ω̇0_c − ω̇0_p), n = a × b, ṅ = ȧ × b + a × ḃ.
    const Vec3 a = c.R * row.w, adot = c.w.cross(a);
    bias = (adot.cross(b) + a.cross(bdot)).dot(c.w - p.w) + a.cross(b).dot(c.dw0 - p.dw0);
  } else {
    // Φ̈ − G u̇ = (ω̇0_p × b + ω_p × ḃ)·d + 2 ḃ·ḋ + b·(a0_c − a0_p).
    const Vec3 dist = c.x - p.x, ddot = c.v - p.v;
    bias = (p.dw0.cross(b) + p.w.cross(bdot)).dot(dist) + 2.0 * bdot.dot(ddot) + b.dot(c.a0 - p.a0);
  }
  return -bias;
}

void update_loop_motion(const Model& model, const KinematicsData& kin, ConstraintData& d, int k) {
  frame_motion(kin, d.a0, model.loop_joints[k].parent, d.fp[k]);
  frame_motion(kin, d.a0, model.loop_joints[k].child, d.fc[k]);
}

// Random configuration: angles and offsets in [-π, π], unit quaternions (starts for closing the
// loops, and the samples of the redundancy check when the loops cannot be closed).
VecX random_configuration(const Model& model, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> dist(-M_PI, M_PI);
  VecX q(model.nq);
  for (int k = 0; k < model.nq; ++k) q(k) = dist(rng);
  model.normalize(q);
  return q;
}

// Speeds row acts on, ascending: those of the bodies on a loop joint's tree path (loop_row), or of
// a coupling's terms.
std::vector<int> row_speeds(const Model& model, const ConstraintRow& row) {
  std::vector<int> speeds;
  if (row.kind == Kind::coupling) {
    for (const ModelCoupling::Term& t : model.couplings[row.loop].terms) speeds.push_back(t.v_index);
  } else {
    for_path_bodies(model, model.loop_joints[row.loop], [&](int body, double) {
      for (int k = 0; k < model.nv_joint[body]; ++k) speeds.push_back(model.v_index[body] + k);
    });
  }
  std::sort(speeds.begin(), speeds.end());
  speeds.erase(std::unique(speeds.begin(), speeds.end()), speeds.end());
  return speeds;
}

using SparseMat = Eigen::SparseMatrix<double>;

// Largest n · m · min(n, m) (n active speeds, m rows) for which the kept rows are chosen by a
// dense column-pivoted QR of Gᵀ, about that many flops: a few hundred speeds.
constexpr double kDenseBudget = 1e8;
// Largest m² · n · (samples) for which RowRank::robust_rows chooses the kept rows over all samples.
constexpr double kRobustBudget = 5e7;

// Φ and G of a set of rows, and a sparse QR of Gᵀ that decides the rank of G and a set of
// independent rows, solves Newton steps and projects onto the null space of G (the structural
// redundancy check, Constraints::Constraints). Gᵀ has the active speeds as rows (those some row
// acts on: every other speed is a null direction of G) and one column per constraint row, with an
// entry for every speed the row acts on, zero or not, so that its pattern, and the fill-reducing
// column ordering computed from it, are those of every configuration.
//
// The QR (Eigen::SparseQR, COLAMD ordering) is left-looking: it takes the columns of Gᵀ (rows of
// G) one by one in that order and keeps a column when its part outside the span of the columns
// kept before it has norm at least the pivot threshold, 1e-10 · max(1, max|G|) (absolute near
// G ≡ 0, as in dependent_speeds of assembly.cpp); the others are dependent on the kept ones. So
// the kept rows K are independent, every other row lies in their span to that threshold, and with
// Gᵀ P = Q R, G_K = R₁₁ᵀ Q₁ᵀ (Q₁: the first |K| columns of Q): the minimum-norm solution of
// G_K du = b is du = Q₁ R₁₁⁻ᵀ b, and I − Q₁ Q₁ᵀ projects onto the null space of G.
class RowRank {
 public:
  // `self`: the Constraints being built, for ConstraintData's constructor (which reads nothing from
  // it); `rows` must outlive this object.
  RowRank(const Model& model, const Constraints& self, const std::vector<ConstraintRow>& rows)
      : model_(model), rows_(rows), kin_(model), data_(model, self), scratch_(MatX::Zero(1, model.nv)) {
    std::vector<int> active_of(model.nv, -1);
    for (const ConstraintRow& row : rows) {
      support_.push_back(row_speeds(model, row));
      for (int speed : support_.back()) active_of[speed] = 0;
    }
    for (int k = 0; k < model.nv; ++k)
      if (active_of[k] == 0) {
        active_of[k] = static_cast<int>(active_.size());
        active_.push_back(k);
      }
    std::vector<Eigen::Triplet<double>> entries;
    for (std::size_t r = 0; r < rows.size(); ++r)
      for (int speed : support_[r]) entries.emplace_back(active_of[speed], static_cast<int>(r), 1.0);
    Gt_.resize(static_cast<Eigen::Index>(active_.size()), static_cast<Eigen::Index>(rows.size()));
    Gt_.setFromTriplets(entries.begin(), entries.end());  // compressed, ascending rows per column
    if (!active_.empty()) qr_.analyzePattern(Gt_);
    const double n = static_cast<double>(active_.size()), m = static_cast<double>(rows.size());
    dense_ = n * m * std::min(n, m) <= kDenseBudget;
  }

  // Φ of every row at q; returns the tolerance of "closed" there, 1e-12 (the default assembly
  // tolerance) times max(1, largest coordinate of a loop frame's origin), the scale of the
  // round-off in the `along` rows.
  double position(const VecX& q, VecX& phi) {
    update_positions(model_, kin_, q);
    update_frames(model_, kin_, data_);
    for (std::size_t r = 0; r < rows_.size(); ++r) phi(r) = position_row(model_, rows_[r], q, data_);
    double length = 1.0;
    for (std::size_t k = 0; k < data_.fp.size(); ++k)
      length = std::max({length, inf_norm(data_.fp[k].x), inf_norm(data_.fc[k].x)});
    return 1e-12 * length;
  }

  // Factors Gᵀ at q.
  void factor(const VecX& q) {
    rank_ = 0;
    if (active_.empty()) return;  // no row acts on any speed: G ≡ 0
    update_positions(model_, kin_, q);
    update_frames(model_, kin_, data_);
    const auto global = [&](int body) { return model_.v_index[body]; };
    double* value = Gt_.valuePtr();  // column r holds support_[r] in order
    for (std::size_t r = 0; r < rows_.size(); ++r) {
      jacobian_row(model_, rows_[r], kin_, data_, scratch_, 0, global);
      for (int speed : support_[r]) {
        *value++ = scratch_(0, speed);
        scratch_(0, speed) = 0.0;
      }
    }
    threshold_ = 1e-10 * std::max(1.0, Gt_.coeffs().cwiseAbs().maxCoeff());
    qr_.setPivotThreshold(threshold_);
    qr_.factorize(Gt_);
    rank_ = static_cast<int>(qr_.rank());
  }

  int rank() const { return rank_; }

  // Smallest |R₁₁(j, j)|, the distance of a kept row from the span of those kept before it.
  double smallest_pivot() const {
    double smallest = std::numeric_limits<double>::infinity();
    for (int j = 0; j < rank_; ++j)
      for (SparseMat::InnerIterator it(qr_.matrixR(), j); it; ++it)
        if (it.row() == j) smallest = std::min(smallest, std::abs(it.value()));
    return smallest;
  }

  // Independent rows of G at the last factorized configuration, as many as its rank, ascending.
  // When a dense factorization of Gᵀ is affordable (kDenseBudget), they are chosen by
  // column-pivoted QR, the row of largest norm outside the span of those chosen first, with the
  // same pivot threshold (its rank then counts, when it differs); else the sparse QR's kept rows.
  std::vector<int> independent_rows() const {
    if (!dense_ || active_.empty()) {
      const int* p = qr_.colsPermutation().indices().data();
      std::vector<int> kept(p, p + rank_);
      std::sort(kept.begin(), kept.end());
      return kept;
    }
    const Eigen::ColPivHouseholderQR<MatX> qr{MatX(Gt_)};
    int rank = 0;
    while (rank < std::min(qr.rows(), qr.cols()) && std::abs(qr.matrixQR()(rank, rank)) >= threshold_) ++rank;
    const int* p = qr.colsPermutation().indices().data();
    std::vector<int> kept(p, p + rank);
    std::sort(kept.begin(), kept.end());
    return kept;
  }

  // Whether robust_rows over `samples` configurations fits kRobustBudget (m² · n · samples).
  bool robust_affordable(std::size_t samples) const {
    const double m = static_cast<double>(rows_.size());
    return m * m * model_.nv * static_cast<double>(samples) <= kRobustBudget;
  }

  // Rows that stay independent over the closed configurations `samples` (all of rank `count`),
  // `count` of them, ascending, or empty when the dense choice is not affordable (kRobustBudget):
  // greedily the row whose smallest distance, over the samples, from the span of the rows chosen
  // before it (at the same sample, relative to max(1, max|G|) there) is largest. A choice made at
  // one configuration can lose rank elsewhere on the manifold although all rows keep theirs:
  // Bricard's loop (models/iftomm_a04_bricard.yaml) has 5 rows of rank 4 everywhere, and the 4
  // rows a pivoted QR keeps at its initial configuration are singular at mid-swing, where another
  // 4 are not.
  std::vector<int> robust_rows(const std::vector<VecX>& samples, int count) {
    if (count == 0 || !robust_affordable(samples.size())) return {};
    std::vector<MatX> G(samples.size(), MatX(rows_.size(), model_.nv)), basis(samples.size());
    std::vector<double> scale(samples.size());
    for (std::size_t k = 0; k < samples.size(); ++k) {
      update_positions(model_, kin_, samples[k]);
      update_frames(model_, kin_, data_);
      jacobian_rows(model_, rows_, kin_, data_, G[k]);
      scale[k] = std::max(1.0, G[k].cwiseAbs().maxCoeff());
      basis[k].resize(model_.nv, 0);
    }
    // Part of row r at sample k outside the span of the rows chosen so far there.
    auto outside = [&](std::size_t k, int r) -> VecX {
      VecX g = G[k].row(r).transpose();
      if (basis[k].cols() > 0) g -= basis[k] * (basis[k].transpose() * g);
      return g;
    };
    std::vector<char> taken(rows_.size(), 0);
    std::vector<int> kept;
    for (int pick = 0; pick < count; ++pick) {
      int best = -1;
      double best_score = -1.0;
      for (int r = 0; r < static_cast<int>(rows_.size()); ++r) {
        if (taken[r]) continue;
        double score = std::numeric_limits<double>::infinity();
        for (std::size_t k = 0; k < samples.size(); ++k) score = std::min(score, outside(k, r).norm() / scale[k]);
        if (score > best_score) {
          best_score = score;
          best = r;
        }
      }
      taken[best] = 1;
      kept.push_back(best);
      for (std::size_t k = 0; k < samples.size(); ++k) {
        const VecX g = outside(k, best);
        const double size = g.norm();
        if (size <= 1e-14 * scale[k]) continue;  // dependent here: a singular sample adds nothing
        basis[k].conservativeResize(Eigen::NoChange, basis[k].cols() + 1);
        basis[k].col(basis[k].cols() - 1) = g / size;
      }
    }
    std::sort(kept.begin(), kept.end());
    return kept;
  }

  // (nv) The part of z (nv) in the null space of the last factorized G: (I − Q₁ Q₁ᵀ) z on the
  // active speeds, zero on the others.
  VecX null_space_part(const VecX& z) const {
    if (active_.empty()) return VecX::Zero(model_.nv);
    VecX compact(static_cast<Eigen::Index>(active_.size()));
    for (std::size_t k = 0; k < active_.size(); ++k) compact(static_cast<Eigen::Index>(k)) = z(active_[k]);
    VecX y = qr_.matrixQ().transpose() * compact;
    y.head(rank_).setZero();
    return on_active(qr_.matrixQ() * y);
  }

  // (nv) du of least norm with G_K du = −Φ_K: R₁₁ᵀ z = −Φ_K by forward substitution over the
  // columns of R₁₁ (whose entries SparseQR stores unordered), du = Q₁ z.
  VecX newton_step(const VecX& phi) const {
    VecX du = VecX::Zero(model_.nv);
    if (rank_ == 0) return du;
    const auto& kept = qr_.colsPermutation().indices();
    VecX z = VecX::Zero(static_cast<Eigen::Index>(active_.size()));
    for (int j = 0; j < rank_; ++j) {
      double sum = -phi(kept(j)), diagonal = 0.0;
      for (SparseMat::InnerIterator it(qr_.matrixR(), j); it; ++it) {
        if (it.row() < j) sum -= it.value() * z(it.row());
        else if (it.row() == j) diagonal = it.value();
      }
      z(j) = sum / diagonal;
    }
    return on_active(qr_.matrixQ() * z);
  }

  // (nv) A random direction in the null space of the last factorized G, zero on the speeds no
  // row acts on: z uniform in [−1, 1] on the active speeds, (I − Q₁ Q₁ᵀ) z.
  VecX null_space_direction(std::mt19937_64& rng) const {
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    VecX z(static_cast<Eigen::Index>(active_.size()));
    for (Eigen::Index k = 0; k < z.size(); ++k) z(k) = dist(rng);
    if (active_.empty()) return VecX::Zero(model_.nv);
    VecX y = qr_.matrixQ().transpose() * z;
    y.head(rank_).setZero();
    return on_active(qr_.matrixQ() * y);
  }

  // Newton from q onto Φ = 0 (every row), du from newton_step; true when ‖Φ‖∞ is within the
  // tolerance of position(). A factorization is reused at later iterates while its full step at
  // least halves ‖Φ‖₂ (chord steps: most iterations then cost one Φ); at a fresh one the step is
  // halved until ‖Φ‖₂ decreases, and none that does ends the search (false).
  bool close(VecX& q) {
    VecX phi(static_cast<Eigen::Index>(rows_.size())), next(phi.size());
    double tolerance = position(q, phi);
    bool factored = false, fresh = false;  // a factorization exists; it is the one at q
    for (int iteration = 0; iteration < 100; ++iteration) {
      if (inf_norm(phi) <= tolerance) return true;
      if (!factored) {
        factor(q);
        factored = fresh = true;
      }
      const VecX du = newton_step(phi);
      const double target = (fresh ? 1.0 : 0.5) * phi.norm();
      bool accepted = false;
      for (double alpha = 1.0; alpha > 1e-9 && !accepted; alpha *= 0.5) {
        VecX trial = q;
        integrate_q(model_, trial, alpha * du);
        const double trial_tolerance = position(trial, next);
        if (next.norm() < target) {
          q = trial;
          phi.swap(next);
          tolerance = trial_tolerance;
          accepted = true;
        }
        if (!fresh) break;  // chord step: full step only
      }
      if (!accepted && fresh) return false;
      if (!accepted) factored = false;  // factor again at q
      fresh = false;
    }
    return inf_norm(phi) <= tolerance;
  }

 private:
  VecX on_active(const VecX& compact) const {
    VecX out = VecX::Zero(model_.nv);
    for (std::size_t k = 0; k < active_.size(); ++k) out(active_[k]) = compact(static_cast<Eigen::Index>(k));
    return out;
  }

  const Model& model_;
  const std::vector<ConstraintRow>& rows_;
  KinematicsData kin_;
  ConstraintData data_;
  MatX scratch_;                           // (1 x nv) one row of G, zero between rows
  std::vector<std::vector<int>> support_;  // speeds of each row (row_speeds)
  std::vector<int> active_;                // speeds some row acts on, ascending
  SparseMat Gt_;                           // Gᵀ on the active speeds
  Eigen::SparseQR<SparseMat, Eigen::COLAMDOrdering<int>> qr_;
  int rank_ = 0;
  double threshold_ = 0.0;  // pivot threshold of the last factorization
  bool dense_ = false;      // independent_rows by a dense column-pivoted QR
};

// Configurations at which Constraints decides the ranks (see there): a closed one, the model's
// initial configuration closed by RowRank::close (else a random one closed), then up to
// `extra` others reached from it by a step of 0.5 (∞-norm of the speed increment; 0.125,
// 0.03 if that one cannot be closed) along a random direction of the null space of G and
// closed again. When no start closes, `extra` + 1 random configurations.
std::vector<VecX> rank_samples(const Model& model, RowRank& probe, std::mt19937_64& rng, int extra) {
  std::vector<VecX> samples;
  VecX q = model.q0;
  model.normalize(q);
  bool closed = probe.close(q);
  for (int start = 0; start < 3 && !closed; ++start) {
    q = random_configuration(model, rng);
    closed = probe.close(q);
  }
  if (!closed) {
    for (int s = 0; s <= extra; ++s) samples.push_back(random_configuration(model, rng));
    return samples;
  }
  samples.push_back(q);
  probe.factor(q);
  std::vector<VecX> directions;
  for (int s = 0; s < extra; ++s) directions.push_back(probe.null_space_direction(rng));
  for (const VecX& direction : directions) {
    const double size = inf_norm(direction);
    if (size <= 1e-8) break;  // no speed moves with the loops closed (a structure)
    for (double step = 0.5; step > 0.01; step *= 0.25) {
      VecX moved = q;
      integrate_q(model, moved, (step / size) * direction);
      if (probe.close(moved)) {
        samples.push_back(moved);
        break;
      }
    }
  }
  return samples;
}

// Closed configurations along the manifold from the closed q: up to `steps` steps of 0.4
// (∞-norm of the speed increment) that follow `direction` (nv), projected at every step on the
// null space of G there (a continuation of the motion), each closed again. A 1-dof loop is
// followed over several radians of its motion, far beyond rank_samples' single steps.
void walk_samples(const Model& model, RowRank& probe, VecX q, VecX direction, int steps, std::vector<VecX>& samples) {
  for (int s = 0; s < steps; ++s) {
    probe.factor(q);
    direction = probe.null_space_part(direction);
    const double size = inf_norm(direction);
    if (size <= 1e-8) return;
    VecX moved = q;
    integrate_q(model, moved, (0.4 / size) * direction);
    if (!probe.close(moved)) return;
    samples.push_back(moved);
    q = moved;
  }
}

}  // namespace

std::vector<ConstraintRow> Constraints::all_rows(const Model& model) {
  std::vector<ConstraintRow> rows;
  for (std::size_t k = 0; k < model.loop_joints.size(); ++k) joint_rows(model.loop_joints[k], static_cast<int>(k), rows);
  for (std::size_t k = 0; k < model.couplings.size(); ++k)
    rows.push_back({Kind::coupling, static_cast<int>(k), Vec3::Zero(), Vec3::Zero(), model.couplings[k].name});
  return rows;
}

Constraints Constraints::unreduced(const Model& model) {
  Constraints c;
  c.rows_ = all_rows(model);
  return c;
}

// Structural redundancy (constraints.hpp): the rank of G, by RowRank's sparse QR, at a few closed
// configurations (rank_samples); at the sample of highest rank (of largest smallest pivot among
// equal ranks) RowRank::independent_rows picks the kept rows, as many as that rank.
//
// Why closed configurations: a dependency among the rows may hold only where the loops are closed,
// because it comes from the geometry the closure imposes (the spatial ladder's cells close only
// with parallel axes, which makes one row per cell dependent on the manifold, not off it). At an
// open configuration such rows look independent, so a check there keeps too many rows and, worse,
// picks among them a set that loses rank on the manifold (the ladder from 5 cells on). Rows that
// are independent at one closed configuration are independent near it on the manifold, so the
// highest rank over a few closed samples is the generic rank there, and a singular start (the
// collinear parallelogram four-bar) does not decide it alone: the samples reached along the null
// space of G leave it. Loops that cannot be closed have no manifold: random open configurations
// are all there is to sample then.
//
// Cost: G is sparse (a loop's rows act on its tree path only) and so is its QR for chains of loops
// (each loop's rows are eliminated against those already kept on the speeds they share), so
// building the constraints of the 1024-cell spatial ladder (4098 speeds, 5120 rows) takes a
// fraction of a second, where one dense QR of G takes far longer.
Constraints::Constraints(const Model& model) {
  const std::vector<ConstraintRow> all = all_rows(model);
  if (all.empty()) return;
  RowRank probe(model, *this, all);
  std::mt19937_64 rng(20261123);
  int best_rank = -1;
  double best_pivot = 0.0;
  VecX best_q;
  std::vector<VecX> samples = rank_samples(model, probe, rng, 3);
  for (const VecX& q : samples) {
    probe.factor(q);
    const double pivot = probe.rank() > 0 ? probe.smallest_pivot() : 0.0;
    if (probe.rank() < best_rank || (probe.rank() == best_rank && pivot <= best_pivot)) continue;
    best_rank = probe.rank();
    best_pivot = pivot;
    best_q = q;
  }
  // Walks both ways along the manifold from the first (closed) sample, when the robust choice is
  // affordable (the walk serves it alone, and costs seconds on the 1024-cell spatial ladder); the
  // kept rows must be independent at every sample of the generic rank.
  std::vector<VecX> generic;
  VecX start = samples.front();
  if (probe.robust_affordable(samples.size() + 32) && probe.close(start)) {
    probe.factor(start);
    const VecX direction = probe.null_space_direction(rng);
    for (double sense : {1.0, -1.0}) walk_samples(model, probe, start, sense * direction, 16, samples);
  }
  for (const VecX& q : samples) {
    probe.factor(q);
    if (probe.rank() == best_rank) generic.push_back(q);
  }
  std::vector<int> best = probe.robust_rows(generic, best_rank);
  if (best.empty()) {
    probe.factor(best_q);
    best = probe.independent_rows();
  }
  for (int r = 0, next = 0; r < static_cast<int>(all.size()); ++r) {
    const bool keep = next < static_cast<int>(best.size()) && best[next] == r;
    (keep ? rows_ : dropped_).push_back(all[r]);
    next += keep;
  }
}

ConstraintData::ConstraintData(const Model& model, const Constraints&)
    : fp(model.loop_joints.size()), fc(model.loop_joints.size()), a0(model.nbodies, Vec6::Zero()) {}

void constraint_position(const Model& model, const Constraints& cons, const KinematicsData& kin, ConstraintData& d,
                         Eigen::Ref<VecX> phi) {
  update_frames(model, kin, d);
  for (int r = 0; r < cons.rows(); ++r) phi(r) = position_row(model, cons.kept()[r], kin.q, d);
}

void constraint_jacobian(const Model& model, const Constraints& cons, const KinematicsData& kin, ConstraintData& d,
                         Eigen::Ref<MatX> G) {
  update_frames(model, kin, d);
  jacobian_rows(model, cons.kept(), kin, d, G);
}

void constraint_bias(const Model& model, const Constraints& cons, const KinematicsData& kin, ConstraintData& d,
                     Eigen::Ref<VecX> gamma) {
  update_frames(model, kin, d);
  // Body accelerations at u̇ = 0: a0_i = X⁻¹ a0_parent + c_i.
  for (int i = 0; i < model.nbodies; ++i) {
    const int p = model.parent[i];
    d.a0[i] = kin.c[i];
    if (p >= 0) d.a0[i] += kin.X_parent[i].inv_act_motion(d.a0[p]);
  }
  for (int k = 0; k < static_cast<int>(model.loop_joints.size()); ++k) update_loop_motion(model, kin, d, k);
  for (int r = 0; r < cons.rows(); ++r) gamma(r) = bias_row(cons.kept()[r], d);
}

ConstraintBlock ConstraintBlock::whole(const Model& model, const Constraints& cons) {
  ConstraintBlock b;
  for (int r = 0; r < cons.rows(); ++r) b.rows.push_back(r);
  for (int k = 0; k < static_cast<int>(model.loop_joints.size()); ++k) b.loops.push_back(k);
  for (int i = 0; i < model.nbodies; ++i) {
    b.bodies.push_back(i);
    b.first_column.push_back(model.v_index[i]);
  }
  b.columns = model.nv;
  return b;
}

ConstraintBlock ConstraintBlock::of(const Model& model, const Constraints& cons, std::vector<int> bodies,
                                    const std::vector<int>& loop_joints, const std::vector<int>& couplings) {
  ConstraintBlock b;
  b.bodies = std::move(bodies);
  for (int body : b.bodies) {
    b.first_column.push_back(b.columns);
    b.columns += model.nv_joint[body];
  }
  for (int r = 0; r < cons.rows(); ++r) {
    const ConstraintRow& row = cons.kept()[r];
    const std::vector<int>& owners = row.kind == Kind::coupling ? couplings : loop_joints;
    if (std::find(owners.begin(), owners.end(), row.loop) != owners.end()) b.rows.push_back(r);
  }
  b.loops = loop_joints;
  std::sort(b.loops.begin(), b.loops.end());
  return b;
}

int ConstraintBlock::column_of(int body) const {
  return first_column[std::lower_bound(bodies.begin(), bodies.end(), body) - bodies.begin()];
}

std::vector<int> ConstraintBlock::speeds(const Model& model) const {
  std::vector<int> out;
  for (int body : bodies)
    for (int k = 0; k < model.nv_joint[body]; ++k) out.push_back(model.v_index[body] + k);
  return out;
}

void block_position_jacobian(const Model& model, const Constraints& cons, const ConstraintBlock& block,
                             const KinematicsData& kin, ConstraintData& d, Eigen::Ref<VecX> phi,
                             Eigen::Ref<MatX> G) {
  for (int k : block.loops) update_loop_frames(model, kin, d, k);
  G.setZero();
  const auto local = [&](int body) { return block.column_of(body); };
  for (std::size_t r = 0; r < block.rows.size(); ++r) {
    const ConstraintRow& row = cons.kept()[block.rows[r]];
    phi(r) = position_row(model, row, kin.q, d);
    jacobian_row(model, row, kin, d, G, static_cast<int>(r), local);
  }
}

void block_bias(const Model& model, const Constraints& cons, const ConstraintBlock& block, const KinematicsData& kin,
                ConstraintData& d, Eigen::Ref<VecX> gamma) {
  for (int k : block.loops) update_loop_frames(model, kin, d, k);
  // a0 = X⁻¹ a0_parent + c inside the block, zero on the bodies it hangs from.
  for (int i : block.bodies) {
    const int p = model.parent[i];
    if (p >= 0 && !std::binary_search(block.bodies.begin(), block.bodies.end(), p)) d.a0[p].setZero();
  }
  for (int i : block.bodies) {
    const int p = model.parent[i];
    d.a0[i] = kin.c[i];
    if (p >= 0) d.a0[i] += kin.X_parent[i].inv_act_motion(d.a0[p]);
  }
  for (int k : block.loops) update_loop_motion(model, kin, d, k);
  for (std::size_t r = 0; r < block.rows.size(); ++r) gamma(r) = bias_row(cons.kept()[block.rows[r]], d);
}

RankInfo constraint_rank(const Model& model, const Constraints& cons, const VecX& q) {
  RankInfo info;
  info.dof = model.nv;
  if (cons.rows() == 0) return info;
  KinematicsData kin(model);
  update_positions(model, kin, q);
  ConstraintData d(model, cons);
  MatX G(cons.rows(), model.nv);
  constraint_jacobian(model, cons, kin, d, G);
  const NumericalRank r = numerical_rank(G);
  info.rank = r.rank;
  info.tolerance = r.tolerance;
  info.dof = model.nv - info.rank;
  return info;
}

std::string row_owner(const Model& model, const ConstraintRow& row) {
  std::string s;
  if (row.kind == ConstraintRow::Kind::coupling)
    s.append("constraint '").append(model.couplings[row.loop].name).append("'");
  else
    s.append("loop joint '").append(model.loop_joints[row.loop].name).append("' (row ").append(row.label).append(")");
  return s;
}

std::string dominant_loops(const Model& model, const Constraints& cons, const VecX& weight) {
  std::vector<bool> named_joint(model.loop_joints.size(), false), named_coupling(model.couplings.size(), false);
  std::string out;
  int count = 0;
  constexpr int kListed = 4;  // loops named; the others counted
  for (int r = 0; r < cons.rows(); ++r) {
    const ConstraintRow& row = cons.kept()[r];
    const bool coupling = row.kind == ConstraintRow::Kind::coupling;
    auto named = coupling ? named_coupling.begin() + row.loop : named_joint.begin() + row.loop;
    if (weight(r) < 0.1 * weight.maxCoeff() || *named) continue;
    *named = true;
    const std::string& name = coupling ? model.couplings[row.loop].name : model.loop_joints[row.loop].name;
    if (++count <= kListed) out += (out.empty() ? "'" : ", '") + name + "'";
  }
  if (count > kListed) out += " and " + std::to_string(count - kListed) + " more";
  return out;
}

double velocity_scale(const MatX& G, const Eigen::Ref<const VecX>& u) {
  const double g = G.size() ? G.cwiseAbs().maxCoeff() : 0.0;
  const double v = u.size() ? u.cwiseAbs().maxCoeff() : 0.0;
  return std::max(1.0, g * v);
}

}  // namespace loopdyn
