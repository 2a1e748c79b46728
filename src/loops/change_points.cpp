// Change points: survey before the run, monitor during it (change_points.hpp has the method).
#include "loopdyn/loops/change_points.hpp"

#include <Eigen/Cholesky>
#include <Eigen/QR>
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <numbers>
#include <optional>
#include <sstream>

#include "loopdyn/loops/assembly.hpp"
#include "loopdyn/core/forces.hpp"
#include "loopdyn/core/kinematics.hpp"
#include "loopdyn/loops/projection.hpp"
#include "loopdyn/loops/row_gram.hpp"

namespace loopdyn {

namespace {

// σ ratio below which a singular value of G counts as zero when the degrees of freedom are
// counted: eigenvalues of GᵀG carry an absolute error of ~ε λ_max, i.e. σ ratios below ~1e-8 are
// noise; 1e-6 keeps clear of it and of configurations merely near a change point.
constexpr double kNullRatio = 1e-6;
// The guard's sparse bounds (row_gram.hpp): used when G Gᵀ has at most this fraction of non-zeros
// (else a dense factorization costs as much as the eigenvalue solve); each check asks whether
// λ_min(G Gᵀ) is still above this fraction of its last estimate (σ_min above 0.71 of it), and
// refines the estimates by this many inverse and power iterations from their last vectors.
constexpr double kSparseFill = 0.25, kSmallestFall = 0.5;
constexpr int kIterations = 2;
// Inverse and power iterations of the guard's estimates of ρ(q0), and of ρ where the bound does
// not settle it past kGuardLargestRows rows: the Rayleigh quotients' error falls like
// (λ_min/λ)^(2k) in each eigenvector λ of the start vector; with λ ≥ 2 λ_min, 1e-12 of it after 20.
constexpr int kEstimateIterations = 20;
// Golden-section iterations locating a dip: the bracket (two walk steps) shrinks by 0.618 each,
// to 2 · 0.618⁶⁰ ≈ 6e-13 of a walk step.
constexpr int kGoldenIterations = 60;
// Newton iterations of locate's corrector on its hyperplane, the ‖Φ‖∞ it must reach (the
// projection's tolerance, ProjectionSettings) and the one it goes on to while Newton still halves
// it: near a change point a residual δ leaves the point off the curve by δ / σ_min, and at the
// projection's 1e-10 the located crank angle of A02 (N = 2) was 2.9e-7 rad off the exact one, at
// the round-off floor within the 1e-7 IftommA02.SurveyFindsBothHorizontalChangePoints... asks.
constexpr int kPlaneIterations = 12;
constexpr double kPlaneTolerance = 1e-10, kPlaneFloor = 1e-15;
// Walk points within this many walk steps of q0 (every coordinate) may close the curve.
constexpr double kCloseSteps = 2.0;
// The steepest slope of ρ along the curve (per rad or m of the largest speed component) at which
// a walk of kWalkStep steps still finds a dip: a walk point then lies within kWalkStep / 2 of the
// zero, where ρ < kDip. Under that bound ρ cannot reach zero within ρ / kDipSlope of a point, so
// the walk steps that far where it is longer than kWalkStep and skips no change point the fixed
// steps would find: ρ ≈ 0.43 on average along Park's regular four-bar, whose walk took 447 steps
// of kWalkStep all the way round (71 % of its 1 s run).
constexpr double kDipSlope = 2.0 * kDip / kWalkStep;
// The monitor measures the offset only within this distance of a point (rad, m, every measured
// coordinate): far away the tangent line says nothing about the curve, and angles wrap.
constexpr double kNearOffset = 0.5;
// Offset along the tangent (rad, m) within which a collapsing step is the change point's doing:
// on A02 with N = 40 the round-off in a joint-coordinate derivative at the exact state grows from
// 4e-13 at 1e-2 rad to 4e-10 at 1e-3 rad (gcp, nullspace, embedding).
constexpr double kImminentOffset = 1e-2;
// Change points this close in every coordinate (rad, m) are one configuration passed twice by the
// curve: located to ~1e-7 rad (tests), distinct points far apart.
constexpr double kSamePlace = 1e-6;
// Speed (rad/s, m/s, measured coordinates) below which a velocity has no direction to judge.
constexpr double kStill = 1e-9;
// Place of a predicted change point in a straddling step, as a fraction of the step: the middle
// of dopri5's widest gap between stage abscissae (c3 = 0.3, c4 = 0.8), and the band around it in
// which a proposed step is taken as it is.
constexpr double kStraddle = 0.55, kStraddleLow = 0.45, kStraddleHigh = 0.65;

double wrap(double a) { return std::remainder(a, 2.0 * std::numbers::pi); }

bool is_angle(const Model& model, int body) { return std::holds_alternative<Revolute>(model.joints[body].joint); }
bool is_scalar(const Model& model, int body) {
  return is_angle(model, body) || std::holds_alternative<Prismatic>(model.joints[body].joint);
}

// q(c) − q_ref(c) for coordinate c of tree joint `body`, wrapped when it is a revolute angle.
template <class Q>
double coordinate_offset(const Model& model, int body, int c, const Q& q, const VecX& q_ref) {
  return is_angle(model, body) ? wrap(q(c) - q_ref(c)) : q(c) - q_ref(c);
}

// Largest |coordinate_offset| over every coordinate (closure test of the walk).
double largest_offset(const Model& model, const VecX& q, const VecX& q_ref) {
  double worst = 0.0;
  for (int i = 0; i < model.nbodies; ++i)
    for (int c = model.q_index[i]; c < model.q_index[i] + model.nq_joint[i]; ++c)
      worst = std::max(worst, std::abs(coordinate_offset(model, i, c, q, q_ref)));
  return worst;
}

class Walker {
 public:
  Walker(const Model& model, const Constraints& cons)
      : model_(model), cons_(cons), kin_(model), data_(model), G_(cons.rows(), model.nv),
        rows_(cons.rows()), multipliers_(cons.rows()), projector_(model, cons), plane_(cons.rows() + 1, model.nv),
        plane_rhs_(cons.rows() + 1), phi_(cons.rows()) {
    // The kept rows with the alternates (a Bricard's or Bennett's rows that may take a kept row's
    // place along the motion): where they keep the rank the kept rows lose, no change point.
    if (!cons.alternates().empty()) {
      std::vector<ConstraintRow> rows = cons.kept();
      rows.insert(rows.end(), cons.alternates().begin(), cons.alternates().end());
      with_alternates_.emplace(std::move(rows));
    }
    // One kept row per constraint (m = nv − 1): the nonzero σ of G are those of G Gᵀ.
    if (cons.rows() + 1 == model.nv) {
      gram_.emplace(model, cons);
      if (gram_->fill() > kSparseFill) gram_.reset();
      if (!gram_) {
        // In place: Eigen's sized constructors leave the status unset, which a copy would read.
        GGt_.resize(cons.rows(), cons.rows());
        rows_eig_.emplace(cons.rows());
        rows_llt_.emplace(cons.rows());
      }
    }
  }

