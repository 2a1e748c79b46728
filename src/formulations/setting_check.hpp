// The settings check shared by the formulations' constructors (private to the library).
#pragma once

#include <sstream>
#include <stdexcept>

namespace loopdyn::detail {

/// Throws std::invalid_argument "<method>: <what>, got <value>" unless ok.
inline void check_setting(bool ok, const char* method, const char* what, double value) {
  if (ok) return;
  std::ostringstream s;
  s << method << ": " << what << ", got " << value;
  throw std::invalid_argument(s.str());
}

}  // namespace loopdyn::detail
