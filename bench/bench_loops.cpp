// Loop-closure benchmarks: one forward-dynamics call of each loop formulation on the planar
// ladder `ladder-L` of shared/design/benchmarks.md, both tree layouts (serial, comb),
// L = 1, 2, 4, ..., 128 (L loops, m = 2L kept constraint rows, n = 3L speeds), and `tree` (the
// articulated-body algorithm) on the same 3L bodies with the loop-closing joints removed, the
// floor that constraint embedding is measured against (its check value is the open tree's).
//
// One timed call = Formulation::accelerations(t, q, u, u̇) from (q, u) of ladder_state: kinematics,
// constraints and multipliers recomputed, nothing reused from the previous call except the
// workspaces the formulation preallocated when make_formulation built it (before the timed loop).
// gcp, nullspace and embedding run their position and velocity analyses (001 eqs 12-14; embedding
// per aggregated body) inside the call; at
// this consistent state the Newton iteration stops after its first residual, so they add one Φ,
// one G, the LU of G_RD (partition chosen at the first call, before timing) and eq 14.
// Counters: `check` = q̈ of joint lp0_bottom (6 g sin 0.3 / 5 = 3.478863873 at L = 1), `m` (kept
// constraint rows), `n` (nv). Run bench/run_loops.sh for the table in docs/performance.md.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <deque>
#include <memory>
#include <string>

#include "loopdyn/loops/loop_structure.hpp"
#include "loopdyn/formulations/formulation.hpp"
#include "loopdyn/mechanisms/generators.hpp"
#include "loopdyn/formulations/registry.hpp"

namespace {

using namespace loopdyn;

struct Case {
  std::string layout;  // "serial" or "comb"
  int cells;
  Model model;
  Model open;  // the same bodies and tree joints without the loop-closing joints
  LadderState state;
  int m;   // kept constraint rows
  int v0;  // speed index of joint lp0_bottom
};

Mechanism without_loops(Mechanism mechanism) {
  auto& joints = mechanism.joints;
  joints.erase(std::remove_if(joints.begin(), joints.end(), [](const JointSpec& j) { return j.cut; }), joints.end());
  return mechanism;
}

Case make_case(LadderLayout layout, int cells) {
  const Mechanism mechanism = ladder_mechanism(cells, layout);
  Model model = Model::build(mechanism);
  Model open = Model::build(without_loops(mechanism));
  LadderState state = ladder_state(model, cells);
  const int m = model.loops().constraints.rows();
  const int v0 = model.v_index[model.joint_index("lp0_bottom")];
  return Case{layout == LadderLayout::serial ? "serial" : "comb", cells, std::move(model), std::move(open),
              std::move(state), m, v0};
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
  for (const std::string method : {"lagrange-dense", "lagrange-on", "gcp", "nullspace", "embedding", "tree"}) {
    for (const Case& c : cases) {
      runs.push_back(Run{&c, make_formulation(method, method == "tree" ? c.open : c.model)});
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
