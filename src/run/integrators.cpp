// Time integrators: fixed-step Heun (RK2) and classical RK4, adaptive Dormand–Prince 5(4), and
// the implicit BDF of SUNDIALS' CVODE for stiff systems.
//
// References: E. Hairer, S. P. Nørsett, G. Wanner, Solving Ordinary Differential Equations I,
// 2nd ed., Springer 1993 (HNW): Butcher tableau of DOPRI5 (Sect. II.5, Table 5.2), weighted error
// norm, step-size control and starting step size (Sect. II.4), continuous extension of DOPRI5
// (Sect. II.6, dense output of order 4); PI ("Lund") stabilisation of the step-size controller
// with the constants of Hairer's DOPRI5 code (Gustafsson; HNW vol. II, Sect. IV.2).
//
// BDF: CVODE (A. C. Hindmarsh et al., SUNDIALS: Suite of nonlinear and differential/algebraic
// equation solvers, ACM TOMS 31 (2005) 363-396; Debian's libsundials-dev 6.4): variable-order
// (1-5), variable-step backward differentiation formulas, Newton iterations with a dense
// difference-quotient Jacobian that CVODE reuses across steps, local error test against rtol and
// atol, interpolated output (CVodeGetDky). The joint-coordinate methods give it their ODE; it
// needs no Jacobian from them.
//
// All work vectors are allocated once per integrate() call; a step does no heap allocation
// (Eigen coefficient-wise expressions assigned into pre-sized vectors and O(1) swaps; CVODE's
// vectors and matrix are made once).
#include "loopdyn/run/integrators.hpp"

#include "loopdyn/core/names.hpp"

#include <cvode/cvode.h>
#include <nvector/nvector_serial.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <exception>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace loopdyn {

namespace {

constexpr std::array<std::pair<std::string_view, IntegratorKind>, 4> integrator_names{{
    {"rk2", IntegratorKind::rk2},
    {"rk4", IntegratorKind::rk4},
    {"dopri5", IntegratorKind::dopri5},
    {"bdf", IntegratorKind::bdf},
}};

// " at t = <time>" with enough digits to identify the double.
std::string at_time(double t) {
  char buf[64];
  std::snprintf(buf, sizeof buf, " at t = %.17g", t);
  return buf;
}

[[noreturn]] void fail(const std::string& what, double t) { throw IntegrationError(what + at_time(t)); }

// Shared state of one integrate() call: the system, the statistics and the output cursor.
class Driver {
 public:
  Driver(OdeSystem& system, const IntegratorSettings& settings, double t0, const VecX& x0,
         const std::vector<double>& t_out, const std::function<void(double, const VecX&)>& output)
      : sys_(system), set_(settings), t0_(t0), x0_(x0), t_out_(t_out), output_(output), n_(system.size()) {}

  IntegrationStats run() {
    validate();
    if (t_out_.empty()) return stats_;
    switch (set_.kind) {
      case IntegratorKind::rk2:
      case IntegratorKind::rk4:
        run_fixed();
        break;
      case IntegratorKind::dopri5:
        run_dopri5();
        break;
      case IntegratorKind::bdf:
        run_bdf();
        break;
    }
    return stats_;
  }

 private:
  OdeSystem& sys_;
  const IntegratorSettings& set_;
  double t0_;
  const VecX& x0_;
  const std::vector<double>& t_out_;
  const std::function<void(double, const VecX&)>& output_;
  int n_;
  IntegrationStats stats_;
  std::size_t next_out_ = 0;  // index of the first output time not yet reported

  void validate() const {
    if (n_ < 0) throw std::invalid_argument("integrate: system size is negative");
    if (x0_.size() != n_) throw std::invalid_argument("integrate: x0 size differs from system.size()");
    if (!std::isfinite(t0_)) throw std::invalid_argument("integrate: t0 is not finite");
    if (!x0_.allFinite()) fail("integrate: non-finite initial state", t0_);
    double prev = t0_;
    for (double t : t_out_) {
      if (!std::isfinite(t) || t < prev)
        throw std::invalid_argument("integrate: output times must be finite, sorted and >= t0");
      prev = t;
    }
    if (auto problem = integrator_problem(set_, t_out_.empty() ? 0.0 : t_out_.back() - t0_))
      throw std::invalid_argument("integrate: `" + problem->name + " = " + exact_number(problem->value) +
                                  "`: " + problem->rule);
  }

