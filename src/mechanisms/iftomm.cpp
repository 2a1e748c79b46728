// IFToMM benchmark mechanisms and their references (iftomm.hpp).
#include "loopdyn/mechanisms/iftomm.hpp"

#include <cmath>
#include <functional>
#include <numbers>
#include <stdexcept>
#include <string>

#include "loopdyn/mechanisms/generators.hpp"
#include "mechanisms/rods.hpp"

namespace loopdyn {

namespace {

using detail::add_pin;
using detail::add_rod;
using detail::indexed;

constexpr double kGravity = 9.81;

}  // namespace

Mechanism nfourbar_mechanism(int n) {
  require_count(n, "nfourbar_mechanism: number of four-bars");
  Mechanism m;
  m.name = indexed("nfourbar-", n);
  m.gravity = Vec3(0.0, -kGravity, 0.0);
  const double up = std::numbers::pi / 2;
  const Vec3 tip(1.0, 0.0, 0.0);
  for (int k = 0; k <= n; ++k) {
    const std::string crank = indexed("crank", k);
    add_rod(m, crank);
    add_pin(m, crank + "_pivot", std::string(ground_name), crank, Vec3(k, 0.0, 0.0), Vec3::Zero(), up, -1.0);
    m.markers.push_back({indexed("B", k), crank, tip, ""});
    if (k == 0) continue;
    // Coupler k from crank k−1's tip, horizontal (absolute angle 0), translating with the tips.
    const std::string coupler = indexed("coupler", k), left = indexed("crank", k - 1);
    add_rod(m, coupler);
    add_pin(m, coupler + "_left", left, coupler, tip, Vec3::Zero(), -up, 1.0);
    add_pin(m, coupler + "_right", coupler, crank, tip, tip, 0.0, 0.0).cut = true;
  }
  return m;
}


}  // namespace loopdyn
