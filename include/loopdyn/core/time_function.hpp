// Functions of time with their first two derivatives: the prescribed motion of a drive
// (docs/model-format.md, `drives:`). One type for every kind, immutable and cheap to copy (the
// kinds share their data), safe to evaluate from several threads.
//   constant      f = c
//   polynomial    f = Σ c_k t^k
//   sine          f = offset + amplitude · sin(2π frequency t + phase)
//   table         (t_i, f_i), interpolated by the natural cubic spline (f'' = 0 at both ends):
//                 f, f' and f'' continuous; evaluating outside [t_0, t_last] throws
//   expression    a muParser expression of t (libmuparser-dev). Its rate and acceleration are
//                 expressions too when given; otherwise central differences extrapolated by
//                 Richardson (step 2 ms and 1 ms, error O(h⁴)): about 1e-9 relative for motions
//                 whose time scale is 0.1 s or longer, less for faster ones (give them exactly).
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace loopdyn {

/// f, ḟ and f̈ at one time.
struct TimeValue {
  double value = 0.0, rate = 0.0, acceleration = 0.0;
};

class TimeFunction {
 public:
  struct Kind;  // one per kind, in time_function.cpp

  /// The constant 0.
  TimeFunction();
  static TimeFunction constant(double c);
  /// Σ coefficients[k] t^k (at least one coefficient).
  static TimeFunction polynomial(std::vector<double> coefficients);
  /// offset + amplitude · sin(2π frequency t + phase); frequency in Hz, phase in rad.
  static TimeFunction sine(double amplitude, double frequency, double phase, double offset);
  /// Natural cubic spline through (times[i], values[i]): at least two points, times increasing.
  static TimeFunction table(std::vector<double> times, std::vector<double> values);
  /// An expression of t; rate and acceleration (expressions of t) when given, else by differences.
  /// Throws std::invalid_argument with muParser's message and position when one does not parse.
  static TimeFunction expression(const std::string& value, const std::string& rate = "",
                                 const std::string& acceleration = "");

  /// f, ḟ, f̈ at t. Throws std::runtime_error naming t and the range for a table outside its
  /// range, and naming t when the value is not finite (a run stops there, keeping its rows).
  TimeValue operator()(double t) const;
  /// The range where the function is defined ([−∞, ∞] but for a table).
  double first_time() const;
  double last_time() const;
  /// One line, e.g. "polynomial 0.1 + 10.47 t" or "table of 12 points on [0, 2] s".
  std::string describe() const;

  /// The function as it was given, to write it back (a model file's `drives:`): the kind
  /// ("polynomial", "sine", "table", "expression") with its numbers (the coefficients; amplitude,
  /// frequency, phase, offset; t0, f0, t1, f1, ...) and texts (expression, rate, acceleration;
  /// empty when not given).
  struct Form {
    std::string kind;
    std::vector<double> numbers;
    std::vector<std::string> texts;
  };
  Form form() const;

 private:
  explicit TimeFunction(std::shared_ptr<const Kind> kind);
  std::shared_ptr<const Kind> kind_;
};

}  // namespace loopdyn
