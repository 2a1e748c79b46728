// Functions of time (time_function.hpp).
#include "loopdyn/core/time_function.hpp"

#include "loopdyn/core/names.hpp"

#include <muParser.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <numbers>
#include <sstream>
#include <vector>
#include <stdexcept>
#include <string_view>

namespace loopdyn {

struct TimeFunction::Kind {
  virtual ~Kind() = default;
  virtual TimeValue at(double t) const = 0;
  virtual std::string describe() const = 0;
  virtual TimeFunction::Form form() const = 0;
  virtual double first_time() const { return -INFINITY; }
  virtual double last_time() const { return INFINITY; }
};

namespace {

std::string number(double x) {
  std::ostringstream s;
  s << x;
  return s.str();
}


struct Polynomial final : TimeFunction::Kind {
  std::vector<double> c;  // Σ c_k t^k
  explicit Polynomial(std::vector<double> coefficients) : c(std::move(coefficients)) {}
  TimeValue at(double t) const override {
    // Horner for f, f' and f'' together.
    TimeValue v;
    for (auto k = c.size(); k-- > 0;) {
      v.acceleration = v.acceleration * t + 2.0 * v.rate;
      v.rate = v.rate * t + v.value;
      v.value = v.value * t + c[k];
    }
    return v;
  }
  TimeFunction::Form form() const override { return {"polynomial", c, {}}; }
  std::string describe() const override {
    if (c.size() == 1) return "constant " + number(c[0]);
    std::string s = "polynomial " + number(c[0]);
    for (std::size_t k = 1; k < c.size(); ++k) {
      s.append(c[k] < 0 ? " - " : " + ").append(number(std::abs(c[k]))).append(" t");
      if (k > 1) s.append("^").append(std::to_string(k));
    }
    return s;
  }
};

struct Sine final : TimeFunction::Kind {
  double amplitude, omega, phase, offset;
  Sine(double a, double frequency, double p, double o)
      : amplitude(a), omega(2.0 * std::numbers::pi * frequency), phase(p), offset(o) {}
  TimeValue at(double t) const override {
    const double s = std::sin(omega * t + phase), c = std::cos(omega * t + phase);
    return {offset + amplitude * s, amplitude * omega * c, -amplitude * omega * omega * s};
  }
  TimeFunction::Form form() const override {
    return {"sine", {amplitude, omega / (2.0 * std::numbers::pi), phase, offset}, {}};
  }
  std::string describe() const override {
    return "sine " + number(offset) + " + " + number(amplitude) + " sin(2π " + number(omega / (2.0 * std::numbers::pi)) +
           " t + " + number(phase) + ")";
  }
};

// Natural cubic spline: second derivatives m_i at the knots from the tridiagonal system
// h_{i−1} m_{i−1} + 2 (h_{i−1} + h_i) m_i + h_i m_{i+1} = 6 (s_i − s_{i−1}), m_0 = m_n = 0,
// with h_i = t_{i+1} − t_i and slopes s_i = (f_{i+1} − f_i) / h_i (Thomas algorithm).
struct Table final : TimeFunction::Kind {
  std::vector<double> t, f, m;
  Table(std::vector<double> times, std::vector<double> values) : t(std::move(times)), f(std::move(values)) {
    const std::size_t n = t.size();
    m.assign(n, 0.0);
    if (n < 3) return;
    std::vector<double> diag(n, 1.0), upper(n, 0.0), rhs(n, 0.0);
    for (std::size_t i = 1; i + 1 < n; ++i) {
      const double h0 = t[i] - t[i - 1], h1 = t[i + 1] - t[i];
      const double lower = h0;
      diag[i] = 2.0 * (h0 + h1);
      upper[i] = h1;
      rhs[i] = 6.0 * ((f[i + 1] - f[i]) / h1 - (f[i] - f[i - 1]) / h0);
      // Eliminate the lower entry with row i − 1 (row 0 is m_0 = 0).
      const double w = lower / diag[i - 1];
      diag[i] -= w * upper[i - 1];
      rhs[i] -= w * rhs[i - 1];
    }
    for (std::size_t i = n - 1; i-- > 1;) m[i] = (rhs[i] - upper[i] * m[i + 1]) / diag[i];
  }
  TimeValue at(double x) const override {
    if (!(x >= t.front() && x <= t.back())) {
      std::ostringstream s;
      s << "t = " << exact_number(x) << " s is outside the table's times [" << exact_number(t.front()) << ", "
        << exact_number(t.back()) << "] s";
      throw std::runtime_error(s.str());
    }
    const std::size_t i = std::min<std::size_t>(std::upper_bound(t.begin(), t.end(), x) - t.begin(), t.size() - 1) - 1;
    const double h = t[i + 1] - t[i], a = t[i + 1] - x, b = x - t[i];
    TimeValue v;
    v.value = (m[i] * a * a * a + m[i + 1] * b * b * b) / (6.0 * h) + (f[i] / h - m[i] * h / 6.0) * a +
              (f[i + 1] / h - m[i + 1] * h / 6.0) * b;
    v.rate = (-m[i] * a * a + m[i + 1] * b * b) / (2.0 * h) + (f[i + 1] - f[i]) / h - (m[i + 1] - m[i]) * h / 6.0;
    v.acceleration = (m[i] * a + m[i + 1] * b) / h;
    return v;
  }
  TimeFunction::Form form() const override {
    TimeFunction::Form out{"table", {}, {}};
    for (std::size_t i = 0; i < t.size(); ++i) out.numbers.insert(out.numbers.end(), {t[i], f[i]});
    return out;
  }
  double first_time() const override { return t.front(); }
  double last_time() const override { return t.back(); }
  std::string describe() const override {
    return "table of " + std::to_string(t.size()) + " points on [" + number(t.front()) + ", " + number(t.back()) +
           "] s (natural cubic spline)";
  }
};

// Whether text holds an assignment: an '=' that is not part of ==, <=, >= or !=.
bool assigns(const std::string& text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '=') continue;
    const bool comparison = (i > 0 && std::string_view("=<>!").find(text[i - 1]) != std::string_view::npos) ||
                            (i + 1 < text.size() && text[i + 1] == '=');
    if (!comparison) return true;
  }
  return false;
}