  // dx = f(t, x), counted and checked.
  void eval(double t, const VecX& x, VecX& dx) {
    sys_.rhs(t, x, dx);
    ++stats_.rhs_evaluations;
    if (dx.size() != n_) throw std::logic_error("OdeSystem::rhs changed the size of dx");
    if (!dx.allFinite()) fail("non-finite state derivative (a NaN or an infinity: check the applied forces and the state)", t);
  }

  // post_step hook on an accepted state; returns whether it changed x (compared with `copy`).
  bool post_step(double t, VecX& x, VecX& copy) {
    if (!x.allFinite()) fail("non-finite state", t);
    copy = x;
    sys_.post_step(t, x);
    if (x.size() != n_) throw std::logic_error("OdeSystem::post_step changed the size of x");
    if (!x.allFinite()) fail("non-finite state (after post_step)", t);
    return x != copy;
  }

  // Reports every pending output time <= t with state x.
  void emit_up_to(double t, const VecX& x) {
    while (next_out_ < t_out_.size() && t_out_[next_out_] <= t) output_(t_out_[next_out_++], x);
  }

  void check_step_budget(double t) const {
    if (stats_.steps_accepted + stats_.steps_rejected >= set_.max_steps)
      fail("maximum number of steps (" + std::to_string(set_.max_steps) + ") exceeded", t);
  }

  // ---------------------------------------------------------------- fixed step (rk2, rk4)
  void run_fixed() {
    VecX x = x0_, k1(n_), k2(n_), k3(n_), k4(n_), xs(n_), copy(n_);
    const double dt = set_.dt;
    const bool rk4 = set_.kind == IntegratorKind::rk4;
    double t = t0_;
    emit_up_to(t, x);  // output times equal to t0 report x0 without stepping
    // Times are t_seg + k·dt from the last output time landed on (no accumulation of rounding).
    double t_seg = t0_;
    long k = 0;
    while (next_out_ < t_out_.size()) {
      const double target = t_out_[next_out_];
      const double t_full = t_seg + static_cast<double>(k + 1) * dt;
      // Land on the output time if a full step reaches it or falls short by < 1e-9·dt (no sliver).
      const bool land = target - t_full < 1e-9 * dt;
      const double t_new = land ? target : t_full;
      const double h = t_new - t;
      check_step_budget(t);
      if (rk4) {
        // Classical RK4: k1 = f(t, x), k2 = f(t + h/2, x + h/2 k1), k3 = f(t + h/2, x + h/2 k2),
        // k4 = f(t + h, x + h k3), x ← x + h/6 (k1 + 2 k2 + 2 k3 + k4).
        eval(t, x, k1);
        xs = x + (0.5 * h) * k1;
        eval(t + 0.5 * h, xs, k2);
        xs = x + (0.5 * h) * k2;
        eval(t + 0.5 * h, xs, k3);
        xs = x + h * k3;
        eval(t_new, xs, k4);
        x += (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4);
      } else {
        // Heun (explicit trapezoidal): k1 = f(t, x), k2 = f(t + h, x + h k1), x ← x + h/2 (k1 + k2).
        eval(t, x, k1);
        xs = x + h * k1;
        eval(t_new, xs, k2);
        x += (0.5 * h) * (k1 + k2);
      }
      t = t_new;
      ++stats_.steps_accepted;
      if (land) {
        t_seg = target;
        k = 0;
      } else {
        ++k;
      }
      post_step(t, x, copy);
      emit_up_to(t, x);
    }
  }

