// Tests of the time integrators (src/run/integrators.cpp): convergence orders of RK2/RK4, error control
// and dense output of DOPRI5, exact output times, the post-step hook, failure reporting, names.
#include "loopdyn/run/integrators.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "test_support.hpp"

using namespace loopdyn;

namespace {

// x = [q, v], q'' = −ω² q with q(0) = 1, v(0) = 0: q = cos ωt, v = −ω sin ωt.
class Oscillator : public OdeSystem {
 public:
  explicit Oscillator(double omega) : w_(omega) {}
  int size() const override { return 2; }
  void rhs(double /*t*/, const VecX& x, VecX& dx) override {
    dx[0] = x[1];
    dx[1] = -w_ * w_ * x[0];
  }
  VecX exact(double t) const {
    VecX x(2);
    x << std::cos(w_ * t), -w_ * std::sin(w_ * t);
    return x;
  }
  VecX initial() const { return exact(0.0); }

 private:
  double w_;
};

struct Samples {
  std::vector<double> t;
  std::vector<VecX> x;
  IntegrationStats stats;
};

Samples run(OdeSystem& sys, const IntegratorSettings& s, double t0, const VecX& x0, const std::vector<double>& t_out) {
  Samples r;
  r.stats = integrate(sys, s, t0, x0, t_out, [&](double t, const VecX& x) {
    r.t.push_back(t);
    r.x.push_back(x);
  });
  return r;
}

IntegratorSettings fixed(IntegratorKind kind, double dt) {
  IntegratorSettings s;
  s.kind = kind;
  s.dt = dt;
  return s;
}

IntegratorSettings adaptive(double tol, double dt = 0.0) {
  IntegratorSettings s;
  s.kind = IntegratorKind::dopri5;
  s.rtol = tol;
  s.atol = tol;
  s.dt = dt;
  s.max_steps = 100'000;  // a broken controller fails fast instead of crawling (the tests need < 1000)
  return s;
}

// Largest ‖x(t_i) − exact(t_i)‖∞ over the reported points.
double max_error(const Samples& r, const Oscillator& osc) {
  double e = 0.0;
  for (std::size_t i = 0; i < r.t.size(); ++i) e = std::max(e, (r.x[i] - osc.exact(r.t[i])).lpNorm<Eigen::Infinity>());
  return e;
}

// Observed orders log2(e(dt)/e(dt/2)) for dt = 0.1, 0.05, 0.025, error measured at t = 1.0, 1.1, …, 2.0.
std::vector<double> observed_orders(IntegratorKind kind) {
  Oscillator osc(1.0);
  std::vector<double> t_out;
  for (int k = 10; k <= 20; ++k) t_out.push_back(0.1 * k);
  std::vector<double> err;
  for (double dt : {0.1, 0.05, 0.025}) {
    const Samples r = run(osc, fixed(kind, dt), 0.0, osc.initial(), t_out);
    EXPECT_EQ(r.t, t_out);
    // 2/dt steps exactly: landing on output times that are multiples of dt never adds a sliver.
    EXPECT_EQ(r.stats.steps_accepted, std::lround(2.0 / dt));
    err.push_back(max_error(r, osc));
  }
  return {std::log2(err[0] / err[1]), std::log2(err[1] / err[2])};
}

using loopdyn::test::fmt;

// Time after "t = " in an IntegrationError message (NaN when absent).
double time_in_message(const std::string& what) {
  const auto pos = what.find("t = ");
  return pos == std::string::npos ? std::nan("") : std::stod(what.substr(pos + 4));
}

}  // namespace

// ------------------------------------------------------------------------------------ names

TEST(Integrators, NamesRoundTrip) {
  for (IntegratorKind k : {IntegratorKind::rk2, IntegratorKind::rk4, IntegratorKind::dopri5, IntegratorKind::bdf}) {
    const auto parsed = parse_integrator(to_string(k));
    ASSERT_TRUE(parsed.has_value());
    EXPECT_EQ(*parsed, k);
  }
  EXPECT_EQ(to_string(IntegratorKind::rk2), "rk2");
  EXPECT_EQ(to_string(IntegratorKind::rk4), "rk4");
  EXPECT_EQ(to_string(IntegratorKind::dopri5), "dopri5");
  EXPECT_EQ(to_string(IntegratorKind::bdf), "bdf");
  EXPECT_FALSE(parse_integrator("euler").has_value());
  EXPECT_FALSE(parse_integrator("").has_value());
  EXPECT_FALSE(parse_integrator("rk45").has_value());
}

// ------------------------------------------------------------------------------------ bdf

