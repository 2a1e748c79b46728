// How many digits each loop method keeps on paper 003's square chain in motion (issue 38 item 4;
// docs/performance.md, "Digits on the long square chain"): at 64, 256 and 1024 bars, states of a
// motion from rest (dca, RK4 steps of 2e-3 s, rows at t = 0.3, 0.4, 0.5 s, assembled), each
// method's u̇ against the long-double solve of the same equations (reference/long_double_kkt.hpp),
// beside what one rounding of M and G moves that solve by. Prints one Markdown table: the worst
// relative error over the states per method, and the worst rounding change.
//   square_chain_digits [SQUARES ...]     default 21 85 341 (64, 256, 1024 bars)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "loopdyn/formulations/registry.hpp"
#include "loopdyn/mechanisms/square_nets.hpp"
#include "long_double_kkt.hpp"

using namespace loopdyn;

int main(int argc, char** argv) {
  std::vector<int> sizes = {21, 85, 341};
  if (argc > 1) sizes.clear();
  for (int k = 1; k < argc; ++k) sizes.push_back(std::atoi(argv[k]));
  const std::vector<std::string> methods = {"embedding", "lagrange-dense", "nullspace", "dca"};
  std::printf("| bars | one rounding of M and G |");
  for (const std::string& name : methods) std::printf(" `%s` |", name.c_str());
  std::printf("\n|---:|---:|");
  for (std::size_t k = 0; k < methods.size(); ++k) std::printf("---:|");
  std::printf("\n");
  for (int squares : sizes) {
    const Model m = Model::build(square_chain_mechanism(squares));
    std::vector<std::unique_ptr<Formulation>> formulations;
    for (const std::string& name : methods) formulations.push_back(make_formulation(name, m));
    const Constraints& cons = formulations.front()->constraints();
    double rounding = 0.0;
    std::vector<double> off(methods.size(), 0.0);
    for (const reference::ClosedState& s : reference::moving_states(m, cons, 2e-3, 0.1, 0.3, 0.5)) {
      const VecX exact = reference::long_double_accelerations(m, cons, s.q, s.u);
      rounding = std::max(rounding, reference::rounding_change(m, cons, s.q, s.u, exact));
      VecX udot(m.nv);
      for (std::size_t k = 0; k < methods.size(); ++k) {
        formulations[k]->accelerations(0.0, s.q, s.u, udot);
        off[k] = std::max(off[k], (udot - exact).norm() / exact.norm());
      }
    }
    std::printf("| %d | %.1e |", m.nbodies, rounding);
    for (double e : off) std::printf(" %.1e |", e);
    std::printf("\n");
    std::fflush(stdout);
  }
}
