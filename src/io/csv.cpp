#include "loopdyn/io/csv.hpp"

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <unordered_set>

namespace loopdyn {

namespace {

std::string header_line(const Trajectory& trajectory) {
  std::string line;
  for (std::size_t k = 0; k < trajectory.columns.size(); ++k) line.append(k ? "," : "").append(trajectory.columns[k]);
  return line.append("\n");
}

// 15 significant digits: a round trip below 1e-14 relative. std::to_chars writes what printf's
// %.15g writes, several times faster (snprintf was a quarter of a 64-cell spatial ladder's
// `simulate`, whose rows have 1,300 numbers).
std::string row_line(const VecX& row) {
  std::string line;
  char cell[32];
  for (Eigen::Index k = 0; k < row.size(); ++k) {
    if (k) line.push_back(',');
    line.append(cell, std::to_chars(cell, cell + sizeof cell, row(k), std::chars_format::general, 15).ptr);
  }
  return line.append("\n");
}

}  // namespace

void write_csv(std::ostream& out, const Trajectory& trajectory) {
  out << header_line(trajectory);
  for (const VecX& row : trajectory.rows) out << row_line(row);
}

void write_csv(const std::string& path, const Trajectory& trajectory) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write '" + path + "'");
  write_csv(out, trajectory);
  if (!out) throw std::runtime_error("error while writing '" + path + "'");
}

CsvStream::CsvStream(std::string path) : path_(std::move(path)), file_(std::fopen(path_.c_str(), "w")) {
  if (!file_) throw std::runtime_error("cannot write '" + path_ + "': " + std::strerror(errno));
}

CsvStream::~CsvStream() {
  if (file_) std::fclose(file_);
}

void CsvStream::write(const Trajectory& trajectory) {
  if (finished_) throw std::logic_error("CsvStream::write after finish");
  if (!file_) return;  // it could not be opened again: finish() says so
  if (trajectory.rows.size() < rows_) {  // a new run: start the file again
    file_ = std::freopen(path_.c_str(), "w", file_);
    if (!file_) {
      error_ = std::string("cannot write '") + path_ + "' again: " + std::strerror(errno);
      return;
    }
    rows_ = 0;
    header_ = false;
  }
  if (!header_) {
    std::fputs(header_line(trajectory).c_str(), file_);
    header_ = true;
  }
  for (; rows_ < trajectory.rows.size(); ++rows_) std::fputs(row_line(trajectory.rows[rows_]).c_str(), file_);
  std::fflush(file_);
  if (std::ferror(file_) && error_.empty()) error_ = "error while writing '" + path_ + "'";
}

void CsvStream::finish(std::string_view how) {
  if (finished_) return;
  finished_ = true;
  if (file_) {
    std::string line(how);
    for (char& c : line)
      if (c == '\n' || c == '\r') c = ' ';
    std::fprintf(file_, "# loopdyn: %s\n", line.c_str());
    const bool failed = std::ferror(file_) != 0;
    const bool closed = std::fclose(file_) == 0;
    file_ = nullptr;
    if ((failed || !closed) && error_.empty()) error_ = "error while writing '" + path_ + "'";
  }
  if (!error_.empty()) throw std::runtime_error(error_);
}

namespace {

// The comma-separated cells of one line (no quoting: write_csv writes names and numbers only).
std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  for (std::string cell; std::getline(ss, cell, ',');) out.push_back(cell);
  if (!line.empty() && line.back() == ',') out.emplace_back();
  return out;
}

// One number filling a whole cell; false for an empty cell or trailing text.
bool parse_number(const std::string& cell, double& value) {
  if (cell.empty()) return false;
  char* end = nullptr;
  value = std::strtod(cell.c_str(), &end);
  return end == cell.c_str() + cell.size();
}

}  // namespace

Trajectory read_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ModelError("cannot open CSV file '" + path + "'");
  std::string line;
  if (!std::getline(in, line) || line.empty()) throw ModelError(path + ":1: no header line of column names");
  Trajectory run;
  run.columns = cells(line);
  std::unordered_set<std::string> seen;
  for (const std::string& name : run.columns) {
    if (name.empty()) throw ModelError(path + ":1: empty column name in the header");
    if (!seen.insert(name).second) throw ModelError(path + ":1: column '" + name + "' appears twice");
  }
  for (int number = 2; std::getline(in, line); ++number) {
    if (line.empty() || line.front() == '#') continue;
    const std::vector<std::string> row = cells(line);
    const std::string at = path + ":" + std::to_string(number) + ": ";
    if (row.size() != run.columns.size())
      throw ModelError(at + std::to_string(row.size()) + " cells, the header has " + std::to_string(run.columns.size()));
    VecX values(static_cast<Eigen::Index>(row.size()));
    for (std::size_t k = 0; k < row.size(); ++k)
      if (!parse_number(row[k], values(static_cast<Eigen::Index>(k))))
        throw ModelError(at + "column '" + run.columns[k] + "' is not a number: '" + row[k] + "'");
    run.rows.push_back(std::move(values));
  }
  if (in.bad()) throw ModelError("cannot read CSV file '" + path + "'");
  if (run.rows.empty()) throw ModelError(path + ": no rows after the header");
  return run;
}

}  // namespace loopdyn
