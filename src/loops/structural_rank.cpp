// The structural rank check of the loop-closure rows (structural_rank.hpp).
#include "loopdyn/loops/structural_rank.hpp"

#include <Eigen/QR>
#include <algorithm>
#include <limits>
#include <random>

#include "loops/constraint_rows.hpp"
#include "loops/sparse_qr.hpp"
#include "loopdyn/core/linalg.hpp"

namespace loopdyn {

namespace {

using detail::jacobian_row;
using detail::jacobian_rows;
using detail::position_row;
using detail::row_speeds;
using detail::update_frames;

// Random configuration: angles and offsets in [-π, π], unit quaternions (starts for closing the
// loops, and the samples of the redundancy check when the loops cannot be closed).
VecX random_configuration(const Model& model, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> dist(-M_PI, M_PI);
  VecX q(model.nq);
  for (int k = 0; k < model.nq; ++k) q(k) = dist(rng);
  model.normalize(q);
  return q;
}

using detail::SparseMat;
using detail::Spqr;

// Largest n · m · min(n, m) (n active speeds, m rows) for which the kept rows are chosen by a
// dense column-pivoted QR of Gᵀ, about that many flops: a few hundred speeds.
constexpr double kDenseBudget = 1e8;
// Largest m² · n · (samples) for which RowRank::robust_rows chooses the kept rows over all samples.
constexpr double kRobustBudget = 5e7;

// Φ and G of a set of rows, and a sparse QR of Gᵀ that decides the rank of G and a set of
// independent rows, solves Newton steps and projects onto the null space of G (the structural
// redundancy check, structural_reduction). Gᵀ has the active speeds as rows (those some row
// acts on: every other speed is a null direction of G) and one column per constraint row, with an
// entry for every speed the row acts on, zero or not; the QR takes the columns longer than its
// pivot threshold (factor), and the fill-reducing ordering is computed from their pattern.
//
// The QR (SuiteSparseQR through Eigen::SPQR: multifrontal, in its fill-reducing column order, with
// Heath's rank detection; Eigen's SparseQR took a quarter of a second per factorization of paper
// 003's 512-square chain) takes the columns of Gᵀ (rows of G) in that order and keeps a column when
// its part outside the span of the columns kept before it has norm above the pivot threshold, 1e-10 · max(1, max|G|) (absolute near
// G ≡ 0, as in dependent_speeds of assembly.cpp); the others are dependent on the kept ones. So
// the kept rows K are independent, every other row lies in their span to that threshold, and with
// Gᵀ P = Q R, G_K = R₁₁ᵀ Q₁ᵀ (Q₁: the first |K| columns of Q): the minimum-norm solution of
// G_K du = b is du = Q₁ R₁₁⁻ᵀ b, and I − Q₁ Q₁ᵀ projects onto the null space of G.
// (detail::Spqr, sparse_qr.hpp, exposes the column order.)
class RowRank {
  using RFactor = Spqr::RFactor;

 public:
  // `rows` must outlive this object.
  RowRank(const Model& model, const std::vector<ConstraintRow>& rows)
      : model_(model), rows_(rows), kin_(model), data_(model), scratch_(MatX::Zero(1, model.nv)) {
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
    const double n = static_cast<double>(active_.size()), m = static_cast<double>(rows.size());
    dense_ = n * m * std::min(n, m) <= kDenseBudget;
  }

