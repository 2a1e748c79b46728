#include "loopdyn/io/csv.hpp"

#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <stdexcept>
#include <unordered_set>

namespace loopdyn {

void write_csv(std::ostream& out, const Trajectory& trajectory) {
  for (std::size_t k = 0; k < trajectory.columns.size(); ++k) out << (k ? "," : "") << trajectory.columns[k];
  out << '\n' << std::setprecision(15);  // 15 significant digits: round trip below 1e-14 relative
  for (const VecX& row : trajectory.rows) {
    for (Eigen::Index k = 0; k < row.size(); ++k) out << (k ? "," : "") << row(k);
    out << '\n';
  }
}

void write_csv(const std::string& path, const Trajectory& trajectory) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write '" + path + "'");
  write_csv(out, trajectory);
  if (!out) throw std::runtime_error("error while writing '" + path + "'");
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
    if (line.empty()) continue;
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