// muParser evaluates through a bound variable and an internal stack: one evaluation at a time.
struct Expression final : TimeFunction::Kind {
  std::string text[3];
  mutable mu::Parser parser[3];
  mutable double t_ = 0.0;
  mutable std::mutex mutex;
  bool exact[3] = {true, false, false};

  Expression(const std::string& value, const std::string& rate, const std::string& acceleration)
      : text{value, rate, acceleration} {
    static const char* const what[3] = {"expression", "rate", "acceleration"};
    for (int k = 0; k < 3; ++k) {
      if (k > 0 && text[k].empty()) continue;
      exact[k] = true;
      try {
        parser[k].DefineConst("pi", std::numbers::pi);
        parser[k].DefineVar("t", &t_);
        parser[k].SetExpr(text[k]);
        t_ = 0.0;
        parser[k].Eval();  // muParser checks the syntax at the first evaluation
      } catch (const mu::Parser::exception_type& e) {
        // muParser's own "at position N" counts from 0, beside ours from 1: its is dropped.
        std::string message = e.GetMsg();
        if (const std::size_t at = message.find(" at position "); at != std::string::npos) {
          const std::size_t end = message.find_first_not_of("0123456789", at + 13);
          message.erase(at, (end == std::string::npos ? message.size() : end) - at);
        }
        throw std::invalid_argument(std::string(what[k]) + " '" + text[k] + "' does not parse: " + message +
                                    " (at character " + std::to_string(e.GetPos() + 1) + ")");
      }
      // muParser takes "1,2" as two expressions (the last one's value) and "t=5" as an assignment
      // to t: each was a constant drive, taken without a word.
      if (parser[k].GetNumResults() != 1)
        throw std::invalid_argument(std::string(what[k]) + " '" + text[k] + "' holds " +
                                    std::to_string(parser[k].GetNumResults()) +
                                    " expressions separated by commas: give one");
      if (assigns(text[k]))
        throw std::invalid_argument(std::string(what[k]) + " '" + text[k] +
                                    "' assigns with '=': give a value of t (compare with '==')");
    }
    for (int k = 1; k < 3; ++k)
      if (exact[k]) check_derivative(k, what);
  }