  // ρ = σ₂/σ₁ of G at q (σ₁ the largest, σ₂ the smallest after the tangent's zero), the unit
  // tangent (oriented along `along` when given) and the count of σ below kNullRatio σ₁.
  double indicator(const VecX& q, VecX& tangent, const VecX* along, int* nullity = nullptr) {
    update_positions(model_, kin_, q);
    return indicator(kin_, tangent, along, nullity);
  }
  // The same at the point the last point() call reached (its projection's positions: the walk
  // swept each point three times, for the projection, ρ and the potential).
  double indicator_at_point(VecX& tangent, const VecX* along, int* nullity = nullptr) {
    return indicator(projector_.position_kinematics(), tangent, along, nullity);
  }
  double indicator(const KinematicsData& kin, VecX& tangent, const VecX* along, int* nullity) {
    constraint_jacobian(model_, cons_, kin, data_, G_);
    double rho = 0.0;
    if (gram_ && along && !nullity && sparse_indicator(*along, tangent, rho)) return rho;
    if (GGt_.size() && along && !nullity && rows_indicator(*along, tangent, rho)) return rho;
    eig_.compute(G_.transpose() * G_);
    const VecX& l = eig_.eigenvalues();
    const double top = std::max(l(l.size() - 1), 1e-300);
    // Oriented before it is written: `along` may be `tangent` itself (the walk's start in each sense).
    const bool flip = along && eig_.eigenvectors().col(0).dot(*along) < 0.0;
    tangent = eig_.eigenvectors().col(0);
    if (flip) tangent = -tangent;
    if (nullity) {
      *nullity = 0;
      for (Eigen::Index k = 0; k < l.size(); ++k) *nullity += l(k) <= kNullRatio * kNullRatio * top;
    }
    return l.size() > 1 ? std::sqrt(std::max(l(1), 0.0) / top) : 1.0;
  }

  // ρ and the tangent at G_ from G Gᵀ (m = nv − 1 rows, dense): ρ from its eigenvalues alone, the
  // tangent `along` projected on ker G, (I − Gᵀ (G Gᵀ)⁻¹ G) along. Its error, ~ε/ρ², is that of
  // GᵀG's eigenvector (ε over the gap σ₂² / σ₁²), whose computation was three quarters of the
  // walk of A02 with N = 4 (9 speeds). Where ρ is below kNullRatio (the rows count as singular)
  // and where `along` is not known, GᵀG's eigenvectors are taken.
  bool rows_indicator(const VecX& along, VecX& tangent, double& rho) {
    GGt_.noalias() = G_ * G_.transpose();
    rows_eig_->compute(GGt_, Eigen::EigenvaluesOnly);
    const VecX& l = rows_eig_->eigenvalues();
    rho = std::sqrt(std::max(l(0), 0.0) / std::max(l(l.size() - 1), 1e-300));
    if (!(rho >= kNullRatio)) return false;
    rows_llt_->compute(GGt_);
    rows_.noalias() = G_ * along;
    multipliers_ = rows_llt_->solve(rows_);
    tangent = along;
    tangent.noalias() -= G_.transpose() * multipliers_;
    tangent.normalize();
    return true;
  }

  // ρ and the tangent at G_ from G Gᵀ's sparse factor (row_gram.hpp), where G Gᵀ is positive
  // definite: ρ from estimates of its extreme eigenvalues (exact at a dip, where the smallest is
  // far below the next one and inverse iteration converges at once; a located point is confirmed
  // by the dense solve), the tangent `along` projected on ker G, (I − Gᵀ (G Gᵀ)⁻¹ G) along.
  // O(m) a point on loops that are local (A02's four-bars): the dense solve of GᵀG was 97 % of
  // A02's 1 s run with N = 40.
  bool sparse_indicator(const VecX& along, VecX& tangent, double& rho) {
    gram_->assemble(G_);
    if (!gram_->smallest_above(0.0)) return false;
    const double smallest = gram_->smallest_estimate(kIterations);
    rho = std::sqrt(std::max(smallest, 0.0) / gram_->largest_estimate(kIterations));
    rows_.noalias() = G_ * along;
    gram_->solve(rows_, multipliers_);
    tangent = along;
    tangent.noalias() -= G_.transpose() * multipliers_;
    tangent.normalize();
    return true;
  }