namespace {

// Prothero and Robinson's stiff test: y' = −λ (y − cos t) − sin t, y(0) = 2, so that
// y = cos t + e^(−λt); with λ = 1e4 the transient dies within 1 ms and an explicit method's step
// stays bound by its stability (|h λ| below ~3.3 for dopri5) long after.
class ProtheroRobinson : public OdeSystem {
 public:
  explicit ProtheroRobinson(double lambda) : lambda_(lambda) {}
  int size() const override { return 1; }
  void rhs(double t, const VecX& x, VecX& dx) override { dx[0] = -lambda_ * (x[0] - std::cos(t)) - std::sin(t); }
  double exact(double t) const { return std::cos(t) + std::exp(-lambda_ * t); }

 private:
  double lambda_;
};

IntegratorSettings bdf(double tol) {
  IntegratorSettings s = adaptive(tol);
  s.kind = IntegratorKind::bdf;
  return s;
}

}  // namespace

TEST(Integrators, BdfHonoursToleranceOnAStiffProblem) {
  ProtheroRobinson p(1e4);
  std::vector<double> t_out;
  for (int k = 1; k <= 100; ++k) t_out.push_back(0.1 * k);
  double prev_error = 1.0;
  for (double tol : {1e-5, 1e-7, 1e-9}) {
    const Samples r = run(p, bdf(tol), 0.0, VecX::Constant(1, 2.0), t_out);
    ASSERT_EQ(r.t, t_out);
    double e = 0.0;  // at every output time: the dense output too
    for (std::size_t i = 0; i < r.t.size(); ++i) e = std::max(e, std::abs(r.x[i][0] - p.exact(r.t[i])));
    // As for dopri5 above: the tolerance bounds each step's local error; 100 tol leaves the
    // global error's accumulation over the steps a margin without being vacuous.
    EXPECT_LT(e, 100.0 * tol) << "tol " << tol;
    // Tolerance proportionality, the order an adaptive variable-order method owes its user: the
    // error falls like tol^p with p near 1 (measured 1.27 from 1e-5 to 1e-7, 0.82 from 1e-7 to
    // 1e-9); a controller that ignores the tolerance, or a lower-order error estimate, gives p far
    // below, and p above 1.5 would mean the error test is wasted effort.
    if (tol < 1e-5) {
      const double p = std::log10(prev_error / e) / 2.0;  // 100x tighter per round
      EXPECT_GT(p, 0.6) << "tol " << tol;
      EXPECT_LT(p, 1.5) << "tol " << tol;
    }
    prev_error = e;
    RecordProperty("bdf_error_tol_" + fmt(tol), fmt(e) + " steps " + std::to_string(r.stats.steps_accepted));
  }
}

// The step counts, not the time: dopri5 on the stiff problem takes steps of about 3.3/λ for the
// whole run, bdf follows the slow cos t once the transient is over.
TEST(Integrators, BdfTakesAFractionOfDopri5sStepsOnAStiffProblem) {
  ProtheroRobinson p(1e4);
  const Samples explicit_run = run(p, adaptive(1e-6), 0.0, VecX::Constant(1, 2.0), {10.0});
  const Samples implicit_run = run(p, bdf(1e-6), 0.0, VecX::Constant(1, 2.0), {10.0});
  for (const Samples* r : {&explicit_run, &implicit_run}) EXPECT_LT(std::abs(r->x[0][0] - p.exact(10.0)), 1e-4);
  EXPECT_GT(explicit_run.stats.steps_accepted, 20 * implicit_run.stats.steps_accepted)
      << explicit_run.stats.steps_accepted << " against " << implicit_run.stats.steps_accepted;
  RecordProperty("steps", std::to_string(explicit_run.stats.steps_accepted) + " dopri5, " +
                              std::to_string(implicit_run.stats.steps_accepted) + " bdf");
}