  // ---------------------------------------------------------------- Dormand–Prince 5(4)
  // Butcher tableau of DOPRI5 (HNW Table II.5.2); the 5th-order weights b equal row 7 of a (FSAL).
  static constexpr double c2 = 1.0 / 5, c3 = 3.0 / 10, c4 = 4.0 / 5, c5 = 8.0 / 9;
  static constexpr double a21 = 1.0 / 5;
  static constexpr double a31 = 3.0 / 40, a32 = 9.0 / 40;
  static constexpr double a41 = 44.0 / 45, a42 = -56.0 / 15, a43 = 32.0 / 9;
  static constexpr double a51 = 19372.0 / 6561, a52 = -25360.0 / 2187, a53 = 64448.0 / 6561,
                          a54 = -212.0 / 729;
  static constexpr double a61 = 9017.0 / 3168, a62 = -355.0 / 33, a63 = 46732.0 / 5247, a64 = 49.0 / 176,
                          a65 = -5103.0 / 18656;
  static constexpr double a71 = 35.0 / 384, a73 = 500.0 / 1113, a74 = 125.0 / 192, a75 = -2187.0 / 6784,
                          a76 = 11.0 / 84;
  // Error weights e = b(5th order) − b̂(4th order) (HNW Table II.5.2).
  static constexpr double e1 = 71.0 / 57600, e3 = -71.0 / 16695, e4 = 71.0 / 1920, e5 = -17253.0 / 339200,
                          e6 = 22.0 / 525, e7 = -1.0 / 40;
  // Continuous extension of order 4 (HNW II.6, Shampine's coefficients as in Hairer's DOPRI5).
  static constexpr double d1 = -12715105075.0 / 11282082432, d3 = 87487479700.0 / 32700410799,
                          d4 = -10690763975.0 / 1880347072, d5 = 701980252875.0 / 199316789632,
                          d6 = -1453857185.0 / 822651844, d7 = 69997945.0 / 29380423;

  // Weighted RMS norm sqrt(1/n Σ (v_i / (atol + rtol·max(|a_i|, |b_i|)))²) (HNW Sect. II.4).
  // A zero scale (atol = 0 and a zero component) counts 0 for a zero v_i, +inf otherwise.
  double wrms(const VecX& v, const VecX& a, const VecX& b) const {
    if (n_ == 0) return 0.0;
    double sum = 0.0;
    for (int i = 0; i < n_; ++i) {
      const double sk = set_.atol + set_.rtol * std::max(std::abs(a[i]), std::abs(b[i]));
      if (v[i] == 0.0) continue;
      if (sk <= 0.0) return std::numeric_limits<double>::infinity();
      const double r = v[i] / sk;
      sum += r * r;
    }
    return std::sqrt(sum / n_);
  }

  // Starting step size (HNW II.4, "Starting Step Size", algorithm of Hairer's DOPRI5 for p = 5):
  // h0 = 0.01·‖x0‖/‖f0‖, one Euler step to estimate ‖f'‖, h1 = (0.01 / max(‖f'‖, ‖f0‖))^(1/5),
  // h = min(100 h0, h1, hmax). Uses xs and f1 as scratch.
  double initial_step(double t, const VecX& x, const VecX& f0, VecX& xs, VecX& f1, double hmax) {
    const double dnf = wrms(f0, x, x);
    const double dny = wrms(x, x, x);
    double h = (dnf > 1e-5 && dny > 1e-5 && std::isfinite(dnf) && std::isfinite(dny)) ? 0.01 * dny / dnf : 1e-6;
    h = std::min(h, hmax);
    xs = x + h * f0;
    eval(t + h, xs, f1);
    f1 -= f0;  // f1 ← f(t + h, x + h f0) − f0
    const double der2 = wrms(f1, x, x) / h;
    const double der12 = std::max(der2, dnf);
    const double h1 = (der12 <= 1e-15 || !std::isfinite(der12)) ? std::max(1e-6, h * 1e-3)
                                                                 : std::pow(0.01 / der12, 1.0 / 5.0);
    return std::min({100.0 * h, h1, hmax});
  }