  // Gravity and spring energy at the point q the last point() call reached (positions only: the
  // kinetic term, which reads velocities, is not used).
  double potential_at_point(const VecX& q) {
    const Energy e = energy(model_, projector_.position_kinematics(), q);
    return e.gravity + e.springs;
  }

  // The curve point reached from q by `length` along `dir` and the projection; false when the
  // projection does not converge.
  bool point(const VecX& from, const VecX& dir, double length, VecX& q) {
    q = from;
    integrate_q(model_, q, length * dir);
    try {
      projector_.project_positions(0.0, q);
    } catch (const std::runtime_error&) {
      return false;
    }
    return true;
  }

  // The change point between the walk point `from` (tangent dir) and `span` ahead (the two walk
  // steps around the dip), by golden-section search of the least ρ over the curve's points on the
  // hyperplanes dirᵀ(x − from) = s; false when ρ does not fall below kVanish, or when the kept
  // rows' rank loss there is one their alternates make up (RowChoice's exchange, no change point).
  // Each trial point is reached from the nearest one found (continuation along the curve), so that
  // near a crossing it stays on the branch the walk came along; the hyperplane makes s the same
  // parameter whichever point it starts from (a trial point projected from one tangent line landed
  // on either branch near a crossing, and the least ρ found depended on where the walk stood).
  bool locate(const VecX& from, const VecX& dir, double span, ChangePoint& out) {
    trials_.clear();
    trials_.push_back({0.0, from, dir});
    const double g = (std::sqrt(5.0) - 1.0) / 2.0;
    double a = 0.0, b = span;
    double x1 = b - g * (b - a), x2 = a + g * (b - a);
    VecX q(model_.nq), t(model_.nv);
    auto rho = [&](double s) { return trial(dir, s, q, t); };
    double f1 = rho(x1), f2 = rho(x2);
    const double reach = dir.cwiseAbs().maxCoeff();  // largest speed component per unit of s
    for (int it = 0; it < kGoldenIterations; ++it) {
      // Under the walk's slope bound (kDipSlope) ρ stays above kVanish over [a, b]: no change point
      // here. A dip that does not vanish (ρ 0.084 on Park's regular four-bar) is left after ~7
      // iterations instead of 60 (18 % of that four-bar's walk).
      if (std::min(f1, f2) - kDipSlope * (b - a) * reach > kVanish) return false;
      if (f1 < f2) {
        b = x2, x2 = x1, f2 = f1, x1 = b - g * (b - a), f1 = rho(x1);
      } else {
        a = x1, x1 = x2, f1 = f2, x2 = a + g * (b - a), f2 = rho(x2);
      }
    }
    const double s = 0.5 * (a + b);
    if (!(trial(dir, s, out.q, t) <= kVanish)) return false;
    int nullity = 0;
    update_positions(model_, kin_, out.q);
    out.indicator = indicator(kin_, t, &dir, &nullity);
    if (out.indicator > kVanish || alternates_keep_rank(out.q)) return false;
    describe_rank(nullity);
    const Energy e = energy(model_, kin_, out.q);
    out.potential = e.gravity + e.springs;
    // The tangent a little before the point, where it is well defined (the null space grows at it).
    VecX before(model_.nq);
    if (!(trial(dir, std::max(0.0, s - 0.025 * span), before, out.tangent) < 1.0)) return false;
    out.rank_regular = model_.nv - 1;
    out.rank_at_point = model_.nv - nullity;
    out.loops = loops_;
    return true;
  }

 private:
  struct Trial {
    double s;
    VecX q, tangent;
  };

  // ρ at the curve's point q on the hyperplane dirᵀ(x − from) = s (locate), with its tangent t:
  // predicted from the nearest trial point found along its tangent, corrected on the hyperplane;
  // 1 (no dip) where the corrector does not converge.
  double trial(const VecX& dir, double s, VecX& q, VecX& t) {
    const Trial* near = &trials_.front();
    for (const Trial& k : trials_)
      if (std::abs(k.s - s) < std::abs(near->s - s)) near = &k;
    const double along = dir.dot(near->tangent);
    if (!(std::abs(along) > 1e-3)) return 1.0;  // the curve runs along the hyperplane there
    q = near->q;
    integrate_q(model_, q, ((s - near->s) / along) * near->tangent);
    if (!on_plane(dir, q)) return 1.0;
    update_positions(model_, kin_, q);
    const double rho = indicator(kin_, t, &near->tangent, nullptr);
    trials_.push_back({s, q, t});
    return rho;
  }