// What the system throws inside CVODE's callback comes out of integrate() as itself; a derivative
// that is not finite everywhere fails with the time, as the other integrators do.
TEST(Integrators, BdfPassesOnTheSystemsErrors) {
  class Throws : public OdeSystem {
   public:
    int size() const override { return 1; }
    void rhs(double t, const VecX& x, VecX& dx) override {
      if (t > 0.5) throw SingularConfigurationError("stop here");
      dx[0] = -x[0];
    }
  } throws;
  EXPECT_THROW(run(throws, bdf(1e-8), 0.0, VecX::Constant(1, 1.0), {1.0}), SingularConfigurationError);
  class Nan : public OdeSystem {
   public:
    int size() const override { return 1; }
    void rhs(double t, const VecX& x, VecX& dx) override { dx[0] = t > 0.5 ? std::nan("") : -x[0]; }
  } nan;
  try {
    run(nan, bdf(1e-8), 0.0, VecX::Constant(1, 1.0), {1.0});
    FAIL() << "no error";
  } catch (const IntegrationError& e) {
    EXPECT_NE(std::string(e.what()).find("non-finite state derivative"), std::string::npos) << e.what();
    // The first evaluation past 0.5 is a stage of the step that crosses it (steps of ~0.05 here).
    EXPECT_GT(time_in_message(e.what()), 0.5) << e.what();
    EXPECT_LT(time_in_message(e.what()), 0.6) << e.what();
  }
}

// ------------------------------------------------------------------------- fixed-step orders

TEST(Integrators, Rk4ConvergesWithOrderFour) {
  // dt ≤ 0.1 with ω = 1 is well inside the asymptotic range (ωdt ≤ 0.1, errors 1e-7…1e-10, far above
  // rounding), so the observed order deviates from 4 only by the O(dt) next term: ±0.2 is ample.
  const auto p = observed_orders(IntegratorKind::rk4);
  RecordProperty("rk4_orders", fmt(p[0]) + " " + fmt(p[1]));
  for (double o : p) {
    EXPECT_GE(o, 3.8);
    EXPECT_LE(o, 4.2);
  }
}

TEST(Integrators, Rk2ConvergesWithOrderTwo) {
  // Same argument as for RK4: errors 1e-3…1e-4, asymptotic, so ±0.2 around 2.
  const auto p = observed_orders(IntegratorKind::rk2);
  RecordProperty("rk2_orders", fmt(p[0]) + " " + fmt(p[1]));
  for (double o : p) {
    EXPECT_GE(o, 1.8);
    EXPECT_LE(o, 2.2);
  }
}

// --------------------------------------------------------------------------------- dopri5

TEST(Integrators, Dopri5HonoursTolerance) {
  Oscillator osc(1.0);
  double prev_error = 1.0;
  for (double tol : {1e-6, 1e-8, 1e-10}) {
    const Samples r = run(osc, adaptive(tol), 0.0, osc.initial(), {10.0});
    ASSERT_EQ(r.t.size(), 1u);
    EXPECT_EQ(r.t[0], 10.0);
    const double e = (r.x[0] - osc.exact(10.0)).lpNorm<Eigen::Infinity>();
    // The tolerance bounds the local error per step (scaled by atol + rtol·|x| ≤ 2·tol here); the
    // global error is the propagated sum over the steps (tens to hundreds up to t = 10, over about
    // 1.6 periods), so 100·tol leaves the expected accumulation a margin without being vacuous.
    EXPECT_LT(e, 100.0 * tol) << "tol " << tol;
    EXPECT_LT(e, prev_error) << "tol " << tol;  // tightening the tolerance reduces the error
    prev_error = e;
    EXPECT_GT(r.stats.steps_accepted, 0);
    EXPECT_GT(r.stats.rhs_evaluations, 6 * r.stats.steps_accepted);
    // Rejections are allowed but must be rare on this smooth problem.
    EXPECT_LT(r.stats.steps_rejected, r.stats.steps_accepted);
    RecordProperty("dopri5_error_tol_" + fmt(tol), fmt(e) + " steps " + std::to_string(r.stats.steps_accepted) + "+" + std::to_string(r.stats.steps_rejected) + " rhs " + std::to_string(r.stats.rhs_evaluations));
  }
}

TEST(Integrators, Dopri5DenseOutputIsAccurate) {
  Oscillator osc(1.0);
  // 997 output times at irregular spacing: almost all fall strictly inside steps.
  std::vector<double> t_out;
  for (int i = 0; i < 997; ++i) t_out.push_back(0.0137 + 0.01003 * i);
  for (double tol : {1e-6, 1e-8, 1e-10}) {
    const Samples r = run(osc, adaptive(tol), 0.0, osc.initial(), t_out);
    ASSERT_EQ(r.t, t_out);
    // Fewer steps than half the points (about 250 at tol = 1e-10): mostly served by dense output.
    EXPECT_LT(r.stats.steps_accepted, static_cast<long>(t_out.size() / 2));
    // The continuous extension has order 4 with local error of the size of the step's own local
    // error, so the same 100·tol bound as at the step points applies (linear interpolation would
    // miss it by orders of magnitude at tol = 1e-6: h²/8·|x''| ~ 1e-3).
    EXPECT_LT(max_error(r, osc), 100.0 * tol) << "tol " << tol;
    RecordProperty("dopri5_dense_error_tol_" + fmt(tol), fmt(max_error(r, osc)));
  }
}

