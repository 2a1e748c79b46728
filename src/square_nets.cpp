// Paper 003's chains of squares (square_nets.hpp).
#include "loopdyn/square_nets.hpp"

#include <numbers>
#include <stdexcept>

#include "rods.hpp"

namespace loopdyn {

using detail::add_pin;
using detail::add_rod;
using detail::indexed;

Mechanism square_chain_mechanism(int squares) {
  if (squares < 1) throw std::invalid_argument("square_chain_mechanism: squares must be at least 1, got " +
                                               std::to_string(squares));
  Mechanism m;
  m.name = indexed("square-chain-", squares);
  m.gravity = Vec3(0.0, -9.81, 0.0);
  const double down = -std::numbers::pi / 2;  // a rod along its frame's x, turned from x to −y
  const Vec3 start = Vec3::Zero(), end(1.0, 0.0, 0.0);
  for (int i = 0; i <= squares; ++i) {
    const std::string post = indexed("post", i);
    add_rod(m, post);
    if (i < squares) {
      const std::string top = indexed("top", i), parent = i == 0 ? std::string(ground_name) : indexed("top", i - 1);
      add_rod(m, top);
      add_pin(m, top + "_pin", parent, top, i == 0 ? start : end, start, 0.0, 0.0);
      add_pin(m, post + "_top", top, post, start, start, down, 0.0);
    } else {
      add_pin(m, post + "_top", indexed("top", i - 1), post, end, start, down, 0.0);
    }
    if (i > 0) {
      // Bottom bar i − 1 hangs from the foot of post i − 1, horizontal; its right end closes square i − 1.
      const std::string bottom = indexed("bottom", i - 1);
      add_rod(m, bottom);
      add_pin(m, bottom + "_pin", indexed("post", i - 1), bottom, end, start, -down, 0.0);
      add_pin(m, indexed("square", i - 1), bottom, post, end, end, 0.0, 0.0).cut = true;
    }
  }
  return m;
}

}  // namespace loopdyn