  // Newton on Φ(q) = 0 within the hyperplane through q normal to dir: each step Δ the least-norm
  // solution of G Δ = −Φ, dirᵀ Δ = 0 (speed space). Near a crossing G loses rank and [G; dirᵀ]
  // with it; the complete orthogonal decomposition's least-norm step keeps to the nearest branch.
  bool on_plane(const VecX& dir, VecX& q) {
    const int m = cons_.rows();
    double before = std::numeric_limits<double>::infinity();
    for (int it = 0; it < kPlaneIterations; ++it) {
      update_positions(model_, kin_, q);
      constraint_position(model_, cons_, kin_, kWithoutDrives, data_, phi_);
      if (!phi_.allFinite()) return false;
      const double residual = phi_.lpNorm<Eigen::Infinity>();
      if (residual <= kPlaneTolerance && (residual <= kPlaneFloor || residual > 0.5 * before)) return true;
      before = residual;
      constraint_jacobian(model_, cons_, kin_, data_, G_);
      plane_.topRows(m) = G_;
      plane_.row(m) = dir.transpose();
      plane_rhs_.head(m) = -phi_;
      plane_rhs_(m) = 0.0;
      plane_cod_.compute(plane_);
      integrate_q(model_, q, plane_cod_.solve(plane_rhs_));
    }
    return before <= kPlaneTolerance;
  }

  // True when the kept rows with their alternates keep rank nv − 1 at q: σ₂/σ₁ of their Jacobian
  // above kVanish.
  bool alternates_keep_rank(const VecX& q) {
    if (!with_alternates_) return false;
    update_positions(model_, kin_, q);
    MatX G(with_alternates_->rows(), model_.nv);
    constraint_jacobian(model_, *with_alternates_, kin_, data_, G);
    Eigen::SelfAdjointEigenSolver<MatX> all(G.transpose() * G, Eigen::EigenvaluesOnly);
    const VecX& l = all.eigenvalues();
    return l.size() > 1 && std::sqrt(std::max(l(1), 0.0) / std::max(l(l.size() - 1), 1e-300)) > kVanish;
  }

  // The loops of the rows that lose rank: eigenvectors of G Gᵀ past its structural null space.
  void describe_rank(int nullity) {
    Eigen::SelfAdjointEigenSolver<MatX> rows(G_ * G_.transpose());
    const int m = cons_.rows(), lost = nullity - 1;
    const int structural = m - (model_.nv - 1);  // rows redundant everywhere (Bricard's)
    VecX weight = VecX::Zero(m);
    for (int k = std::max(structural, 0); k < std::min(m, structural + lost); ++k)
      weight += rows.eigenvectors().col(k).cwiseAbs2();
    loops_ = weight.maxCoeff() > 0.0 ? dominant_loops(model_, cons_, weight) : std::string("(unnamed)");
  }