TEST(Integrators, Dopri5StepsDoNotDependOnOutputTimes) {
  // Output times are served by dense output, so asking for many of them changes neither the steps
  // nor the final state (bitwise).
  Oscillator osc(2.0);
  std::vector<double> many;
  for (int i = 1; i <= 500; ++i) many.push_back(0.00731 * i);
  many.push_back(5.0);
  const Samples a = run(osc, adaptive(1e-9), 0.0, osc.initial(), {5.0});
  const Samples b = run(osc, adaptive(1e-9), 0.0, osc.initial(), many);
  EXPECT_EQ(a.stats.steps_accepted, b.stats.steps_accepted);
  EXPECT_EQ(a.stats.steps_rejected, b.stats.steps_rejected);
  EXPECT_EQ(a.stats.rhs_evaluations, b.stats.rhs_evaluations);
  EXPECT_EQ(a.x.back(), b.x.back());
}

namespace {
// x' = p·t^(p−1), x(0) = 0: x = t^p (a quadrature problem).
class Monomial : public OdeSystem {
 public:
  explicit Monomial(int p) : p_(p) {}
  int size() const override { return 1; }
  void rhs(double t, const VecX& /*x*/, VecX& dx) override { dx[0] = p_ * std::pow(t, p_ - 1); }

 private:
  int p_;
};
}  // namespace

TEST(Integrators, Dopri5IsExactForLowDegreePolynomials) {
  // Checks the tableau weights and the dense-output coefficients: the 5th-order step integrates
  // x = t⁵ exactly, and the order-4 continuous extension reproduces x = t⁴ exactly at any θ.
  // Only rounding remains: relative 1e-13 allows a few hundred ulps of accumulated sums.
  {
    Monomial m(5);
    const Samples r = run(m, adaptive(1e-6, 0.1), 0.0, VecX::Zero(1), {3.0});
    EXPECT_NEAR(r.x.back()[0], 243.0, 243.0 * 1e-13);
  }
  {
    Monomial m(4);
    std::vector<double> t_out;
    for (int i = 1; i <= 40; ++i) t_out.push_back(0.0773 * i);
    const Samples r = run(m, adaptive(1e-6, 0.1), 0.0, VecX::Zero(1), t_out);
    // The error estimate vanishes, so steps grow tenfold: most output times are inside steps.
    EXPECT_LT(r.stats.steps_accepted, 6);
    for (std::size_t i = 0; i < r.t.size(); ++i)
      EXPECT_NEAR(r.x[i][0], std::pow(r.t[i], 4), 1e-13 * std::max(1.0, std::pow(r.t[i], 4))) << r.t[i];
  }
}

TEST(Integrators, Dopri5AutomaticAndGivenInitialStep) {
  Oscillator osc(1.0);
  IntegratorSettings s = adaptive(1e-8);
  s.dt = 0.0;  // automatic (Hairer's starting step algorithm): costs one extra rhs evaluation
  const Samples a = run(osc, s, 0.0, osc.initial(), {1.0});
  s.dt = 1e-3;  // given first step
  const Samples b = run(osc, s, 0.0, osc.initial(), {1.0});
  for (const Samples* r : {&a, &b}) {
    // Bound as in Dopri5HonoursTolerance (accumulated local errors, shorter interval here).
    EXPECT_LT((r->x.back() - osc.exact(1.0)).lpNorm<Eigen::Infinity>(), 100.0 * 1e-8);
  }
  // FSAL: 6 evaluations per attempted step + the initial derivative (+ one for the starting step).
  EXPECT_EQ(a.stats.rhs_evaluations, 2 + 6 * (a.stats.steps_accepted + a.stats.steps_rejected));
  EXPECT_EQ(b.stats.rhs_evaluations, 1 + 6 * (b.stats.steps_accepted + b.stats.steps_rejected));
}

TEST(Integrators, Dopri5RespectsDtMax) {
  // With dt_max = 0.05 on [0, 2] at a loose tolerance the limit is active: at least 40 steps.
  Oscillator osc(1.0);
  IntegratorSettings s = adaptive(1e-4);
  s.dt_max = 0.05;
  const Samples r = run(osc, s, 0.0, osc.initial(), {2.0});
  EXPECT_GE(r.stats.steps_accepted, 40);
  EXPECT_LE(r.stats.steps_accepted, 41);
}

// ----------------------------------------------------------------------------- output times