  void run_dopri5() {
    VecX x = x0_, x_new(n_), xs(n_), err(n_), copy(n_);
    VecX k1(n_), k2(n_), k3(n_), k4(n_), k5(n_), k6(n_), k7(n_);
    VecX r2(n_), r3(n_), r4(n_), r5(n_), xd(n_);  // dense output coefficients and value
    double t = t0_;
    const double t_end = t_out_.back();
    emit_up_to(t, x);
    if (next_out_ == t_out_.size()) return;

    constexpr double safe = 0.9;
    constexpr double fac_min = 0.2, fac_max = 10.0;  // 0.2 <= h_new / h <= 10
    constexpr double beta = 0.04;                    // PI stabilisation (Hairer's DOPRI5 default)
    constexpr double expo1 = 0.2 - beta * 0.75;      // α = 1/5 − 0.75 β
    double fac_old = 1e-4;                           // err of the previous accepted step
    bool reject = false;

    eval(t, x, k1);
    const double hmax = std::min(set_.dt_max, t_end - t);
    double h = set_.dt > 0.0 ? std::min(set_.dt, hmax) : initial_step(t, x, k1, xs, k2, hmax);

    while (t < t_end) {
      check_step_budget(t);
      // A step the system shortens (ahead of a change point) says nothing about the step the
      // error allows: the controller keeps its own proposal for the steps after it. Without this,
      // a rejected straddling step was followed by ever shorter placed steps that crept towards
      // the change point, their stages where the derivative is noisiest (on A02 with N = 40 at
      // 1e-10 the energy jumped at each crossing and B0 ended 1.4e-6 m off instead of 3e-7).
      const double h_controller = h;
      h = std::min(h, sys_.adjust_step(t, h));
      const bool placed = h < h_controller;
      // Last step: stretch by up to 1 % or shorten so that it lands exactly on t_end.
      const bool last = t + 1.01 * h >= t_end;
      // Underflow of the controller's step (a short last step bounded by t_end − t is legitimate).
      if (!last && !(h >= 1e-14 * std::max(1.0, std::abs(t)))) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.3g", h);
        fail(std::string("dopri5: step size underflow (h = ") + buf + ")", t);
      }
      if (last) h = t_end - t;
      const double t_new = last ? t_end : t + h;

      // Stages k_i = f(t + c_i h, x + h Σ_j a_ij k_j); k1 is the FSAL derivative.
      xs = x + (h * a21) * k1;
      eval(t + c2 * h, xs, k2);
      xs = x + h * (a31 * k1 + a32 * k2);
      eval(t + c3 * h, xs, k3);
      xs = x + h * (a41 * k1 + a42 * k2 + a43 * k3);
      eval(t + c4 * h, xs, k4);
      xs = x + h * (a51 * k1 + a52 * k2 + a53 * k3 + a54 * k4);
      eval(t + c5 * h, xs, k5);
      xs = x + h * (a61 * k1 + a62 * k2 + a63 * k3 + a64 * k4 + a65 * k5);
      eval(t_new, xs, k6);
      // 5th-order solution x_new = x + h Σ b_i k_i, then k7 = f(t + h, x_new) (FSAL).
      x_new = x + h * (a71 * k1 + a73 * k3 + a74 * k4 + a75 * k5 + a76 * k6);
      if (!x_new.allFinite()) fail("non-finite state", t_new);
      eval(t_new, x_new, k7);
      // Local error estimate err = h Σ e_i k_i; err_norm = RMS(err_i / (atol + rtol max(|x_i|, |x_new_i|))).
      err = h * (e1 * k1 + e3 * k3 + e4 * k4 + e5 * k5 + e6 * k6 + e7 * k7);
      const double err_norm = wrms(err, x, x_new);

      // PI controller (Hairer's DOPRI5): fac = err^α / err_old^β, h_new = h · clamp(safe / fac).
      const double fac11 = std::pow(err_norm, expo1);
      double fac = fac11 / std::pow(fac_old, beta);
      fac = std::clamp(fac / safe, 1.0 / fac_max, 1.0 / fac_min);
      double h_new = h / fac;

      if (err_norm <= 1.0) {
        ++stats_.steps_accepted;
        fac_old = std::max(err_norm, 1e-4);
        // Output times strictly inside the step from the continuous extension (HNW II.6):
        // x(t + θh) = x + θ(r2 + (1−θ)(r3 + θ(r4 + (1−θ) r5))), r2 = x_new − x, r3 = h k1 − r2,
        // r4 = r2 − h k7 − r3, r5 = h Σ d_i k_i. Interpolates the step itself (before post_step),
        // but written after it: post_step finds the system as k7's evaluation left it
        // (a method's completion of x_new stands), and a stop there still writes them.
        const bool inside = next_out_ < t_out_.size() && t_out_[next_out_] < t_new;
        if (inside) {
          r2 = x_new - x;
          r3 = h * k1 - r2;
          r4 = r2 - h * k7 - r3;
          r5 = h * (d1 * k1 + d3 * k3 + d4 * k4 + d5 * k5 + d6 * k6 + d7 * k7);
        }
        const double t_old = t;
        const auto emit_inside = [&] {  // x_new holds the step's start here
          while (inside && next_out_ < t_out_.size() && t_out_[next_out_] < t_new) {
            const double th = (t_out_[next_out_] - t_old) / h, th1 = 1.0 - th;
            xd = x_new + th * (r2 + th1 * (r3 + th * (r4 + th1 * r5)));
            output_(t_out_[next_out_++], xd);
          }
        };
        t = t_new;
        x.swap(x_new);
        k1.swap(k7);  // FSAL: f(t_new, x_new) is the first stage of the next step
        bool moved = false;
        try {
          moved = post_step(t, x, copy);
        } catch (...) {
          emit_inside();
          throw;
        }
        // post_step moved x: refresh the FSAL derivative, unless it only completed x_new as k7's
        // evaluation did (OdeSystem::rhs_known), where k7 is f(t, x) already.
        if (moved && !sys_.rhs_known(t, x)) eval(t, x, k1);
        emit_inside();
        emit_up_to(t, x);

        if (placed) h_new = std::max(h_new, h_controller);
        h_new = std::min(h_new, set_.dt_max);
        if (reject) h_new = std::min(h_new, placed ? h_controller : h);  // no growth right after a rejection
        reject = false;
      } else {
        // Rejected: shrink without the PI term, h_new = h / min(1/fac_min, err^α / safe).
        ++stats_.steps_rejected;
        h_new = h / std::min(1.0 / fac_min, fac11 / safe);
        reject = true;
      }
      h = h_new;
    }
  }

