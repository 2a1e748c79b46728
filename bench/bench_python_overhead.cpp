// The C++ side of the Python overhead measurement (bench/run_python_overhead.sh): one
// Formulation::accelerations(t, q, u, u̇) call on the planar four-bar models/fourbar_park_regular.yaml
// at its assembled initial state, per method, u̇ preallocated. bench/python_overhead.py times the same
// call through loopdyn.Method.accelerations; the difference is what the binding costs (argument
// checks, copying q and u into the method's workspace, the result array). Counter `check` = u̇[0],
// the same number the Python side prints.
#include <benchmark/benchmark.h>

#include "loopdyn/formulations/formulation.hpp"
#include "loopdyn/formulations/registry.hpp"
#include "problem.hpp"

namespace {

using namespace loopdyn;

void accelerations(benchmark::State& state, const char* method) {
  const bench::Problem p = bench::from_file(LOOPDYN_MODELS_DIR, "fourbar_park_regular");
  auto f = make_formulation(method, p.model);
  VecX udot(p.model.nv);
  for (auto _ : state) {
    f->accelerations(0.0, p.q, p.u, udot);
    benchmark::DoNotOptimize(udot.data());
  }
  state.counters["check"] = udot(0);
}

BENCHMARK_CAPTURE(accelerations, lagrange-dense, "lagrange-dense");
BENCHMARK_CAPTURE(accelerations, embedding, "embedding");
BENCHMARK_CAPTURE(accelerations, rcr, "rcr");

}  // namespace

BENCHMARK_MAIN();