  const Model& model_;
  const Constraints& cons_;
  KinematicsData kin_;
  ConstraintData data_;
  MatX G_;
  VecX rows_, multipliers_;
  Eigen::SelfAdjointEigenSolver<MatX> eig_;
  MatX GGt_;  ///< G Gᵀ, m = nv − 1 rows, where G Gᵀ is not sparse
  std::optional<Eigen::SelfAdjointEigenSolver<MatX>> rows_eig_;
  std::optional<Eigen::LLT<MatX>> rows_llt_;
  std::optional<RowGram> gram_;  ///< when G Gᵀ is sparse and regular along the curve
  Projector projector_;
  MatX plane_;                    ///< (m + 1 x nv) [G; dirᵀ], locate's corrector
  VecX plane_rhs_, phi_;          ///< (m + 1) its right-hand side, (m) Φ
  Eigen::CompleteOrthogonalDecomposition<MatX> plane_cod_;
  std::vector<Trial> trials_;     ///< locate's trial points so far
  std::optional<Constraints> with_alternates_;  ///< kept rows and alternates, when there are alternates
  std::string loops_;
};

}  // namespace

namespace {

// The survey (change_points.hpp), each way stopped at the first walk point whose potential energy
// is above `reachable`.
ChangePointSurvey walk(const Model& model, const Constraints& cons, const VecX& q0, double reachable) {
  ChangePointSurvey survey;
  if (cons.rows() == 0) {
    survey.why_not = "no loops";
    return survey;
  }
  if (model.nv > kSurveyLargestNv) {
    survey.why_not = "more than " + std::to_string(kSurveyLargestNv) + " joint speeds";
    return survey;
  }
  // nv − m speeds are free at every configuration whatever the rows' rank: no walk of one, and no
  // factorization to find it out (an nv³ eigenvalue solve, a third of a 0.2 s run of the 64-cell
  // spatial ladder when the survey and the auto choice each made it).
  if (model.nv - cons.rows() >= 2) {
    survey.why_not = "the loops leave " + std::to_string(model.nv - cons.rows()) +
                     " degrees of freedom or more (the survey walks one)";
    return survey;
  }
  // Couplings' rows (gears, linear couplings, drives: Σ c q = value(t)) are the same at every
  // configuration, and so is their rank: no change point anywhere (geared_pair walked 629 steps
  // of ρ = 1 all the way round).
  if (std::all_of(cons.kept().begin(), cons.kept().end(),
                  [](const ConstraintRow& r) { return r.kind == ConstraintRow::Kind::coupling; })) {
    survey.walked = survey.constant_rows = true;
    return survey;
  }
  Walker walker(model, cons);
  VecX tangent(model.nv);
  int nullity = 0;
  walker.indicator(q0, tangent, nullptr, &nullity);
  if (nullity != 1) {
    survey.why_not = "the loops leave " + std::to_string(nullity) +
                     " degrees of freedom at the initial configuration (the survey walks one)";
    return survey;
  }
  survey.walked = true;
  int bounded = 0;  // ways the walk stopped at the energy
  const VecX start_tangent = tangent;
  for (const double sense : {1.0, -1.0}) {
    VecX q = q0, dir = sense * start_tangent, next(model.nq), next_dir(model.nv);
    // The last two walk points with their tangents, steps and indicators (dip detection).
    VecX q_back = q, dir_back = dir;
    double step_back = 0.0, rho_back = 1.0, rho = walker.indicator(q, dir, &dir);
    double d0_prev = 0.0;
    // Largest speed component of the next step and of the last two taken (kDipSlope).
    double length = kWalkStep, taken = 0.0, taken_back = 0.0;
    for (int n = 0; n < kWalkSteps / 2; ++n, ++survey.steps) {
      double step = length / dir.cwiseAbs().maxCoeff();
      while (!walker.point(q, dir, step, next)) {
        step *= 0.5;
        if (step * dir.cwiseAbs().maxCoeff() < 1e-8) {
          survey.why_not = "the walk stopped: the position projection fails along the curve";
          survey.walked = false;
          return survey;
        }
      }
      taken_back = taken;
      taken = step * dir.cwiseAbs().maxCoeff();
      const double rho_next = walker.indicator_at_point(next_dir, &dir);
      const double potential_next = walker.potential_at_point(next);
      // ρ at q a local minimum below kDip: a change point may lie between q_back and next.
      if (n > 0 && rho < kDip && rho < rho_back && rho <= rho_next) {
        ChangePoint p;
        if (walker.locate(q_back, dir_back, step_back + step, p)) survey.points.push_back(std::move(p));
      }
      q_back = q, dir_back = dir, step_back = step, rho_back = rho;
      q = next, dir = next_dir, rho = rho_next;
      if (potential_next > reachable) {
        ++bounded;
        break;
      }
      // At most twice the last step (the curve's bend), as far as ρ keeps a change point off.
      length = std::min(2.0 * taken, std::max(kWalkStep, rho / kDipSlope));
      // Closed: back through the hyperplane through q0 normal to the start tangent, close to q0.
      if (largest_offset(model, q, q0) <= kCloseSteps * std::max({kWalkStep, taken, taken_back}) && n > 2) {
        VecX offset(model.nv);
        double d0 = 0.0;
        for (int k = 0; k < model.nv; ++k) {
          const int i = model.v_body[k];
          const int c = model.q_index[i] + (k - model.v_index[i]);
          offset(k) = is_scalar(model, i) ? coordinate_offset(model, i, c, q, q0) : 0.0;
        }
        d0 = sense * start_tangent.dot(offset);
        if (d0_prev < 0.0 && d0 >= 0.0) {
          survey.closed = true;
          break;
        }
        d0_prev = d0;
      } else {
        d0_prev = -1.0;  // far from q0: only an approach from behind closes the curve
      }
    }
    if (survey.closed) break;
  }
  survey.bounded = bounded == 2;
  return survey;
}

}  // namespace

ChangePointSurvey survey_change_points(const Model& model, const Constraints& cons, const VecX& q0) {
  return walk(model, cons, q0, std::numeric_limits<double>::infinity());
}

ChangePointSurvey survey_change_points(const Model& model, const Constraints& cons, const VecX& q0,
                                       const VecX& u0) {
  return walk(model, cons, q0, reachable_potential(model, q0, u0));
}

double reachable_potential(const Model& model, const VecX& q0, const VecX& u0) {
  constexpr double kUnbounded = std::numeric_limits<double>::infinity();
  if (!model.callbacks.empty()) return kUnbounded;
  for (const ModelForce& f : model.forces)
    if (f.kind == ModelForce::Kind::joint_force || f.kind == ModelForce::Kind::body_force ||
        f.kind == ModelForce::Kind::body_torque)
      return kUnbounded;
  KinematicsData kin(model);
  update_positions(model, kin, q0);
  update_velocities(model, kin, q0, u0);
  const double e0 = energy(model, kin, q0).total();
  return e0 + 1e-9 * std::max(1.0, std::abs(e0));
}

bool may_reach(const Model& model, const ChangePoint& point, const VecX& q0, const VecX& u0) {
  return point.potential <= reachable_potential(model, q0, u0);
}

const ChangePoint* first_reachable(const Model& model, const ChangePointSurvey& survey, const VecX& q0,
                                   const VecX& u0) {
  if (survey.points.empty()) return nullptr;
  const double reachable = reachable_potential(model, q0, u0);
  for (const ChangePoint& p : survey.points)
    if (p.potential <= reachable) return &p;
  return nullptr;
}

std::string change_point_problem(const Model& model, const ChangePointSurvey& survey, const VecX& q0,
                                 const VecX& u0, std::string_view method, const std::string& refusal) {
  if (refusal.empty()) return {};
  const ChangePoint* p = first_reachable(model, survey, q0, u0);
  if (!p) return {};
  return std::string(method) + " refuses the run: the motion can reach a change point of the loops (" +
         describe(model, *p) + "), which " + refusal;
}

std::string describe(const Model& model, const ChangePoint& point) {
  std::ostringstream s;
  s << "loops " << point.loops << " (rank " << point.rank_regular << " -> " << point.rank_at_point << ") at ";
  const std::vector<std::string> names = model.coordinate_names();
  const int listed = std::min<int>(model.nq, 3);
  for (int k = 0; k < listed; ++k) s << (k ? ", " : "") << names[k] << " = " << point.q(k);
  if (model.nq > listed) s << ", ...";
  return s.str();
}

ChangePointMonitor::ChangePointMonitor(const Model& model, std::vector<ChangePoint> points)
    : model_(model), points_(std::move(points)) {
  for (int k = 0; k < model.nv; ++k)
    if (is_scalar(model, model.v_body[k])) measured_.push_back(k);
  // A point whose tangent lies mostly in unmeasured coordinates cannot be monitored.
  std::erase_if(points_, [&](const ChangePoint& p) {
    double w = 0.0;
    for (int k : measured_) w += p.tangent(k) * p.tangent(k);
    return w < 0.25;
  });
  now_.resize(points_.size());
  before_.resize(points_.size());
  passages_.resize(points_.size());
  passage_.assign(points_.size(), -1);
  for (std::size_t a = 0; a < points_.size(); ++a)
    for (std::size_t b = 0; b < points_.size(); ++b)
      if (a != b && largest_offset(model, points_[a].q, points_[b].q) <= kSamePlace)
        passages_[a].push_back(static_cast<int>(b));
}

ChangePointMonitor::Offset ChangePointMonitor::offset(int point, const Eigen::Ref<const VecX>& q,
                                                      const Eigen::Ref<const VecX>& u) const {
  const ChangePoint& p = points_[point];
  Offset o;
  double w = 0.0, uu = 0.0;
  o.near = true;
  for (int k : measured_) {
    const int body = model_.v_body[k];
    const double dq = coordinate_offset(model_, body, model_.q_index[body], q, p.q);
    o.near = o.near && std::abs(dq) <= kNearOffset;
    o.d += p.tangent(k) * dq;
    o.rate += p.tangent(k) * u(k);
    w += p.tangent(k) * p.tangent(k);
    uu += u(k) * u(k);
  }
  // At rest the direction is round-off: no turn is read from it.
  if (std::sqrt(uu) > kStill) o.turn = std::acos(std::min(1.0, std::abs(o.rate) / std::sqrt(w * uu)));
  o.d /= w;
  o.rate /= w;
  return o;
}

bool ChangePointMonitor::observe(double t, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& u) {
  if (!enabled()) return false;
  if (have_now_) {
    before_.swap(now_);
    t_before_ = t_now_;
    have_before_ = true;
  }
  for (std::size_t p = 0; p < points_.size(); ++p) now_[p] = offset(static_cast<int>(p), q, u);
  follow_passages();
  t_now_ = t;
  have_now_ = true;
  if (!have_before_) return false;
  for (std::size_t p = 0; p < points_.size(); ++p) {
    const Offset &a = before_[p], &b = now_[p];
    if (!a.near || !b.near || a.d == 0.0 || (a.d < 0.0) == (b.d < 0.0)) continue;
    last_.t = t_before_ + (t_now_ - t_before_) * a.d / (a.d - b.d);
    last_.point = static_cast<int>(p);
    last_.rank_regular = points_[p].rank_regular;
    last_.rank_at_point = points_[p].rank_at_point;
    last_.loops = points_[p].loops;
    return true;
  }
  return false;
}

double ChangePointMonitor::time_to(int point) const {
  const Offset& o = now_[point];
  if (!o.near) return std::numeric_limits<double>::infinity();
  // d̈ from the last two accepted states (first order: the prediction needs ~0.1 h, not more).
  double acc = 0.0;
  if (have_before_ && before_[point].near && t_now_ > t_before_)
    acc = (o.rate - before_[point].rate) / (t_now_ - t_before_);
  // Smallest positive root of d + ḋ τ + ½ d̈ τ² = 0.
  const double a = 0.5 * acc, b = o.rate, c = o.d;
  double best = std::numeric_limits<double>::infinity();
  auto take = [&](double tau) {
    if (tau > 0.0 && tau < best) best = tau;
  };
  if (std::abs(a) < 1e-12 * std::max(std::abs(b), 1e-300)) {
    if (b != 0.0) take(-c / b);
  } else {
    const double disc = b * b - 4.0 * a * c;
    if (disc >= 0.0) {
      const double r = -0.5 * (b + std::copysign(std::sqrt(disc), b));  // stable roots r/a, c/r
      if (a != 0.0) take(r / a);
      if (r != 0.0) take(c / r);
    }
  }
  return best;
}

const ChangePoint* ChangePointMonitor::imminent() const {
  if (!enabled() || !have_now_) return nullptr;
  for (std::size_t p = 0; p < points_.size(); ++p)
    if (now_[p].near && std::abs(now_[p].d) <= kImminentOffset) return &points_[p];
  return nullptr;
}

// The passage the motion came along, chosen at its first state within kImminentOffset of the
// place (the tangent its velocity is nearest), kept until it leaves: through the place the motion
// keeps that tangent, and turning onto the other passage is turning off its branch. Within reach
// is judged along that passage's tangent: a state 0.3 rad away along one passage is 0 along the
// other's when the two are at right angles.
void ChangePointMonitor::follow_passages() {
  const auto within = [&](int p) { return now_[p].near && std::abs(now_[p].d) <= kImminentOffset; };
  for (std::size_t p = 0; p < points_.size(); ++p) {
    if (passage_[p] >= 0 && within(passage_[p])) continue;
    int nearest = static_cast<int>(p);
    for (int o : passages_[p])
      if (now_[o].turn < now_[nearest].turn) nearest = o;
    passage_[p] = within(nearest) ? nearest : -1;
  }
}

const ChangePoint* ChangePointMonitor::turned(double& angle) const {
  if (!enabled() || !have_now_) return nullptr;
  for (std::size_t p = 0; p < points_.size(); ++p) {
    const int along = passage_[p];
    if (along >= 0 && now_[along].turn > kBranchTurn) {
      angle = now_[along].turn;
      return &points_[along];
    }
  }
  return nullptr;
}

double ChangePointMonitor::adjust_step(double t, double h) const {
  if (!enabled() || !have_now_ || t != t_now_) return h;
  double tau = std::numeric_limits<double>::infinity();
  for (std::size_t p = 0; p < points_.size(); ++p) tau = std::min(tau, time_to(static_cast<int>(p)));
  const double ahead = tau / h;
  if (ahead >= kStraddleLow && ahead <= kStraddleHigh) return h;
  // Too close for a step of h to straddle it: a shorter straddling step.
  if (ahead < kStraddleLow) return tau / kStraddle;
  // Towards the place from which a step of h straddles it.
  if (ahead <= kStraddle + 1.0) return tau - kStraddle * h;
  return h;
}

SingularityGuard::SingularityGuard(const Model& model, const Constraints& cons, const VecX& q0, int dense_rows,
                                   double near, GuardUse use)
    : model_(model), cons_(cons), dense_(cons.rows() <= dense_rows), use_(use), near_(near), kin_(model), data_(model),
      G_(dense_ ? cons.rows() : 0, model.nv), GGt_(G_.rows(), G_.rows()), row_sums_(G_.rows()), q_before_(q0), q_now_(q0),
      // Its workspace, once, in place: Eigen's sized constructor leaves its status unset, which a
      // copy would read.
      eig_(G_.rows()) {
  if (cons.rows() == 0) return;
  enabled_ = start_sparse(q0) || dense_;
  if (gram_ || !enabled_) return;
  G_ref_.resize(G_.rows(), G_.cols());
  solve(q0, false);
  // Singular values already zero at q0 belong to rows redundant everywhere (Bricard's), not to a
  // singular configuration: ρ skips them (kNullRatio, as the survey counts degrees of freedom).
  const VecX& l = eig_.eigenvalues();
  const double top = std::max(l(l.size() - 1), 1e-300);
  structural_ = 0;
  while (structural_ + 1 < l.size() && l(structural_) <= kNullRatio * kNullRatio * top) ++structural_;
  sigma_ref_ = std::sqrt(std::max(l(structural_), 0.0));
  rho_ = estimate_ = sigma_ref_ / top_ref_;
  smallest_ = sigma_ref_ * sigma_ref_;
  rho0_ = std::max(rho_, 1e-300);
  low_ = rho_;
}

bool SingularityGuard::start_sparse(const VecX& q0) {
  auto gram = std::make_unique<RowGram>(model_, cons_);
  if (gram->fill() > kSparseFill) return false;
  update_positions(model_, kin_, q0);
  gram->assemble(model_, cons_, kin_, data_);
  // No singular value zero or near it (kNullRatio of the largest, as the dense path counts rows
  // redundant everywhere): else the dense path, which skips those.
  if (!gram->smallest_above(kNullRatio * kNullRatio * gram->norm_bound())) return false;
  smallest_ = gram->smallest_estimate(kEstimateIterations);
  rho_ = estimate_ = low_ = std::sqrt(std::max(smallest_, 0.0) / gram->largest_estimate(kEstimateIterations));
  rho0_ = std::max(rho_, 1e-300);
  gram_ = std::move(gram);
  return true;
}

SingularityGuard::~SingularityGuard() = default;

void SingularityGuard::jacobian_at(const Eigen::Ref<const VecX>& q) {
  update_positions(model_, kin_, q);
  constraint_jacobian(model_, cons_, kin_, data_, G_);
}

double SingularityGuard::solve(const Eigen::Ref<const VecX>& q, bool vectors) {
  ++solves_;
  jacobian_at(q);
  GGt_.noalias() = G_ * G_.transpose();
  eig_.compute(GGt_, vectors ? Eigen::ComputeEigenvectors : Eigen::EigenvaluesOnly);
  const VecX& l = eig_.eigenvalues();
  top_ref_ = std::sqrt(std::max(l(l.size() - 1), 1e-300));
  sigma_ref_ = std::sqrt(std::max(l(structural_), 0.0));
  rho_ = estimate_ = sigma_ref_ / top_ref_;
  smallest_ = sigma_ref_ * sigma_ref_;
  if (!gram_) G_ref_ = G_;  // the reference of Weyl's bound
  return rho_;
}

double SingularityGuard::lower_bound() {
  double frobenius = 0.0, largest_column = 0.0;
  row_sums_.setZero();
  for (Eigen::Index j = 0; j < G_.cols(); ++j) {
    double column = 0.0;
    for (Eigen::Index i = 0; i < G_.rows(); ++i) {
      const double d = std::abs(G_(i, j) - G_ref_(i, j));
      column += d;
      row_sums_(i) += d;
      frobenius += d * d;
    }
    largest_column = std::max(largest_column, column);
  }
  const double shift = std::min(std::sqrt(frobenius), std::sqrt(largest_column * row_sums_.maxCoeff()));
  return std::max(sigma_ref_ - shift, 0.0) / (top_ref_ + shift);
}

// A bound the other way, for a guard that asks only whether the loops are clear (GuardUse::clear):
// where G Gᵀ = A is sparse, λ_min(A) ≤ near² λ̃ when A − near² λ̃ I is not positive definite, and
// with λ̃ ≤ λ_max(A) (a Rayleigh quotient) ρ² = λ_min / λ_max ≤ near². Near a singular
// configuration, where a hand-back waits, ρ stays below the threshold for many steps: a solve for
// ρ at each (with its state before, for the extrapolation) was 18 % of a 1 s run of the 64-cell
// ladder (callgrind, SingularityGuard::solve). Where A is dense, Weyl's inequality the other way
// (σ_k ≤ σ_k,ref + ‖ΔG‖₂) saved no solve along the 3-square chain's flat squares: not used.
bool SingularityGuard::bounded_below(double near) {
  return gram_ && !gram_->smallest_above(near * near * gram_->largest_estimate(kIterations));
}

double SingularityGuard::relative_indicator(const Eigen::Ref<const VecX>& q) {
  if (!dense_) throw std::logic_error("the guard solves for ρ only up to its dense_rows rows");
  return solve(q, false) / rho0_;
}

bool SingularityGuard::settled(double near, bool had_before) {
  if (gram_) {
    const double tau = kSmallestFall * smallest_;
    if (!gram_->smallest_above(tau)) return false;
    smallest_ = gram_->smallest_estimate(kIterations);
    const double estimate = std::sqrt(std::max(smallest_, 0.0) / gram_->largest_estimate(kIterations));
    const bool falling = had_before && estimate < estimate_ && 2.0 * estimate - estimate_ < near;
    estimate_ = estimate;
    low_ = std::sqrt(tau / gram_->norm_bound());
    return low_ >= near && !falling;
  }
  const double low = lower_bound();
  if (low < near || (had_before && 2.0 * low - low_ < near)) return false;
  low_ = low;
  return true;
}

bool SingularityGuard::observe(const Eigen::Ref<const VecX>& q) {
  if (!enabled_) return false;
  update_positions(model_, kin_, q);
  return observe(kin_);
}

bool SingularityGuard::observe(const KinematicsData& kin) {
  if (!enabled_) return false;
  q_now_ = kin.q;  // the solves below take kin_ to other states
  const VecX& q = q_now_;
  const double near = near_ * rho0_;
  const bool had_before = have_before_;
  have_before_ = true;
  const double estimate_before = estimate_;
  if (gram_) gram_->assemble(model_, cons_, kin, data_);
  else constraint_jacobian(model_, cons_, kin, data_, G_);
  // Bounded above the threshold here and, extrapolated over one more step, at the next state.
  if (settled(near, had_before)) {
    solved_before_ = false;
    q_before_ = q;
    return false;
  }
  if (use_ == GuardUse::clear && bounded_below(near)) {
    solved_before_ = predicted_ = false;
    q_before_ = q;
    low_ = 0.0;
    return true;
  }
  if (!dense_) return estimate_unsettled(near, had_before, estimate_before);
  // The extrapolation needs ρ at the state before, not a bound of it.
  if (had_before && !solved_before_) low_ = solve(q_before_, false);
  rho_before_ = low_;
  low_ = solve(q, false);
  solved_before_ = true;
  q_before_ = q;
  // Linear extrapolation over one more step of the last step's length: ρ passes zero like
  // |t − t*|, so a crossing between this state and the next shows as 2ρ − ρ_before < near.
  predicted_ = had_before && rho_ < rho_before_ && 2.0 * rho_ - rho_before_ < near;
  if (rho_ >= near && !predicted_) return false;
  if (use_ == GuardUse::clear) return true;  // not clear yet: nothing to describe
  // The loops: rows of the eigenvector of the smallest eigenvalue that is not structural.
  solve(q, true);
  loops_ = dominant_loops(model_, cons_, eig_.eigenvectors().col(structural_).cwiseAbs2());
  return true;
}

bool SingularityGuard::estimate_unsettled(double near, bool had_before, double estimate_before) {
  // ρ at the state before: its estimate there (the extrapolation's); here, estimated to
  // convergence from the factor of G Gᵀ itself, zero where that is not positive definite.
  rho_before_ = estimate_before;
  rho_ = 0.0;
  if (gram_->smallest_above(0.0)) {
    smallest_ = gram_->smallest_estimate(kEstimateIterations);
    rho_ = std::sqrt(std::max(smallest_, 0.0) / gram_->largest_estimate(kEstimateIterations));
  }
  estimate_ = low_ = rho_;
  predicted_ = had_before && rho_ < rho_before_ && 2.0 * rho_ - rho_before_ < near;
  if (rho_ >= near && !predicted_) return false;
  VecX weight(cons_.rows());  // the firing state only
  gram_->smallest_vector(weight);
  loops_ = dominant_loops(model_, cons_, weight.cwiseAbs2());
  return true;
}

std::string SingularityGuard::describe() const {
  std::ostringstream s;
  s << "the loops " << loops_ << " come " << (predicted_ ? "within one step of" : "near")
    << " a singular configuration (σ_min/σ_max of the kept rows " << rho_;
  if (predicted_) s << ", falling from " << rho_before_;
  s << "; " << rho0_ << " at the start, and the guard's bound is " << near_ << " of that)";
  return s.str();
}

}  // namespace loopdyn