  // ---------------------------------------------------------------- BDF (CVODE)
  // CVODE's objects, released on every path.
  struct Cvode {
    SUNContext context = nullptr;
    N_Vector y = nullptr, dky = nullptr;
    SUNMatrix jacobian = nullptr;
    SUNLinearSolver solver = nullptr;
    void* memory = nullptr;
    ~Cvode() {
      if (memory) CVodeFree(&memory);
      if (solver) SUNLinSolFree(solver);
      if (jacobian) SUNMatDestroy(jacobian);
      if (dky) N_VDestroy(dky);
      if (y) N_VDestroy(y);
      if (context) SUNContext_Free(&context);
    }
  };
  VecX bdf_x_, bdf_dx_;               // the callback's copies of CVODE's vectors
  std::exception_ptr bdf_error_;      // what the system threw inside a CVODE callback
  std::string bdf_message_;           // CVODE's own message of its last error

  // f(t, y) for CVODE, counted and checked as eval() does. What it throws (a non-finite
  // derivative too, as for the other integrators: retrying shorter steps would only creep up to
  // the time it appears) stops CVODE and is rethrown once CVODE returns: no exception may cross
  // its C frames.
  static int bdf_rhs(double t, N_Vector y, N_Vector ydot, void* data) {
    Driver& d = *static_cast<Driver*>(data);
    try {
      d.bdf_x_ = Eigen::Map<const VecX>(N_VGetArrayPointer(y), d.n_);
      d.eval(t, d.bdf_x_, d.bdf_dx_);
      Eigen::Map<VecX>(N_VGetArrayPointer(ydot), d.n_) = d.bdf_dx_;
      return 0;
    } catch (...) {
      d.bdf_error_ = std::current_exception();
      return -1;
    }
  }