  // A given rate (k = 1) or acceleration (k = 2) against differences of the expression it is the
  // derivative of (the rate where given, else the value), at 20 times in (0, 1) s off round
  // numbers (where piecewise motions put their kinks): a wrong one ran, and the run watch
  // reported the drive's loop as inaccurate. Central differences at h = 1e-3 and 5e-4 s,
  // extrapolated; a time where the two disagree by more than a tenth of the mismatch (a kink, a
  // jump, a motion faster than h resolves) is skipped. A mismatch is above 1e-4 of the
  // derivative's size over the samples (a wrong factor or sign is off by its whole size; the
  // differences err by ~1e-9 of it for motions slower than 10 ms), and refused when it is found
  // at half of the samples or more, at least 3: a kink the samples straddle is not.
  void check_derivative(int k, const char* const what[3]) {
    const int of = k == 2 && exact[1] ? 1 : 0;
    const auto difference = [&](double t, double h) {
      if (of + 1 == k) return (eval(of, t + h) - eval(of, t - h)) / (2.0 * h);
      return (eval(0, t + h) - 2.0 * eval(0, t) + eval(0, t - h)) / (h * h);
    };
    struct Sample {
      double t, given, differences, spread;
    };
    std::vector<Sample> samples;
    double size = 0.0;
    for (int i = 0; i < 20; ++i) {
      const double t = 0.05 * i + 0.013, d1 = difference(t, 1e-3), d2 = difference(t, 5e-4);
      const double given = eval(k, t), differences = (4.0 * d2 - d1) / 3.0;
      if (!std::isfinite(given) || !std::isfinite(differences)) continue;
      samples.push_back({t, given, differences, std::abs(d2 - d1)});
      size = std::max({size, std::abs(given), std::abs(differences)});
    }
    const double allowed = 1e-4 * std::max(size, 1e-12);
    std::vector<const Sample*> off;
    for (const Sample& p : samples)
      if (std::abs(p.given - p.differences) > allowed && p.spread < 0.1 * std::abs(p.given - p.differences))
        off.push_back(&p);
    if (off.size() >= 3 && 2 * off.size() >= samples.size()) {
      const Sample& p = *off.front();
      throw std::invalid_argument(std::string(what[k]) + " '" + text[k] + "' is not the " +
                                    (k == 1 ? "rate of the expression '" + text[0] + "'"
                                            : "derivative of " + std::string(of == 1 ? "the rate '" : "the rate of '") +
                                                  text[of] + "'") +
                                    ": at t = " + exact_number(p.t) + " s it is " + short_number(p.given) +
                                    ", the expression's differences " + short_number(p.differences) +
                                    " (" + std::to_string(off.size()) + " of " + std::to_string(samples.size()) +
                                    " times in (0, 1) s differ); give its derivative, or leave it out (differences "
                                    "are then taken)");
    }
  }
  double eval(int k, double t) const {
    t_ = t;
    return parser[k].Eval();
  }
  TimeValue at(double t) const override {
    const std::lock_guard<std::mutex> lock(mutex);
    TimeValue v{eval(0, t), 0.0, 0.0};
    // Central differences D(h), extrapolated (4 D(h/2) − D(h)) / 3: error O(h⁴).
    constexpr double h = 2e-3;
    double f[5] = {};
    if (!exact[1] || !exact[2])
      for (int j = -2; j <= 2; ++j) f[j + 2] = j == 0 ? v.value : eval(0, t + j * h / 2.0);
    v.rate = exact[1] ? eval(1, t) : (4.0 * (f[3] - f[1]) / h - (f[4] - f[0]) / (2.0 * h)) / 3.0;
    v.acceleration = exact[2] ? eval(2, t)
                              : (16.0 * (f[3] - 2.0 * f[2] + f[1]) / (h * h) - (f[4] - 2.0 * f[2] + f[0]) / (h * h)) / 3.0;
    return v;
  }
  TimeFunction::Form form() const override {
    return {"expression", {}, {text[0], exact[1] ? text[1] : "", exact[2] ? text[2] : ""}};
  }
  std::string describe() const override {
    std::string s = "expression " + text[0];
    if (exact[1]) s += ", rate " + text[1];
    if (exact[2]) s += ", acceleration " + text[2];
    if (!exact[1] || !exact[2]) s += " (derivatives by differences)";
    return s;
  }
};

}  // namespace