  // Φ of every row at q; returns the tolerance of "closed" there, 1e-12 (the default assembly
  // tolerance) times max(1, largest coordinate of a loop frame's origin), the scale of the
  // round-off in the `along` rows.
  double position(const VecX& q, VecX& phi) {
    update_positions(model_, kin_, q);
    update_frames(model_, kin_, data_);
    // Drives at t = 0: only G (constant on their rows) enters the rank.
    for (std::size_t r = 0; r < rows_.size(); ++r) phi(r) = position_row(model_, rows_[r], q, 0.0, data_);
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
    double* value = Gt_.valuePtr();  // column r holds support_[r] in order
    for (std::size_t r = 0; r < rows_.size(); ++r) {
      jacobian_row(model_, rows_[r], kin_, data_, scratch_, 0);
      for (int speed : support_[r]) {
        *value++ = scratch_(0, speed);
        scratch_(0, speed) = 0.0;
      }
    }
    threshold_ = detail::pivot_threshold(Gt_.coeffs().cwiseAbs().maxCoeff());
    // Rows of G shorter than the pivot threshold are dependent whatever the others (the part of a
    // column outside any span is no longer than the column), so they stay out of the QR: there
    // every zero pivot recomputes the column elimination tree, O(entries) each, which made the
    // out-of-plane rows of planar loops (three of a revolute joint's five, zero everywhere) cost
    // quadratic time in the loops. The pattern, and its ordering, are then those of the rows kept.
    columns_.clear();
    for (Eigen::Index c = 0; c < Gt_.cols(); ++c)
      if (Gt_.col(c).norm() >= threshold_) columns_.push_back(static_cast<int>(c));
    if (columns_.empty()) return;
    long entries = 0;
    for (int c : columns_) entries += Gt_.outerIndexPtr()[c + 1] - Gt_.outerIndexPtr()[c];
    Gq_.resize(Gt_.rows(), static_cast<Eigen::Index>(columns_.size()));
    Gq_.reserve(entries);
    for (std::size_t k = 0; k < columns_.size(); ++k) {
      Gq_.startVec(static_cast<Eigen::Index>(k));
      for (SparseMat::InnerIterator it(Gt_, columns_[k]); it; ++it) Gq_.insertBack(it.row(), static_cast<Eigen::Index>(k)) = it.value();
    }
    Gq_.finalize();
    qr_.setPivotThreshold(threshold_);
    qr_.compute(Gq_);
    rank_ = static_cast<int>(qr_.rank());
  }

  // Marks the rows of G that are not zero at the last factorized configuration (those in the QR).
  void mark_nonzero(std::vector<char>& nonzero) const {
    for (int c : columns_) nonzero[c] = 1;
  }

  // Row of G of the QR's j-th column (after its column permutation).
  int qr_row(int j) const { return columns_[qr_.column(j)]; }

  int rank() const { return rank_; }

  // Smallest |R₁₁(j, j)|, the distance of a kept row from the span of those kept before it.
  double smallest_pivot() const {
    double smallest = std::numeric_limits<double>::infinity();
    const RFactor R = qr_.matrixR();  // a copy (Eigen::SPQR returns it by value)
    for (int j = 0; j < rank_; ++j)
      for (RFactor::InnerIterator it(R, j); it; ++it)
        if (it.row() == j) smallest = std::min(smallest, std::abs(it.value()));
    return smallest;
  }