  static void bdf_message(int /*code*/, const char* /*module*/, const char* /*function*/, char* message,
                          void* data) {
    static_cast<Driver*>(data)->bdf_message_ = message;  // reported by fail(), not on stderr
  }

  void bdf_check(int flag, const char* call, double t) {
    if (bdf_error_) std::rethrow_exception(bdf_error_);
    if (flag < 0)
      fail(std::string("bdf: ") + call + " failed (" + CVodeGetReturnFlagName(flag) + ")" +
               (bdf_message_.empty() ? "" : ": " + bdf_message_),
           t);
  }

  void run_bdf() {
    VecX x = x0_, xd(n_), copy(n_);
    double t = t0_;
    const double t_end = t_out_.back();
    emit_up_to(t, x);
    if (next_out_ == t_out_.size()) return;
    if (n_ == 0) {  // nothing moves: every output time holds the empty state
      emit_up_to(t_end, x);
      return;
    }
    bdf_x_.resize(n_);
    bdf_dx_.resize(n_);
    Cvode c;
    if (SUNContext_Create(nullptr, &c.context) != 0) throw std::bad_alloc();
    c.y = N_VNew_Serial(n_, c.context);
    c.dky = N_VNew_Serial(n_, c.context);
    c.jacobian = SUNDenseMatrix(n_, n_, c.context);
    c.memory = CVodeCreate(CV_BDF, c.context);
    if (!c.y || !c.dky || !c.jacobian || !c.memory) throw std::bad_alloc();
    c.solver = SUNLinSol_Dense(c.y, c.jacobian, c.context);
    if (!c.solver) throw std::bad_alloc();
    Eigen::Map<VecX> y(N_VGetArrayPointer(c.y), n_), dky(N_VGetArrayPointer(c.dky), n_);
    y = x;
    bdf_check(CVodeSetErrHandlerFn(c.memory, bdf_message, this), "CVodeSetErrHandlerFn", t);
    bdf_check(CVodeInit(c.memory, bdf_rhs, t, c.y), "CVodeInit", t);
    bdf_check(CVodeSetUserData(c.memory, this), "CVodeSetUserData", t);
    bdf_check(CVodeSStolerances(c.memory, set_.rtol, set_.atol), "CVodeSStolerances", t);
    bdf_check(CVodeSetLinearSolver(c.memory, c.solver, c.jacobian), "CVodeSetLinearSolver", t);
    bdf_check(CVodeSetMaxNumSteps(c.memory, set_.max_steps), "CVodeSetMaxNumSteps", t);
    if (std::isfinite(set_.dt_max)) bdf_check(CVodeSetMaxStep(c.memory, set_.dt_max), "CVodeSetMaxStep", t);
    if (set_.dt > 0.0) bdf_check(CVodeSetInitStep(c.memory, std::min(set_.dt, t_end - t)), "CVodeSetInitStep", t);

    while (t < t_end) {
      check_step_budget(t);
      // Ahead of a change point the system asks for a shorter step: the step ends there.
      double h = 0.0;
      CVodeGetCurrentStep(c.memory, &h);
      const double shorter = h > 0.0 ? sys_.adjust_step(t, h) : h;
      const double stop = shorter > 0.0 && shorter < h ? std::min(t_end, t + shorter) : t_end;
      bdf_check(CVodeSetStopTime(c.memory, stop), "CVodeSetStopTime", t);
      double t_new = t;
      bdf_check(CVode(c.memory, t_end, c.y, &t_new, CV_ONE_STEP), "CVode", t);
      ++stats_.steps_accepted;
      long error_tests = 0, convergence = 0;
      CVodeGetNumErrTestFails(c.memory, &error_tests);
      CVodeGetNumNonlinSolvConvFails(c.memory, &convergence);
      stats_.steps_rejected = error_tests + convergence;
      // Output times inside the step from CVODE's interpolating polynomial of the step.
      while (next_out_ < t_out_.size() && t_out_[next_out_] < t_new) {
        bdf_check(CVodeGetDky(c.memory, t_out_[next_out_], 0, c.dky), "CVodeGetDky", t_new);
        xd = dky;
        output_(t_out_[next_out_++], xd);
      }
      t = t_new;
      x = y;
      // The hook's changes (a completion of dependent coordinates, a normalized quaternion, a
      // projection) are the system's view of the step: CVODE keeps its own state and history,
      // which a restart would cut back to order 1 at every step. The methods complete the state at
      // every evaluation, so CVODE's dependent components steer nothing; they stay within its
      // error control like the others.
      post_step(t, x, copy);
      emit_up_to(t, x);
    }
  }
};

}  // namespace

