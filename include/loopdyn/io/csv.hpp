// Trajectory output as CSV: a header line of column names, then one row per output time.
#pragma once

#include <ostream>
#include <string>

#include "loopdyn/simulator.hpp"

namespace loopdyn {

void write_csv(std::ostream& out, const Trajectory& trajectory);
/// Throws std::runtime_error naming the file when it cannot be written.
void write_csv(const std::string& path, const Trajectory& trajectory);

}  // namespace loopdyn