TEST(Integrators, ReportsExactlyTheRequestedTimes) {
  Oscillator osc(1.0);
  const std::vector<double> t_out{0.0, 0.1, 0.35, 0.7, 1.234};
  for (IntegratorKind k : {IntegratorKind::rk2, IntegratorKind::rk4, IntegratorKind::dopri5, IntegratorKind::bdf}) {
    IntegratorSettings s = k == IntegratorKind::dopri5 ? adaptive(1e-10) : fixed(k, 0.1);
    const Samples r = run(osc, s, 0.0, osc.initial(), t_out);
    EXPECT_EQ(r.t, t_out) << to_string(k);  // exact double comparison
    EXPECT_EQ(r.x.front(), osc.initial()) << to_string(k);  // t0 reports x0 unchanged
  }
  // RK4 with dt = 0.1: steps 0→0.1 | 0.2, 0.3, 0.35 | 0.45, 0.55, 0.65, 0.7 | 0.8 … 1.2, 1.234.
  const Samples r = run(osc, fixed(IntegratorKind::rk4, 0.1), 0.0, osc.initial(), t_out);
  EXPECT_EQ(r.stats.steps_accepted, 14);
  EXPECT_EQ(r.stats.rhs_evaluations, 4 * 14);
  EXPECT_EQ(r.stats.steps_rejected, 0);
  // The shortened steps are genuine RK4 steps: global error of RK4 at dt = 0.1 over ~1 time unit
  // is ~(dt⁴/120)·t ≈ 1e-6; 1e-5 leaves margin while catching a missed or misplaced step.
  EXPECT_LT(max_error(r, osc), 1e-5);
}

TEST(Integrators, OutputTimesAfterT0AndDuplicates) {
  Oscillator osc(1.0);
  const std::vector<double> t_out{0.25, 0.25, 0.5, 1.0, 1.0};
  for (IntegratorKind k : {IntegratorKind::rk2, IntegratorKind::rk4, IntegratorKind::dopri5, IntegratorKind::bdf}) {
    IntegratorSettings s = k == IntegratorKind::dopri5 ? adaptive(1e-8) : fixed(k, 0.1);
    const Samples r = run(osc, s, 0.0, osc.initial(), t_out);
    EXPECT_EQ(r.t, t_out) << to_string(k);
    EXPECT_EQ(r.x[0], r.x[1]);
    EXPECT_EQ(r.x[3], r.x[4]);
  }
  // Nothing requested: nothing reported, no work. Only t0: x0 without stepping.
  const Samples none = run(osc, fixed(IntegratorKind::rk4, 0.1), 0.0, osc.initial(), {});
  EXPECT_TRUE(none.t.empty());
  EXPECT_EQ(none.stats.rhs_evaluations, 0);
  for (IntegratorKind k : {IntegratorKind::rk4, IntegratorKind::dopri5}) {
    IntegratorSettings s = k == IntegratorKind::dopri5 ? adaptive(1e-8) : fixed(k, 0.1);
    const Samples only = run(osc, s, 2.0, osc.initial(), {2.0});
    EXPECT_EQ(only.t, std::vector<double>{2.0});
    EXPECT_EQ(only.stats.steps_accepted, 0);
  }
}

TEST(Integrators, NoSliverSteps) {
  Oscillator osc(1.0);
  // Output times k·0.1 computed in floating point with dt = 0.01: exactly 10 steps between outputs.
  std::vector<double> t_out;
  for (int k = 0; k <= 10; ++k) t_out.push_back(k * 0.1);
  EXPECT_EQ(run(osc, fixed(IntegratorKind::rk4, 0.01), 0.0, osc.initial(), t_out).stats.steps_accepted, 100);
  // 1e-12 beyond three steps of 0.1 (below 1e-9·dt): the third step is stretched, no fourth step.
  EXPECT_EQ(run(osc, fixed(IntegratorKind::rk4, 0.1), 0.0, osc.initial(), {0.3 + 1e-12}).stats.steps_accepted, 3);
  // 1e-6 beyond (well above 1e-9·dt): a genuine short fourth step.
  EXPECT_EQ(run(osc, fixed(IntegratorKind::rk4, 0.1), 0.0, osc.initial(), {0.3 + 1e-6}).stats.steps_accepted, 4);
  // A long run with a non-representable dt lands on t = 10 after exactly 10/dt steps.
  const Samples r = run(osc, fixed(IntegratorKind::rk2, 0.001), 0.0, osc.initial(), {10.0});
  EXPECT_EQ(r.stats.steps_accepted, 10000);
  EXPECT_EQ(r.t, std::vector<double>{10.0});
}

