// Loop-closure benchmarks: one forward-dynamics call of each loop formulation on the planar
// ladder `ladder-L` of shared/design/benchmarks.md, both tree layouts (serial, comb),
// L = 1, 2, 4, ..., 128 (L loops, m = 2L kept constraint rows, n = 3L speeds).
//
// One timed call = Formulation::accelerations(t, q, u, u̇) from (q, u) of ladder_state: kinematics,
// constraints and multipliers recomputed, nothing reused from the previous call except the
// workspaces the formulation preallocated when make_formulation built it (before the timed loop).
// gcp and nullspace run their position and velocity analyses (001 eqs 12-14) inside the call; at
// this consistent state the Newton iteration stops after its first residual, so they add one Φ,
// one G, the LU of G_RD (partition chosen at the first call, before timing) and eq 14.
// Counters: `check` = q̈ of joint lp0_bottom (6 g sin 0.3 / 5 = 3.478863873 at L = 1), `m` (kept
// constraint rows), `n` (nv). Run bench/run_loops.sh for the table in docs/performance.md.
#include <benchmark/benchmark.h>

#include <deque>
#include <memory>
#include <string>

#include "loopdyn/constraints.hpp"
#include "loopdyn/formulation.hpp"
#include "loopdyn/generators.hpp"

namespace {

using namespace loopdyn;

struct Case {
  std::string layout;  // "serial" or "comb"
  int cells;
  Model model;
  LadderState state;
  int m;   // kept constraint rows
  int v0;  // speed index of joint lp0_bottom
};

Case make_case(LadderLayout layout, int cells) {
  Model model = Model::build(ladder_mechanism(cells, layout));
  LadderState state = ladder_state(model, cells);
  const int m = Constraints(model).rows();
  const int v0 = model.v_index[model.joint_index("lp0_bottom")];
  return Case{layout == LadderLayout::serial ? "serial" : "comb", cells, std::move(model), std::move(state), m, v0};
}

struct Run {
  const Case* c;
  std::unique_ptr<Formulation> method;
};

void bench_accelerations(benchmark::State& st, Run* run) {
  const Case& c = *run->c;
  VecX udot = VecX::Zero(c.model.nv);
  for (auto _ : st) {
    run->method->accelerations(0.0, c.state.q, c.state.u, udot);
    benchmark::DoNotOptimize(udot.data());
    benchmark::ClobberMemory();
  }
  st.counters["check"] = udot(c.v0);
  st.counters["m"] = c.m;
  st.counters["n"] = c.model.nv;
}

}  // namespace

int main(int argc, char** argv) {
  // Deques keep cases and runs at fixed addresses while the benchmarks hold pointers to them.
  static std::deque<Case> cases;
  static std::deque<Run> runs;
  for (LadderLayout layout : {LadderLayout::serial, LadderLayout::comb})
    for (int cells = 1; cells <= 128; cells *= 2) cases.push_back(make_case(layout, cells));
  for (const char* method : {"lagrange-dense", "lagrange-on", "gcp", "nullspace"}) {
    for (const Case& c : cases) {
      runs.push_back(Run{&c, make_formulation(method, c.model)});
      std::string name = method;
      name.append("/ladder-").append(c.layout).append("/").append(std::to_string(c.cells));
      benchmark::RegisterBenchmark(name.c_str(), bench_accelerations, &runs.back())->Unit(benchmark::kMicrosecond);
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
