// Tree dynamics benchmarks: ABA, RNEA and CRBA on chain-N (shared/design/benchmarks.md) and on
// loopdyn's branched-N binary tree (generators.hpp), N = 8, 32, 128, 512.
//
// One timed call = one aba / rnea / crba from (q, u, τ) (or (q, u, q̈), or q): kinematics included,
// nothing reused from the previous call. Models, states and workspaces are built before the timed
// loop. Counters: `check` (ABA: q̈ of joint0; RNEA: τ of joint0 at the drawn q̈; CRBA: M of joint0,
// joint0) and `bodies` (N, so that time / bodies gives the cost per body).
// Run bench/run_tree.sh for the table in docs/performance.md.
#include <benchmark/benchmark.h>

#include <deque>
#include <string>

#include "loopdyn/mechanisms/generators.hpp"
#include "loopdyn/core/tree_dynamics.hpp"

namespace {

using namespace loopdyn;

struct Case {
  std::string name;  // "chain" or "branched"
  int n;
  Model model;
  ChainState state;
  int v0;  // speed index of joint0
};

Case make_case(const std::string& name, int n) {
  Model model = Model::build(name == "chain" ? chain_mechanism(n) : branched_tree_mechanism(n));
  ChainState state = name == "chain" ? chain_state(n) : branched_tree_state(model);
  const int v0 = model.v_index[model.joint_index("joint0")];
  return Case{name, n, std::move(model), std::move(state), v0};
}

void set_counters(benchmark::State& st, const Case& c, double check) {
  st.counters["check"] = check;
  st.counters["bodies"] = c.n;
}

void bench_aba(benchmark::State& st, const Case* c) {
  const Model& m = c->model;
  AbaData data(m);
  VecX qdd = VecX::Zero(m.nv);
  for (auto _ : st) {
    aba(m, data, c->state.q, c->state.u, c->state.tau, nullptr, qdd);
    benchmark::DoNotOptimize(qdd.data());
    benchmark::ClobberMemory();
  }
  set_counters(st, *c, qdd(c->v0));
}

void bench_rnea(benchmark::State& st, const Case* c) {
  const Model& m = c->model;
  RneaData data(m);
  VecX tau = VecX::Zero(m.nv);
  for (auto _ : st) {
    rnea(m, data, c->state.q, c->state.u, c->state.qdd, nullptr, tau);
    benchmark::DoNotOptimize(tau.data());
    benchmark::ClobberMemory();
  }
  set_counters(st, *c, tau(c->v0));
}

void bench_crba(benchmark::State& st, const Case* c) {
  const Model& m = c->model;
  CrbaData data(m);
  MatX M = MatX::Zero(m.nv, m.nv);
  for (auto _ : st) {
    crba(m, data, c->state.q, M);
    benchmark::DoNotOptimize(M.data());
    benchmark::ClobberMemory();
  }
  set_counters(st, *c, M(c->v0, c->v0));
}

}  // namespace

int main(int argc, char** argv) {
  // A deque keeps the cases at fixed addresses while the benchmarks hold pointers to them.
  static std::deque<Case> cases;
  for (const char* name : {"chain", "branched"})
    for (int n : {8, 32, 128, 512}) cases.push_back(make_case(name, n));
  for (const Case& c : cases) {
    const std::string suffix = "/" + c.name + "/" + std::to_string(c.n);
    benchmark::RegisterBenchmark(("aba" + suffix).c_str(), bench_aba, &c)->Unit(benchmark::kNanosecond);
    benchmark::RegisterBenchmark(("rnea" + suffix).c_str(), bench_rnea, &c)->Unit(benchmark::kNanosecond);
    benchmark::RegisterBenchmark(("crba" + suffix).c_str(), bench_crba, &c)->Unit(benchmark::kNanosecond);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