// ------------------------------------------------------------------------------ post_step

namespace {
// Rotation with an outward drift, x' = J x + a x (r' = a r, angle' = 1); post_step projects x
// back onto the unit circle and counts the calls and actual changes.
class DriftingCircle : public OdeSystem {
 public:
  explicit DriftingCircle(double drift = 0.5) : a_(drift) {}
  int size() const override { return 2; }
  void rhs(double /*t*/, const VecX& x, VecX& dx) override {
    dx[0] = -x[1] + a_ * x[0];
    dx[1] = x[0] + a_ * x[1];
  }
  void post_step(double t, VecX& x) override {
    EXPECT_GT(t, last_t);  // called once per accepted step, in time order
    last_t = t;
    ++calls;
    const VecX before = x;
    x /= x.norm();
    if (x != before) ++changes;
  }
  long calls = 0, changes = 0;
  double last_t = -1.0;

 private:
  double a_;
};
}  // namespace

TEST(Integrators, PostStepModificationIsUsed) {
  std::vector<double> t_out;
  for (int k = 1; k <= 50; ++k) t_out.push_back(0.1 * k);
  VecX x0(2);
  x0 << 1.0, 0.0;
  {
    DriftingCircle sys;
    const Samples r = run(sys, fixed(IntegratorKind::rk4, 0.01), 0.0, x0, t_out);
    EXPECT_EQ(sys.calls, r.stats.steps_accepted);
    EXPECT_EQ(sys.last_t, 5.0);
    for (std::size_t i = 0; i < r.t.size(); ++i) {
      // Unprojected, |x| would be e^{0.5 t} ≈ 12 at t = 5. x/|x| has norm 1 up to a few ulps.
      EXPECT_NEAR(r.x[i].norm(), 1.0, 1e-14) << r.t[i];
      // The angle still advances as t (RK4 phase error O(t·dt⁴) ≲ 1e-9 here; bound 1e-7).
      EXPECT_NEAR(std::remainder(std::atan2(r.x[i][1], r.x[i][0]) - r.t[i], 2 * std::numbers::pi), 0.0, 1e-7);
    }
  }
  {
    DriftingCircle sys;
    IntegratorSettings s = adaptive(1e-10, 0.01);
    s.dt_max = 0.1;
    const Samples r = run(sys, s, 0.0, x0, t_out);
    EXPECT_EQ(sys.calls, r.stats.steps_accepted);
    EXPECT_EQ(sys.last_t, 5.0);
    // The last output lands on a step end, where the state is the projected one (x/|x|: few ulps).
    EXPECT_NEAR(r.x.back().norm(), 1.0, 1e-14);
    // Dense output inside a step interpolates the step itself, from the projected start to the
    // unprojected end, so |x| lies between 1 (up to the 1e-10 tolerance) and the physical drift
    // over one step, e^{0.5·dt_max}. (Norm-preserving systems — the use case — stay within ~tol.)
    for (const VecX& x : r.x) {
      EXPECT_GT(x.norm(), 1.0 - 1e-9);
      EXPECT_LT(x.norm(), std::exp(0.5 * s.dt_max));
    }
    // FSAL: every change made by post_step forces a fresh derivative at the projected state.
    EXPECT_GT(sys.changes, 0);
    EXPECT_EQ(r.stats.rhs_evaluations, 1 + 6 * (r.stats.steps_accepted + r.stats.steps_rejected) + sys.changes);
    EXPECT_NEAR(std::remainder(std::atan2(r.x.back()[1], r.x.back()[0]) - 5.0, 2 * std::numbers::pi), 0.0, 1e-8);
  }
  {
    // Norm-preserving rotation (drift only numerical, like quaternion normalization): dense points
    // stay on the circle to the accumulated tolerance (100·tol as in Dopri5HonoursTolerance).
    DriftingCircle sys(0.0);
    const Samples r = run(sys, adaptive(1e-10), 0.0, x0, t_out);
    EXPECT_NEAR(r.x.back().norm(), 1.0, 1e-14);
    for (const VecX& x : r.x) EXPECT_NEAR(x.norm(), 1.0, 1e-8);
  }
}

