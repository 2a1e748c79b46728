// Trajectory output as CSV: a header line of column names, then one row per output time. Read back
// by read_csv (the viewer draws a run from its CSV).
#pragma once

#include <ostream>
#include <string>

#include "loopdyn/run/simulator.hpp"

namespace loopdyn {

void write_csv(std::ostream& out, const Trajectory& trajectory);
/// Throws std::runtime_error naming the file when it cannot be written.
void write_csv(const std::string& path, const Trajectory& trajectory);

/// The columns and rows of a CSV written by write_csv (stats and the other fields stay empty).
/// Throws ModelError "path:line: problem" for a file that cannot be read, has no header, an empty
/// or repeated column name, a row of another length than the header, a cell that is not a number
/// ("nan" and "inf" are numbers: the reader of a column decides), or no row.
Trajectory read_csv(const std::string& path);

}  // namespace loopdyn
