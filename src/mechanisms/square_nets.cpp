// Paper 003's chains and nets of squares (square_nets.hpp).
#include "loopdyn/mechanisms/square_nets.hpp"

#include <cmath>
#include <numbers>
#include <stdexcept>

#include "loopdyn/mechanisms/generators.hpp"
#include "mechanisms/rods.hpp"

namespace loopdyn {

namespace {

using detail::add_pin;
using detail::add_rod;
using detail::indexed;

std::string bar(const char* kind, int row, int col) { return indexed(kind, row) + "_" + std::to_string(col); }

}  // namespace

Mechanism square_net_mechanism(int rows, int cols, double tilt) {
  require_count(rows, "square_net_mechanism: rows");
  require_count(cols, "square_net_mechanism: cols");
  require_count(static_cast<long long>(rows) * cols, "square_net_mechanism: rows x cols");
  if (!std::isfinite(tilt)) throw std::invalid_argument("square_net_mechanism: tilt must be finite");
  Mechanism m;
  m.name = rows == 1 ? indexed("square-chain-", cols) : indexed("square-net-", rows) + "x" + std::to_string(cols);
  m.gravity = Vec3(0.0, -9.81, 0.0);
  const double down = -std::numbers::pi / 2;  // a rod along its frame's x, turned from x to −y
  const Vec3 start = Vec3::Zero(), end(1.0, 0.0, 0.0);
  // Top edge: h0_j in series from ground, the first turned by the tilt.
  for (int j = 0; j < cols; ++j) {
    add_rod(m, bar("h", 0, j));
    add_pin(m, bar("h", 0, j) + "_pin", j == 0 ? std::string(ground_name) : bar("h", 0, j - 1), bar("h", 0, j),
            j == 0 ? start : end, start, j == 0 ? tilt : 0.0, 0.0);
  }
  for (int r = 0; r < rows; ++r) {
    for (int j = 0; j <= cols; ++j) {
      // Post v{r}_{j} hangs from the corner above it: the top edge (row 0) or the post above.
      const std::string post = bar("v", r, j);
      add_rod(m, post);
      if (r > 0) add_pin(m, post + "_pin", bar("v", r - 1, j), post, end, start, 0.0, 0.0);
      else if (j < cols) add_pin(m, post + "_pin", bar("h", 0, j), post, start, start, down, 0.0);
      else add_pin(m, post + "_pin", bar("h", 0, j - 1), post, end, start, down, 0.0);
    }
    for (int j = 0; j < cols; ++j) {
      // Bar h{r+1}_{j} hangs from the foot of v{r}_{j}; its right end closes square (r, j).
      const std::string under = bar("h", r + 1, j);
      add_rod(m, under);
      add_pin(m, under + "_pin", bar("v", r, j), under, end, start, -down, 0.0);
      add_pin(m, bar("square", r, j), under, bar("v", r, j + 1), end, end, 0.0, 0.0).cut = true;
    }
  }
  return m;
}

Mechanism square_chain_mechanism(int squares) {
  require_count(squares, "square_chain_mechanism: squares");
  return square_net_mechanism(1, squares, 0.0);
}

}  // namespace loopdyn