  // Independent rows of G at the last factorized configuration, as many as its rank, ascending.
  // When a dense factorization of Gᵀ is affordable (kDenseBudget), they are chosen by
  // column-pivoted QR, the row of largest norm outside the span of those chosen first, with the
  // same pivot threshold (its rank then counts, when it differs); else the sparse QR's kept rows.
  std::vector<int> independent_rows() const {
    if (!dense_ || active_.empty()) {
      std::vector<int> kept;
      for (int j = 0; j < rank_; ++j) kept.push_back(qr_row(j));
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
    // outside[k]: the rows of G at sample k less their parts in the span of the rows chosen so far
    // there (modified Gram–Schmidt: each chosen row's direction is taken out of every row once,
    // O(m · nv) per sample and choice, where projecting each row on the basis anew cost O(m · nv ·
    // chosen): Model::build of the 40-loop N-four-bar spent 0.05 s here).
    std::vector<MatX> outside(samples.size(), MatX(rows_.size(), model_.nv));
    std::vector<double> scale(samples.size());
    VecX direction(model_.nv), along(static_cast<Eigen::Index>(rows_.size()));
    for (std::size_t k = 0; k < samples.size(); ++k) {
      update_positions(model_, kin_, samples[k]);
      update_frames(model_, kin_, data_);
      jacobian_rows(model_, rows_, kin_, data_, outside[k]);
      scale[k] = std::max(1.0, outside[k].cwiseAbs().maxCoeff());
    }
    std::vector<char> taken(rows_.size(), 0);
    std::vector<int> kept;
    for (int pick = 0; pick < count; ++pick) {
      int best = -1;
      double best_score = -1.0;
      for (int r = 0; r < static_cast<int>(rows_.size()); ++r) {
        if (taken[r]) continue;
        double score = std::numeric_limits<double>::infinity();
        for (std::size_t k = 0; k < samples.size(); ++k) score = std::min(score, outside[k].row(r).norm() / scale[k]);
        if (score > best_score) {
          best_score = score;
          best = r;
        }
      }
      taken[best] = 1;
      kept.push_back(best);
      for (std::size_t k = 0; k < samples.size(); ++k) {
        const double size = outside[k].row(best).norm();
        if (size <= 1e-14 * scale[k]) continue;  // dependent here: a singular sample adds nothing
        direction = outside[k].row(best).transpose() / size;
        along.noalias() = outside[k] * direction;
        outside[k].noalias() -= along * direction.transpose();
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
    if (rank_ == 0) return on_active(compact);  // G ≈ 0: no QR was made
    VecX y = qr_.matrixQ().transpose() * compact;
    y.head(rank_).setZero();
    return on_active(qr_.matrixQ() * y);
  }

  // (nv) du of least norm with G_K du = −Φ_K: R₁₁ᵀ z = −Φ_K by forward substitution over the
  // columns of R₁₁ (whose entries need not be stored in order), du = Q₁ z.
  VecX newton_step(const VecX& phi) const {
    VecX du = VecX::Zero(model_.nv);
    if (rank_ == 0) return du;
    VecX z = VecX::Zero(static_cast<Eigen::Index>(active_.size()));
    const RFactor R = qr_.matrixR();  // a copy (Eigen::SPQR returns it by value)
    for (int j = 0; j < rank_; ++j) {
      double sum = -phi(qr_row(j)), diagonal = 0.0;
      for (RFactor::InnerIterator it(R, j); it; ++it) {
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
    if (rank_ == 0) return on_active(z);  // G ≈ 0: no QR was made
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
  std::vector<int> columns_;               // its columns (rows of G) in the QR, ascending
  SparseMat Gq_;                           // those columns of Gt_, factored by qr_
  Spqr qr_;
  int rank_ = 0;
  double threshold_ = 0.0;  // pivot threshold of the last factorization
  bool dense_ = false;      // independent_rows by a dense column-pivoted QR
};

// Configurations at which structural_reduction decides the ranks (see there): a closed one, the model's
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

// the rank of G, by RowRank's sparse QR, at a few closed
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
// the structural reduction of the 1024-cell spatial ladder (4098 speeds, 5120 rows) takes a
// fraction of a second, where one dense QR of G takes far longer.
Constraints structural_reduction(const Model& model, const std::vector<ConstraintRow>& all) {
  if (all.empty()) return {};
  RowRank probe(model, all);
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
  std::vector<char> nonzero(all.size(), 0);
  for (const VecX& q : samples) {
    probe.factor(q);
    probe.mark_nonzero(nonzero);
    if (probe.rank() == best_rank) generic.push_back(q);
  }
  std::vector<int> best = probe.robust_rows(generic, best_rank);
  if (best.empty()) {
    probe.factor(best_q);
    best = probe.independent_rows();
  }
  std::vector<ConstraintRow> kept, dropped, alternates;
  for (int r = 0, next = 0; r < static_cast<int>(all.size()); ++r) {
    const bool keep = next < static_cast<int>(best.size()) && best[next] == r;
    (keep ? kept : dropped).push_back(all[r]);
    if (!keep && nonzero[r] && all[r].kind != ConstraintRow::Kind::coupling) alternates.push_back(all[r]);
    next += keep;
  }
  return Constraints(std::move(kept), std::move(dropped), std::move(alternates));
}

}  // namespace loopdyn