namespace {
// A right-hand side that depends on x only through its completion c(a, b) = (a, sin a), as a
// method's derivative depends on its state only through its closed loops: a' = 1 + 0.5 sin a,
// b' = cos a · a'. c is idempotent bit for bit, as a method's completion of a completed state is.
// post_step completes x; rhs_known says, when `keep` is set, whether x is the completion the last
// rhs() evaluated.
class CompletedCurve : public OdeSystem {
 public:
  explicit CompletedCurve(bool keep) : keep_(keep), completed_(2) {}
  int size() const override { return 2; }
  void rhs(double t, const VecX& x, VecX& dx) override {
    completed_ << x[0], std::sin(x[0]);
    t_ = t;
    dx[0] = 1.0 + 0.5 * completed_[1];
    dx[1] = std::cos(x[0]) * dx[0];
  }
  void post_step(double /*t*/, VecX& x) override {
    const double b = std::sin(x[0]);
    if (x[1] != b) ++changes;
    x[1] = b;
  }
  bool rhs_known(double t, const VecX& x) override { return keep_ && t == t_ && x == completed_; }
  long changes = 0;

 private:
  bool keep_;
  VecX completed_;
  double t_ = -1.0;
};
}  // namespace

TEST(Integrators, Dopri5KeepsTheLastStageWhenPostStepOnlyCompletedIt) {
  // The accepted state x_new is k7's stage state: post_step's completion of it is the state k7
  // was evaluated at, so k7 is f there and the refresh would repeat it bit for bit.
  std::vector<double> t_out;
  for (int k = 1; k <= 50; ++k) t_out.push_back(0.02 * k);
  VecX x0(2);
  x0 << 0.0, 0.0;
  CompletedCurve refreshed(false), kept(true);
  const Samples a = run(refreshed, adaptive(1e-10, 0.01), 0.0, x0, t_out);
  const Samples b = run(kept, adaptive(1e-10, 0.01), 0.0, x0, t_out);
  ASSERT_GT(refreshed.changes, 10);
  EXPECT_EQ(a.stats.rhs_evaluations,
            1 + 6 * (a.stats.steps_accepted + a.stats.steps_rejected) + refreshed.changes);
  EXPECT_EQ(b.stats.rhs_evaluations, 1 + 6 * (b.stats.steps_accepted + b.stats.steps_rejected));
  EXPECT_EQ(a.stats.steps_accepted, b.stats.steps_accepted);
  ASSERT_EQ(a.x.size(), b.x.size());
  for (std::size_t i = 0; i < a.x.size(); ++i) EXPECT_EQ(a.x[i], b.x[i]) << a.t[i];
  // And the motion is a' = 1 + 0.5 sin a: t(a) = (2/w)(atan((tan(a/2) + 0.5)/w) − atan(0.5/w)),
  // w = √0.75, for a < π. dopri5 at 1e-10 over 1 s: 1e-8 as in Dopri5HonoursTolerance.
  const double w = std::sqrt(0.75), a1 = b.x.back()[0];
  EXPECT_LT(a1, std::numbers::pi);
  EXPECT_NEAR(2.0 / w * (std::atan((std::tan(a1 / 2) + 0.5) / w) - std::atan(0.5 / w)), 1.0, 1e-8);
  EXPECT_EQ(b.x.back()[1], std::sin(a1));  // a step end: completed
}

// ---------------------------------------------------------------------------------- failures

namespace {
// Oscillator whose right-hand side turns into NaN after t = 0.5.
class NanAfterHalf : public Oscillator {
 public:
  NanAfterHalf() : Oscillator(1.0) {}
  void rhs(double t, const VecX& x, VecX& dx) override {
    Oscillator::rhs(t, x, dx);
    if (t > 0.5) dx[1] = std::nan("");
  }
};

// x' = x², x(0) = 1: x = 1/(1 − t) blows up at t = 1.
class BlowUp : public OdeSystem {
 public:
  int size() const override { return 1; }
  void rhs(double /*t*/, const VecX& x, VecX& dx) override { dx[0] = x[0] * x[0]; }
};
}  // namespace

TEST(Integrators, NanRhsThrowsWithTime) {
  for (IntegratorKind k : {IntegratorKind::rk2, IntegratorKind::rk4, IntegratorKind::dopri5, IntegratorKind::bdf}) {
    NanAfterHalf sys;
    IntegratorSettings s = k == IntegratorKind::dopri5 ? adaptive(1e-8) : fixed(k, 0.01);
    try {
      run(sys, s, 0.0, sys.initial(), {1.0});
      ADD_FAILURE() << "no exception for " << to_string(k);
    } catch (const IntegrationError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("t ="), std::string::npos) << what;
      EXPECT_NE(what.find("non-finite"), std::string::npos) << what;
      const double t = time_in_message(what);
      EXPECT_GT(t, 0.5) << what;  // the first stage time past 0.5, within one step
      EXPECT_LT(t, 1.0) << what;
    }
  }
}