TimeFunction::TimeFunction() : TimeFunction(constant(0.0)) {}

TimeFunction::TimeFunction(std::shared_ptr<const Kind> kind) : kind_(std::move(kind)) {}

TimeFunction TimeFunction::constant(double c) { return polynomial({c}); }

TimeFunction TimeFunction::polynomial(std::vector<double> coefficients) {
  if (coefficients.empty()) throw std::invalid_argument("a polynomial needs at least one coefficient");
  for (double c : coefficients)
    if (!std::isfinite(c)) throw std::invalid_argument("a polynomial's coefficient is not finite");
  return TimeFunction(std::make_shared<Polynomial>(std::move(coefficients)));
}

TimeFunction TimeFunction::sine(double amplitude, double frequency, double phase, double offset) {
  for (double x : {amplitude, frequency, phase, offset})
    if (!std::isfinite(x)) throw std::invalid_argument("a sine's amplitude, frequency, phase and offset must be finite");
  return TimeFunction(std::make_shared<Sine>(amplitude, frequency, phase, offset));
}

TimeFunction TimeFunction::table(std::vector<double> times, std::vector<double> values) {
  if (times.size() != values.size())
    throw std::invalid_argument("a table has " + std::to_string(times.size()) + " times and " +
                                std::to_string(values.size()) + " values");
  if (times.size() < 2) throw std::invalid_argument("a table needs at least two points");
  // Points counted from 1, as the model file's reader counts them.
  for (std::size_t i = 0; i < times.size(); ++i) {
    if (!std::isfinite(times[i]) || !std::isfinite(values[i]))
      throw std::invalid_argument("a table's point " + std::to_string(i + 1) + " is not finite");
    if (i > 0 && !(times[i] > times[i - 1]))
      throw std::invalid_argument("a table's times must increase (point " + std::to_string(i + 1) + ": " +
                                  number(times[i]) + " after " + number(times[i - 1]) + ")");
  }
  return TimeFunction(std::make_shared<Table>(std::move(times), std::move(values)));
}

TimeFunction TimeFunction::expression(const std::string& value, const std::string& rate,
                                      const std::string& acceleration) {
  return TimeFunction(std::make_shared<Expression>(value, rate, acceleration));
}

TimeValue TimeFunction::operator()(double t) const {
  const TimeValue v = kind_->at(t);
  if (!std::isfinite(v.value) || !std::isfinite(v.rate) || !std::isfinite(v.acceleration)) {
    std::ostringstream s;
    s << "value " << v.value << ", rate " << v.rate << ", acceleration " << v.acceleration << " at t = " << t
      << " s: not finite";
    throw std::runtime_error(s.str());
  }
  return v;
}

double TimeFunction::first_time() const { return kind_->first_time(); }
double TimeFunction::last_time() const { return kind_->last_time(); }
std::string TimeFunction::describe() const { return kind_->describe(); }
TimeFunction::Form TimeFunction::form() const { return kind_->form(); }

}  // namespace loopdyn
