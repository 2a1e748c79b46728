// Trajectory output as CSV: a header line of column names, then one row per output time. Read back
// by read_csv (the viewer draws a run from its CSV). A streamed file (CsvStream) ends with a comment
// line "# loopdyn: ..." saying how the run ended; readers skip lines that start with '#'
// (pandas.read_csv(path, comment="#"), numpy.loadtxt by default).
#pragma once

#include <cstdio>
#include <ostream>
#include <string>
#include <string_view>

#include "loopdyn/run/simulator.hpp"

namespace loopdyn {

void write_csv(std::ostream& out, const Trajectory& trajectory);
/// Throws std::runtime_error naming the file when it cannot be written.
void write_csv(const std::string& path, const Trajectory& trajectory);

/// A trajectory written as its rows come (RunCallbacks::rows), each flushed, so that a run that
/// stops, fails or is interrupted leaves every row computed before it on disk; finish() writes the
/// last line, "# loopdyn: <how the run ended>".
class CsvStream {
 public:
  /// Opens (truncates) the file now, before the run: throws std::runtime_error naming it when it
  /// cannot be written.
  explicit CsvStream(std::string path);
  ~CsvStream();
  CsvStream(const CsvStream&) = delete;
  CsvStream& operator=(const CsvStream&) = delete;

  /// Writes the rows of `trajectory` not written yet (the header first) and flushes them. A
  /// trajectory with fewer rows than written is a new run (`auto` starting again from the start
  /// with another method): the file starts again with it. Does not throw for a failed write, which would stop
  /// the run it is called from: finish() reports it.
  void write(const Trajectory& trajectory);
  /// The last line, "# loopdyn: " + how (one line: line breaks become spaces), and closes the file;
  /// throws std::runtime_error naming the file when a write failed.
  void finish(std::string_view how);
  std::size_t rows_written() const { return rows_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  std::size_t rows_ = 0;
  bool header_ = false, finished_ = false;
  std::string error_;  ///< the first write that failed
};

/// The columns and rows of a CSV written by write_csv (stats and the other fields stay empty).
/// Throws ModelError "path:line: problem" for a file that cannot be read, has no header, an empty
/// or repeated column name, a row of another length than the header, a cell that is not a number
/// ("nan" and "inf" are numbers: the reader of a column decides), or no row. Lines that start with
/// '#' are skipped (CsvStream's last line).
Trajectory read_csv(const std::string& path);

}  // namespace loopdyn