TEST(Integrators, BlowUpThrowsNearSingularity) {
  for (IntegratorKind k : {IntegratorKind::rk4, IntegratorKind::dopri5}) {
    BlowUp sys;
    IntegratorSettings s = k == IntegratorKind::dopri5 ? adaptive(1e-8) : fixed(k, 1e-3);
    try {
      run(sys, s, 0.0, VecX::Ones(1), {2.0});
      ADD_FAILURE() << "no exception for " << to_string(k);
    } catch (const IntegrationError& e) {
      // dopri5 fails by step-size underflow or overflow right at the singularity; RK4 overflows
      // a little after it (its discrete solution blows up slightly later than t = 1).
      const double t = time_in_message(e.what());
      EXPECT_GT(t, 0.99) << e.what();
      EXPECT_LT(t, 1.1) << e.what();
    }
  }
}

TEST(Integrators, MaxStepsThrowsWithTime) {
  Oscillator osc(1.0);
  IntegratorSettings s = adaptive(1e-8, 1e-3);
  s.dt_max = 0.01;
  s.max_steps = 10;
  try {
    run(osc, s, 0.0, osc.initial(), {1.0});
    ADD_FAILURE() << "no exception";
  } catch (const IntegrationError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("maximum number of steps"), std::string::npos) << what;
    EXPECT_NE(what.find("t ="), std::string::npos) << what;
  }
}

// A fixed step knows its count before the first: more than max_steps is refused at once (dt =
// 1e-300 ran 1e8 steps, minutes, before the count stopped it).
TEST(Integrators, FixedStepsPastMaxStepsAreRefusedBeforeTheFirst) {
  Oscillator osc(1.0);
  IntegratorSettings s = fixed(IntegratorKind::rk4, 0.01);
  s.max_steps = 99;
  try {
    run(osc, s, 0.0, osc.initial(), {1.0});
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("integrate: `dt = 0.01`: rk4 takes more than the 99 steps a run may take over 1 s"),
              std::string::npos) << e.what();
  }
  s.max_steps = 100;
  EXPECT_NO_THROW(run(osc, s, 0.0, osc.initial(), {1.0}));
}

TEST(Integrators, InvalidArguments) {
  Oscillator osc(1.0);
  EXPECT_THROW(run(osc, fixed(IntegratorKind::rk4, 0.0), 0.0, osc.initial(), {1.0}), std::invalid_argument);
  EXPECT_THROW(run(osc, fixed(IntegratorKind::rk4, 0.1), 0.0, osc.initial(), {1.0, 0.5}), std::invalid_argument);
  EXPECT_THROW(run(osc, fixed(IntegratorKind::rk4, 0.1), 1.0, osc.initial(), {0.5}), std::invalid_argument);
  EXPECT_THROW(run(osc, fixed(IntegratorKind::rk4, 0.1), 0.0, VecX::Zero(3), {1.0}), std::invalid_argument);
  EXPECT_THROW(run(osc, adaptive(0.0), 0.0, osc.initial(), {1.0}), std::invalid_argument);
}

// ------------------------------------------------------------------------ no per-step malloc

#ifdef EIGEN_RUNTIME_NO_MALLOC
// Only when both integrators.cpp and this file are compiled with -DEIGEN_RUNTIME_NO_MALLOC (and
// without NDEBUG): Eigen then asserts on any heap allocation while it is forbidden. The work
// vectors are allocated before t0 is reported, so allocation is forbidden from there to the end.
TEST(Integrators, NoHeapAllocationPerStep) {
  for (IntegratorKind k : {IntegratorKind::rk2, IntegratorKind::rk4, IntegratorKind::dopri5, IntegratorKind::bdf}) {
    // DriftingCircle::post_step copies a VecX for its bookkeeping; this projection does not.
    struct Quiet : DriftingCircle {
      void post_step(double, VecX& x) override { x /= x.norm(); }
    } quiet;
    IntegratorSettings s = k == IntegratorKind::dopri5 ? adaptive(1e-9) : fixed(k, 0.01);
    const std::vector<double> t_out{0.0, 0.37, 1.0, 2.5};
    VecX x0(2);
    x0 << 1.0, 0.0;
    double sum = 0.0;
    integrate(quiet, s, 0.0, x0, t_out, [&](double t, const VecX& x) {
      Eigen::internal::set_is_malloc_allowed(t == t_out.back());
      sum += x[0];
    });
    EXPECT_TRUE(std::isfinite(sum));
  }
}
#endif
