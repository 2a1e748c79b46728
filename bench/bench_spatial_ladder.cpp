// Loop-closure benchmarks on the spatial ladder `spatial-ladder-L` of paper 000 §4.3 (Fig 11) and
// shared/design/benchmarks.md: one forward-dynamics call of each loop formulation, L = 1, 2, 4, ...,
// 1024 cells, built by spatial_ladder_mechanism / spatial_ladder_state (generators.hpp): N = 2L + 1
// bodies, n = 4L + 2 speeds, L revolute loop closures (5 rows each, 4L independent), 2 DOF; every
// loop has ground as its base body. Methods:
//   tree            the articulated-body algorithm on the same 2L + 1 bodies and tree joints with the
//                   loop-closing joints removed (the floor; its check value is the open tree's own);
//   lagrange-on, lagrange-dense, nullspace
//                   O(n³) per call: at L = 512 and 1024 one call takes about 0.5-10 s on the 2-core
//                   benchmark machine, so these run kDenseLongRepetitions repetitions instead of
//                   the command line's (each of a single call);
//   rcr             recursive coordinate reduction (000); registered only where
//                   make_formulation("rcr", model) succeeds, so that this program runs before `rcr`
//                   exists and picks it up once it does.
// The largest L is LOOPDYN_SPATIAL_MAX_CELLS (environment, default 1024): every case is built and
// every formulation made before the first benchmark runs, the model (its loop structure) included.
//
// One timed call = Formulation::accelerations(0, q, u, u̇) at spatial_ladder_state: kinematics,
// constraints and multipliers recomputed, nothing reused from the previous call except the
// workspaces make_formulation preallocated; one untimed call is made first (nullspace chooses its
// partition there). Counters: `check` = u̇ of the first speed of joint post0_top (α̈), `pendulum` =
// the same from the closed-form 2-dof pendulum (spatial_ladder_pendulum_accelerations), `m` =
// model.loops().constraints.rows() (kept constraint rows), `n` = nv. Run bench/run_spatial_ladder.sh for
// the tables in docs/performance.md.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <memory>
#include <string>

#include "loopdyn/loops/loop_structure.hpp"
#include "loopdyn/formulations/formulation.hpp"
#include "loopdyn/mechanisms/generators.hpp"
#include "pendulums.hpp"
#include "loopdyn/formulations/registry.hpp"

namespace {

using namespace loopdyn;

constexpr int kMaxCells = 1024;      // default of LOOPDYN_SPATIAL_MAX_CELLS
constexpr int kDenseLongCells = 512;       // from this L the O(n³) methods take ~0.5 s or more per call
constexpr int kDenseLongRepetitions = 3;  // repetitions there (header comment)

struct Case {
  int cells;
  Model model;
  Model open;  // the same bodies and tree joints without the loop-closing joints
  SpatialLadderState state;
  int m;  // kept constraint rows
};

Mechanism without_loops(Mechanism mechanism) {
  auto& joints = mechanism.joints;
  joints.erase(std::remove_if(joints.begin(), joints.end(), [](const JointSpec& j) { return j.cut; }), joints.end());
  return mechanism;
}

Case make_case(int cells) {
  const Mechanism mechanism = spatial_ladder_mechanism(cells);
  Model model = Model::build(mechanism);
  Model open = Model::build(without_loops(mechanism));
  SpatialLadderState state = spatial_ladder_state(model, cells);
  const int m = model.loops().constraints.rows();
  return Case{cells, std::move(model), std::move(open), std::move(state), m};
}

struct Run {
  const Case* c;
  std::unique_ptr<Formulation> method;
  int v0;  // speed index of joint post0_top (its first speed, α) in the method's model
  VecX udot;
  bool warm = false;  // the untimed first call is made
};

void bench_accelerations(benchmark::State& st, Run* run) {
  const Case& c = *run->c;
  if (!run->warm) {
    run->method->accelerations(0.0, c.state.q, c.state.u, run->udot);
    run->warm = true;
  }
  for (auto _ : st) {
    run->method->accelerations(0.0, c.state.q, c.state.u, run->udot);
    benchmark::DoNotOptimize(run->udot.data());
    benchmark::ClobberMemory();
  }
  st.counters["check"] = run->udot(run->v0);
  // The closed-form α̈ of the 2-dof pendulum the ladder moves as (generators.hpp).
  const Eigen::Vector4d x = reference::SpatialLadderPendulum::state_of(c.model, c.state.q, c.state.u);
  st.counters["pendulum"] = spatial_ladder_pendulum_accelerations(x(0), x(1), x(2), x(3), c.cells)(0);
  st.counters["m"] = c.m;
  st.counters["n"] = c.model.nv;
}

int max_cells() {
  const char* text = std::getenv("LOOPDYN_SPATIAL_MAX_CELLS");
  return text != nullptr && *text != '\0' ? std::atoi(text) : kMaxCells;
}

// Builds every case up to LOOPDYN_SPATIAL_MAX_CELLS and registers one benchmark per method and L.
void register_benchmarks() {
  // Deques keep cases and runs at fixed addresses while the benchmarks hold pointers to them.
  static std::deque<Case> cases;
  static std::deque<Run> runs;
  const int largest = max_cells();
  for (int cells = 1; cells <= largest; cells *= 2) cases.push_back(make_case(cells));
  for (const std::string method : {"tree", "lagrange-on", "lagrange-dense", "nullspace", "rcr"}) {
    const bool dense = method != "tree" && method != "rcr";
    for (const Case& c : cases) {
      const Model& model = method == "tree" ? c.open : c.model;
      std::unique_ptr<Formulation> formulation;
      try {
        formulation = make_formulation(method, model);
      } catch (const ModelError&) {
        continue;  // `rcr` before it exists: not registered
      }
      const int v0 = model.v_index[model.joint_index("post0_top")];
      runs.push_back(Run{&c, std::move(formulation), v0, VecX::Zero(model.nv)});
      std::string name = method;
      name.append("/spatial-ladder/").append(std::to_string(c.cells));
      auto* b = benchmark::RegisterBenchmark(name.c_str(), bench_accelerations, &runs.back());
      b->Unit(benchmark::kMicrosecond);
      if (dense && c.cells >= kDenseLongCells) b->Repetitions(kDenseLongRepetitions);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);  // options first: a wrong one fails before any case is built
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  register_benchmarks();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
