#include "loopdyn/formulations/srm.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include <Eigen/Eigenvalues>

#include "loopdyn/loops/loop_structure.hpp"
#include "loopdyn/core/errors.hpp"
#include "formulations/setting_check.hpp"

namespace loopdyn {

namespace {

void check_setting(bool ok, const char* what, double value) { detail::check_setting(ok, "srm", what, value); }

}  // namespace

Srm::Srm(const Model& model, const FormulationSettings& settings)
    : Formulation(model), cons_(model.loops().constraints), iterations_(settings.srm.iterations),
      epsilon_setting_(settings.srm.epsilon), alpha_(settings.srm.alpha),
      min_stiffness_(settings.srm.min_stiffness), max_work_(settings.srm.max_work), on_singular_(settings.on_singular),
      aba_(model), data_(model),
      forces_(model), phi_(cons_.rows()), phidot_(cons_.rows()), lambda0_(VecX::Zero(cons_.rows())),
      lambda_(VecX::Zero(cons_.rows())), loop_wrench_(6, model.loop_joints.size()), fext_(6, model.nbodies),
      tau_(model.nv), qs_(model.nq), us_(model.nv), udot_(model.nv), correction_(cons_.rows()),
      cg_b_(cons_.rows()),
      cg_r_(cons_.rows()), cg_p_(cons_.rows()), cg_Ap_(cons_.rows()) {
  check_setting(iterations_ >= 1, "the number of iterations (`srm_iterations`) must be at least 1", iterations_);
  if (epsilon_setting_)
    check_setting(std::isfinite(*epsilon_setting_) && *epsilon_setting_ > 0.0,
                  "ε (`srm_epsilon`, s/kg) must be finite and > 0", *epsilon_setting_);
  check_setting(std::isfinite(alpha_) && alpha_ >= 0.0, "α (`srm_alpha`, 1/s) must be finite and >= 0", alpha_);
  check_setting(std::isfinite(min_stiffness_) && min_stiffness_ >= 0.0,
                "the smallest relative stiffness (`srm_min_stiffness`) must be finite and >= 0", min_stiffness_);
  check_setting(std::isfinite(max_work_) && max_work_ >= 0.0,
                "the largest relative work of the constraint forces (`srm_max_work`) must be finite and >= 0", max_work_);
  double mass = 0.0;
  for (double m : model.mass) mass += m;
  weight_energy_ = mass * model.gravity.norm();  // m g × 1 m (J)
}

void Srm::start(const StepPlan& plan, const VecX& q0, const VecX& u0) {
  if (!plan.fixed_step)
    throw std::invalid_argument(
        "srm needs a fixed-step explicit integrator (`integrator = rk2` or `integrator = rk4`), not " + std::string(plan.integrator) +
        ": its regularization ε is tied to the step (ε ~ h, paper 003 §3.3) and its λ_0 to the previous step, and " +
        std::string(plan.integrator) + " chooses its own steps");
  const double h = plan.step;
  check_setting(std::isfinite(h) && h > 0.0, "needs a fixed step (`dt`) that is finite and > 0", h);
  lambda0_.setZero();
  lambda_.setZero();
  correction_.setZero();
  reported_ = false;
  work_ = power_ = stored_max_ = t_accepted_ = 0.0;
  if (cons_.rows() == 0) {
    epsilon_ = epsilon_setting_ ? *epsilon_setting_ : 1.0;
    return;
  }
  // λ_0 of a step is λ_S of the step before: a correction ε⁻¹(G u + αΦ) from each of the S
  // iterates is carried into the next step, so the rate seen by the explicit step is S a/ε.
  const Spectrum spectrum = constraint_spectrum(q0);
  a_max_ = spectrum.largest;
  a_min_ = spectrum.smallest;
  const double a_max = a_max_;
  const double rate = iterations_ * h * a_max;  // h · S a_max / ε at ε = 1
  const double limit = rate / plan.stability_limit;
  epsilon_ = epsilon_setting_ ? *epsilon_setting_ : rate;
  if (epsilon_ < limit) {
    std::ostringstream s;
    s << "srm: ε = " << epsilon_ << " s/kg (`srm_epsilon`) is below the explicit stability limit of "
      << plan.integrator << " with h = " << h << " s and " << iterations_
      << " iterates: h·S·a_max/ε must stay below " << plan.stability_limit << " (a_max = " << a_max
      << " kg⁻¹, the largest eigenvalue of G M⁻¹ Gᵀ at the initial configuration). Use ε >= " << limit
      << ", a smaller `dt`, or leave `srm_epsilon` unset (ε = h·S·a_max = " << rate << ")";
    throw std::invalid_argument(s.str());
  }
  const Energy e0 = energy(model_, aba_.kin, q0);  // positions at q0 (constraint_spectrum)
  potential0_ = e0.gravity + e0.springs;
  floor_ = std::max(weight_energy_, std::abs(e0.springs));
  exact_multipliers(0.0, q0, u0);  // λ_0 of the first step (003 Assumption 3.1: no initial layer)
  lambda0_ = lambda_;
}

std::string Srm::summary() const {
  char line[160];
  std::snprintf(line, sizeof line, "%d iterates, ε = %.6g s/kg (a_max = %.6g 1/kg), α = %.6g 1/s", iterations_, epsilon_,
                a_max_, alpha_);
  return line;
}

std::string Srm::change_point_refusal() const {
  if (on_singular_ != FormulationSettings::OnSingular::stop) return {};
  return "srm cannot cross: there the loops' constraint directions lose their stiffness, its iterates stop "
         "converging and the regularization leaves the constraints (it would stop there). Use gcp, nullspace, "
         "rcr or embedding, or `on_singular = continue` to run it anyway";
}

void Srm::to_state(const VecX& q, const VecX& u, Eigen::Ref<VecX> x) const {
  const int n = state_stride();
  for (int s = 0; s < iterations_; ++s) {
    x.segment(s * n, model_.nq) = q;
    model_.normalize(x.segment(s * n, model_.nq));
    x.segment(s * n + model_.nq, model_.nv) = u;
  }
}

void Srm::to_joint(const VecX& x, Eigen::Ref<VecX> q, Eigen::Ref<VecX> u) const {
  const int last = (iterations_ - 1) * state_stride();
  q = x.segment(last, model_.nq);
  u = x.segment(last + model_.nq, model_.nv);
}

void Srm::correct(const VecX& u) {
  constraint_position(model_, cons_, aba_.kin, kWithoutDrives, data_, phi_);
  constraint_velocity(model_, cons_, aba_.kin, data_, u, phidot_);
  correction_ = (phidot_ + alpha_ * phi_) / epsilon_;
  lambda_ += correction_;  // 003 eq 3.12d
}

void Srm::solve(double t, const VecX& q, const VecX& u, const VecX& lambda, Bias bias, Eigen::Ref<VecX> udot) {
  if (bias == Bias::yes) {
    evaluate_forces(model_, aba_.kin, t, q, u, forces_);
    fext_ = forces_.f_body;
    tau_ = forces_.applied.tau;
  } else {
    fext_.setZero();
    tau_.setZero();
  }
  constraint_forces(model_, cons_, aba_.kin, data_, lambda, loop_wrench_, fext_, &tau_);  // −Gᵀλ
  aba_solve(model_, aba_, tau_, &fext_, bias, udot);
}

void Srm::derivative(double t, const VecX& x, Eigen::Ref<VecX> dx) {
  const int n = state_stride();
  lambda_ = lambda0_;
  for (int s = 0; s < iterations_; ++s) {
    qs_ = x.segment(s * n, model_.nq);
    us_ = x.segment(s * n + model_.nq, model_.nv);
    aba_factor(model_, aba_, qs_);
    aba_velocity(model_, aba_, qs_, us_);
    correct(us_);  // λ_s from λ_{s−1} at iterate s's own stage state
    solve(t, qs_, us_, lambda_, Bias::yes, udot_);
    model_.qdot(qs_, us_, dx.segment(s * n, model_.nq));
    dx.segment(s * n + model_.nq, model_.nv) = udot_;
  }
}

void Srm::accept(double t, Eigen::Ref<VecX> x) {
  // λ_0 of the next step: the chain of corrections at the accepted iterates. It needs their
  // positions and velocities only, no articulated-body solve.
  const int n = state_stride();
  lambda_ = lambda0_;
  for (int s = 0; s < iterations_; ++s) {
    model_.normalize(x.segment(s * n, model_.nq));
    qs_ = x.segment(s * n, model_.nq);
    us_ = x.segment(s * n + model_.nq, model_.nv);
    update_positions(model_, aba_.kin, qs_);
    update_velocities(model_, aba_.kin, qs_, us_);
    correct(us_);
  }
  lambda0_ = lambda_;
  check_work(t);
  check_convergence(t);
  // Every iterate starts the next step from the last one's state (003 applies the iteration at
  // each time step): iterates kept apart over many steps let slow modes of their differences grow
  // (measured on fivebar_malczyk over 20 s: drift 1.6e-4 and energy −4.8e-3 J without the restart,
  // 3.3e-7 and 4.3e-5 J with it, as for S = 1).
  for (int s = 0; s + 1 < iterations_; ++s) x.segment(s * n, n) = x.segment((iterations_ - 1) * n, n);
}

void Srm::check_convergence(double t) {
  // The corrections ε⁻¹(G u + αΦ) the iterates still make point along the constraint directions
  // they cannot close. Along an eigenvector of G M⁻¹ Gᵀ with eigenvalue a an iterate reduces the
  // multiplier error by a factor about ε/(a T), T the time scale of the motion (003 Thm 3.1): the
  // iteration converges where a is not small, and stops converging near a singular configuration,
  // where a → 0. The Rayleigh quotient of the last correction is at least the smallest eigenvalue
  // now: below a fraction of the smallest one at the start, the mechanism has come that much
  // nearer a singular configuration. (Against a_max the measure would depend on the size: the
  // spectrum spreads with it, and large nets would stop in regular motion.)
  if (cons_.rows() == 0 || reported_) return;
  const double norm = correction_.squaredNorm();
  if (!(norm > 0.0)) return;
  aba_factor(model_, aba_, qs_);  // the last iterate's configuration (accept's last one)
  constraint_position(model_, cons_, aba_.kin, kWithoutDrives, data_, phi_);
  constraint_operator(qs_, correction_, phidot_);
  const double stiffness = correction_.dot(phidot_) / norm;
  if (stiffness >= min_stiffness_ * a_min_) return;
  std::ostringstream s;
  s << "srm: the iterates do not converge at t = " << t << ": the constraint direction they still correct has a "
    << "stiffness of " << stiffness << " kg⁻¹, below `srm_min_stiffness` " << min_stiffness_
    << " times the smallest eigenvalue of G M⁻¹ Gᵀ at the start (" << a_min_
    << " kg⁻¹). The loops are near a singular configuration ("
    << dominant_loops(model_, cons_, correction_.cwiseAbs())
    << " dominate), where the regularization cannot build the constraint forces: the motion leaves the constraints "
       "and gains or loses energy";
  stop_or_report(t, s.str(), StopKind::singular);
}

void Srm::check_work(double t) {
  // Power of the loop forces on the last iterate, −λᵀ(G u), by the trapezoidal rule over the step;
  // positions and velocities of that iterate are current (accept). Ideal loop joints do no work, so
  // the work is the energy the regularization has added or removed: srm's own error, measured. Its
  // multiplier error e = λ_S − λ* exerts the generalized force −Gᵀe, which has no component along
  // the loops (tᵀGᵀe = 0 for G t = 0); what moves the motion along them is this work, done where
  // the iterates leave G u ≠ 0. The scale E_s, the energy that moves: the largest T + |V − V(0)| so
  // far (V gravity and springs, as the run watch's S_E without the applied forces' work, which the
  // Simulator integrates), at least the weight × 1 m (as the zoo's) and the springs' energy at the
  // start (IFToMM A03 starts at rest), so that a mechanism at rest is not held to nothing. Measured whether checked or not (the diagnostics srm.work,
  // srm.energy_scale).
  if (cons_.rows() == 0) return;
  const double power = -lambda_.dot(phidot_);
  work_ += 0.5 * (power + power_) * (t - t_accepted_);
  power_ = power;
  t_accepted_ = t;
  const Energy e = energy(model_, aba_.kin, qs_);
  stored_max_ = std::max(stored_max_, e.kinetic + std::abs(e.gravity + e.springs - potential0_));
  const double scale = energy_scale();
  if (reported_ || max_work_ == 0.0 || !(std::abs(work_) > max_work_ * scale)) return;
  std::ostringstream s;
  s << "srm: by t = " << t << " its loop forces have done " << work_ << " J of work, " << std::abs(work_) / scale
    << " of the mechanism's energy scale (" << scale << " J, the larger of the largest T + |V - V(0)| so far, "
    << stored_max_ << " J, the weight x 1 m and the springs' energy at the start, " << floor_
    << " J), above `srm_max_work` " << max_work_ << ". Ideal loop joints do no work: this is srm's own regularization error, which moves the motion along the "
       "loops, from a step too long for the motion (it falls like dt²) or a singular configuration nearby";
  stop_or_report(t, s.str(), StopKind::accuracy);
}

void Srm::stop_or_report(double t, const std::string& why, StopKind kind) {
  if (on_singular_ == FormulationSettings::OnSingular::proceed) {
    report(t, why + "; going on (`on_singular = continue`; later ones are not reported)");
    reported_ = true;
    return;
  }
  if (kind == StopKind::accuracy)
    throw RunWatchError(why + ". Use a smaller `dt`, another method (lagrange-dense, rcr or dca, error-controlled by "
                              "dopri5), or `srm_max_work = 0` to go on at your own risk");
  throw SingularConfigurationError(why + ". Use a smaller `dt`, `method = dca` (it crosses singular configurations), or "
                                 "`on_singular = continue` to go on at your own risk");
}

void Srm::accelerations(double t, const VecX& q, const VecX& u, Eigen::Ref<VecX> udot) {
  exact_multipliers(t, q, u);
  aba_velocity(model_, aba_, q, u);  // exact_multipliers overwrote the velocities
  solve(t, q, u, lambda_, Bias::yes, udot);
}

void Srm::joint_accelerations(double t, const VecX& x, Eigen::Ref<VecX> udot) {
  // At an accepted state the iterates coincide and λ_S there is λ_0 of the next step (accept).
  to_joint(x, qs_, us_);
  aba_factor(model_, aba_, qs_);
  aba_velocity(model_, aba_, qs_, us_);
  constraint_position(model_, cons_, aba_.kin, kWithoutDrives, data_, phi_);  // the frames, for the loop forces
  lambda_ = lambda0_;
  solve(t, qs_, us_, lambda_, Bias::yes, udot);
}

void Srm::constraint_operator(const VecX& q, const VecX& x, VecX& out) {
  solve(0.0, q, us_, x, Bias::no, udot_);  // −M⁻¹ Gᵀ x
  update_velocities(model_, aba_.kin, q, udot_);
  constraint_velocity(model_, cons_, aba_.kin, data_, udot_, out);  // −G M⁻¹ Gᵀ x
  out = -out;
}

Srm::Spectrum Srm::constraint_spectrum(const VecX& q) {
  const int m = cons_.rows();
  Spectrum out;
  if (m == 0) return out;
  aba_factor(model_, aba_, q);
  constraint_position(model_, cons_, aba_.kin, kWithoutDrives, data_, phi_);  // frames at q
  // Lanczos on G M⁻¹ Gᵀ from a start vector with a component along every eigenvector (almost
  // surely), stopped when both extreme Ritz values have settled; they bound ε and the convergence
  // check, so 1e-6 relative is ample. Without reorthogonalization copies of converged Ritz values
  // may appear, which leaves the extremes unchanged.
  VecX v(m), previous = VecX::Zero(m), w(m);
  for (int r = 0; r < m; ++r) v(r) = 1.0 + 0.5 * std::sin(1.0 + 3.0 * r);
  v.normalize();
  std::vector<double> diagonal, offdiagonal;
  double beta = 0.0;
  const int most = std::min(m, 600);
  for (int k = 0; k < most; ++k) {
    constraint_operator(q, v, w);
    const double alpha = v.dot(w);
    w -= alpha * v + beta * previous;
    diagonal.push_back(alpha);
    beta = w.norm();
    const bool exhausted = !(beta > 1e-12 * std::abs(diagonal.front()));
    if ((k + 1) % 10 == 0 || exhausted || k + 1 == most) {
      Eigen::SelfAdjointEigenSolver<MatX> ritz;
      ritz.computeFromTridiagonal(Eigen::Map<VecX>(diagonal.data(), k + 1),
                                  Eigen::Map<VecX>(offdiagonal.data(), k), Eigen::EigenvaluesOnly);
      const Spectrum next{ritz.eigenvalues()(0), ritz.eigenvalues()(k)};
      const bool settled = std::abs(next.largest - out.largest) <= 1e-6 * next.largest &&
                           std::abs(next.smallest - out.smallest) <= 1e-6 * next.largest;
      out = next;
      if (settled) break;
    }
    if (exhausted) break;
    offdiagonal.push_back(beta);
    previous = v;
    v = w / beta;
  }
  out.smallest = std::max(out.smallest, 0.0);
  return out;
}

void Srm::exact_multipliers(double t, const VecX& q, const VecX& u) {
  aba_factor(model_, aba_, q);
  aba_velocity(model_, aba_, q, u);
  constraint_bias(model_, cons_, aba_.kin, kWithoutDrives, data_, phi_);  // γ
  lambda_.setZero();
  solve(t, q, u, lambda_, Bias::yes, udot_);  // the tree's accelerations without the loops
  update_velocities(model_, aba_.kin, q, udot_);
  constraint_velocity(model_, cons_, aba_.kin, data_, udot_, cg_b_);
  cg_b_ -= phi_;  // G M⁻¹ Gᵀ λ = G u̇_tree − γ
  // Conjugate gradients on the symmetric positive semi-definite G M⁻¹ Gᵀ, from λ = 0. Rows that are
  // redundant at q make it singular; b is then in its range, and the iterates stay in it.
  cg_r_ = cg_b_;
  cg_p_ = cg_r_;
  double rr = cg_r_.squaredNorm();
  const double stop = 1e-26 * cg_b_.squaredNorm();
  for (int k = 0; k < 10 * cons_.rows() + 100 && rr > stop; ++k) {
    constraint_operator(q, cg_p_, cg_Ap_);
    const double pAp = cg_p_.dot(cg_Ap_);
    if (!(pAp > 0.0)) break;
    const double step = rr / pAp;
    lambda_ += step * cg_p_;
    cg_r_ -= step * cg_Ap_;
    const double rr_next = cg_r_.squaredNorm();
    cg_p_ = cg_r_ + (rr_next / rr) * cg_p_;
    rr = rr_next;
  }
}

}  // namespace loopdyn