std::optional<SettingProblem> integrator_problem(const IntegratorSettings& s, double span) {
  const std::string integrator(to_string(s.kind));
  if (s.max_steps <= 0) return SettingProblem{"max_steps", static_cast<double>(s.max_steps), "must be positive"};
  if (error_controlled(s.kind)) {
    if (!(s.rtol >= 0.0) || !std::isfinite(s.rtol)) return SettingProblem{"rtol", s.rtol, "must be a finite number >= 0"};
    if (!(s.atol >= 0.0) || !std::isfinite(s.atol)) return SettingProblem{"atol", s.atol, "must be a finite number >= 0"};
    if (!(s.rtol + s.atol > 0.0)) return SettingProblem{"rtol", s.rtol, integrator + " needs `rtol` or `atol` above 0"};
    // Hairer's codes refuse rtol <= 10 ε, SciPy raises it to 100 ε: below, a step's own round-off
    // outweighs the error allowed and the step size shrinks to underflow (rtol 1e-20 did, at t = 0).
    if (s.rtol > 0.0 && s.rtol < kSmallestRtol)
      return SettingProblem{"rtol", s.rtol,
                            "below " + short_number(kSmallestRtol) + " (100 x the double precision) no step of " +
                                integrator + " can meet it: its own round-off is larger"};
    if (std::isnan(s.dt)) return SettingProblem{"dt", s.dt, "the initial step must be a number (<= 0: automatic)"};
    if (!(s.dt_max > 0.0)) return SettingProblem{"dt_max", s.dt_max, "the largest step must be > 0"};
    return std::nullopt;
  }
  if (!(s.dt > 0.0) || !std::isfinite(s.dt)) return SettingProblem{"dt", s.dt, integrator + " needs a finite step > 0"};
  // Refused before the first step: --dt 1e-300 ran until max_steps, 1e8 steps later.
  if (span / s.dt > static_cast<double>(s.max_steps))
    return SettingProblem{"dt", s.dt,
                          integrator + " takes more than the " + short_number(static_cast<double>(s.max_steps)) +
                              " steps a run may take over " + exact_number(span) + " s: a larger `dt`"};
  return std::nullopt;
}

std::optional<IntegratorKind> parse_integrator(std::string_view name) {
  for (const auto& [text, kind] : integrator_names)
    if (text == name) return kind;
  return std::nullopt;
}

std::string_view to_string(IntegratorKind kind) {
  for (const auto& [text, k] : integrator_names)
    if (k == kind) return text;
  return "?";
}

StepPlan step_plan(const IntegratorSettings& settings) {
  StepPlan plan;
  plan.integrator = to_string(settings.kind);
  plan.fixed_step = !error_controlled(settings.kind);
  plan.step = settings.dt;
  plan.stability_limit = settings.kind == IntegratorKind::rk2 ? 2.0 : 2.785;
  return plan;
}

IntegrationStats integrate(OdeSystem& system, const IntegratorSettings& settings, double t0, const VecX& x0,
                           const std::vector<double>& t_out,
                           const std::function<void(double t, const VecX& x)>& output) {
  return Driver(system, settings, t0, x0, t_out, output).run();
}

}  // namespace loopdyn
