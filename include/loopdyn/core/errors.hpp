// The errors loopdyn throws, one place for every layer: what a front end catches to tell a user's
// mistake (ModelError, std::invalid_argument for a setting) from a run that stopped (the others).
// Every message names the place (file:line, body, joint, time) and the problem.
#pragma once

#include <stdexcept>

namespace loopdyn {

/// Error in a user's description (model file or C++ builder). The message names the place
/// (file:line when known) and the problem.
class ModelError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// A run stopped at, or refused because of, a singular configuration of the loops (where their
/// rows lose rank and branches of the motion meet) that the method cannot cross; the message names
/// the method, the time or the point, the loops, and what to use instead.
class SingularConfigurationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A run left the motion: a check of the run watch (run/run_watch.hpp) or a method's own check of
/// its error (srm's work of the loop forces) failed.
class RunWatchError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Failure during integration (non-finite state, step size underflow, too many steps); the
/// message gives the time.
class IntegrationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// An input of a run failed at a time: a user's force callback (it raised, returned the wrong
/// shape or a value that is not finite), a load's profile or a drive's motion (a table that ends,
/// an expression that is not finite there). The message names the element, the time and the
/// value. No other method would do better: `auto` keeps the stop.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace loopdyn
