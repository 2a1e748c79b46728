#include "loopdyn/io/csv.hpp"

#include <fstream>
#include <iomanip>
#include <stdexcept>

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

}  // namespace loopdyn
