// dca_calls CASE SIZE CALLS: makes bench_dca's case (chain N or ladder-comb L, its benchmark state)
// with dca at one thread, calls derivative once, then CALLS more times, and prints the last
// derivative's last entry. For counting tools: bench/run_dca_cachegrind.sh runs it under valgrind's
// cachegrind with 1 and with 4 calls, so that the difference over 3 is one call's instructions and
// simulated cache misses, free of the timing noise of a shared machine.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "loopdyn/formulations/dca.hpp"
#include "loopdyn/mechanisms/generators.hpp"
#include "loopdyn/core/model.hpp"

using namespace loopdyn;

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: dca_calls chain|ladder-comb SIZE CALLS\n");
    return 2;
  }
  const std::string name = argv[1];
  const int size = std::atoi(argv[2]), calls = std::atoi(argv[3]);
  if ((name != "chain" && name != "ladder-comb") || size < 1 || calls < 0) {
    std::fprintf(stderr, "dca_calls: unknown case '%s' or size %d or calls %d\n", name.c_str(), size, calls);
    return 2;
  }
  const bool chain = name == "chain";
  const Model model = Model::build(chain ? chain_mechanism(size) : ladder_mechanism(size, LadderLayout::comb));
  VecX q, u;
  if (chain) {
    const ChainState s = chain_state(size);
    q = s.q;
    u = s.u;
  } else {
    const LadderState s = ladder_state(model, size);
    q = s.q;
    u = s.u;
  }
  FormulationSettings settings;
  settings.threads = 1;
  Dca dca(model, settings);
  VecX x(dca.state_size()), dx(dca.state_size());
  dca.to_state(q, u, x);
  dca.derivative(0.0, x, dx);
  for (int k = 0; k < calls; ++k) dca.derivative(0.0, x, dx);
  std::printf("%.17g\n", dx(dx.size() - 1));
  return 0;
}
