// Time per step on paper 003's square chains and nets (issue 16, item 4): `srm` (sequential
// regularization, formulations/srm.hpp) beside the methods that solve for the multipliers, and
// `tree` (the articulated-body algorithm) on the same bars with the loop-closing joints removed,
// the floor srm is measured against (its check value is the open tree's own).
//
// Cases (square_nets.hpp; the size in a name is the number of bars = bodies):
//   square-chain  K = 5, 21, 85, 341, 1365 squares: 3K + 1 = 16, 64, 256, 1024, 4096 bars, K loops;
//   square-net    R = C = 3, 5, 11, 22, 45: 2RC + R + C = 24, 60, 264, 1012, 4140 bars, RC loops,
//                 turned by tilt 0.5 rad about joint 0 (the CLI's default).
// Methods: `srm` (default settings: S = 2 iterates, ε = h·S·a_max from start()) and `tree` at every
// size; `lagrange-dense`, `nullspace` and `embedding` up to about 1024 bars only: on these
// mechanisms every loop shares bars with its neighbours, so embedding's single aggregated body
// holds the whole chain or net and all three are O(n³) (0.15-0.35 s per step at 1024 bars);
// `rcr` where it applies (it does not: neighbouring squares share a bar but not their base). A
// method make_formulation refuses (ModelError: out of scope) is not registered; the program says
// so on stderr.
//
// One timed iteration = ONE explicit rk2 (Heun) step of the method's own state x (srm: its S
// iterates), written out with the Formulation interface as the Simulator's integrator does it:
//     x = x0;  k1 = ẋ(t, x);  x1 = x + h k1;  k2 = ẋ(t + h, x1);  x = x + h/2 (k1 + k2);  accept(t + h, x)
// with t = 0, h = 1e-3 s and x0 = to_state(q0, u0), the model's initial state (at rest, loops
// closed). Restarting from the same x0 makes every timed step do the same work; the copy x = x0 is
// timed (O(n), negligible beside two derivatives). nullspace and embedding run their position and
// velocity analyses inside derivative() (complete_state); srm's accept() computes λ_0 of the next
// step and its convergence check (one more articulated-body solve). The loop allocates nothing of
// its own (x, x1, k1, k2 are sized before timing; srm allocates nothing either: test_no_alloc).
// start(rk2, h, q0, u0) is called once per method before timing (srm computes ε and the exact
// multipliers λ_0 there; the others ignore it). srm's λ_0 then carries from one timed step to the
// next (λ_S after a step from x0): it changes the values, not the work.
//
// Counters: `check` = u of joint h0_0_pin after the first step from (q0, u0) right after start()
// (taken before timing; the methods that close the loops agree to srm's regularization error,
// about 2e-7 relative on the nets and below 1e-8 on the chains), `n` (nv), `m` (kept constraint
// rows of the closed mechanism, also on `tree`), `bars` (bodies). Run bench/run_square_nets.sh for
// the tables.
#include <benchmark/benchmark.h>

#include <deque>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "loopdyn/formulations/formulation.hpp"
#include "loopdyn/loops/loop_structure.hpp"
#include "loopdyn/mechanisms/square_nets.hpp"
#include "loopdyn/formulations/registry.hpp"
#include "loopdyn/run/integrators.hpp"

namespace {

using namespace loopdyn;

constexpr double kStep = 1e-3;       // h, s
constexpr double kNetTilt = 0.5;     // rad, the CLI's default (`loopdyn generate square-net`)
constexpr int kDenseMaxBars = 1100;  // lagrange-dense, nullspace, embedding, rcr: up to ~1024 bars

struct Case {
  Case(std::string name_, int squares_, int bars_) : name(std::move(name_)), squares(squares_), bars(bars_) {}
  std::string name;  // "square-chain" or "square-net"
  int squares;       // chain: K; net: R = C
  int bars;          // 3K + 1 or 2RC + R + C
  // Built on first use (Case::get), once per process: Model::build of the 4140-bar net takes about
  // 10 s (docs/performance.md, the dca tables' build column; the sparse QR of its loop rows, which act on long tree paths), so only the cases of the
  // benchmarks that run are built.
  std::unique_ptr<Model> model, open;  // open: the same bars and tree joints without the loop-closing joints
  int m = 0;                           // kept constraint rows

  void get() {
    if (model) return;
    const Mechanism mechanism =
        name == "square-chain" ? square_chain_mechanism(squares) : square_net_mechanism(squares, squares, kNetTilt);
    model = std::make_unique<Model>(Model::build(mechanism));
    Mechanism tree = mechanism;
    std::erase_if(tree.joints, [](const JointSpec& j) { return j.cut; });
    open = std::make_unique<Model>(Model::build(tree));
    m = model->loops().constraints.rows();
  }
};

struct Run {
  Run(std::string method_, Case* c_) : method(std::move(method_)), c(c_) {}
  std::string method;
  Case* c;
  const Model* model = nullptr;  // *c->model, or *c->open for `tree`
  std::unique_ptr<Formulation> formulation;
  std::string out_of_scope;  // make_formulation's ModelError
  IntegratorSettings rk2;
  VecX x0, x, x1, k1, k2, q, u;
  int v0 = 0;  // speed index of joint h0_0_pin
  double check = 0.0;

  // One Heun step from x0, leaving the result in x.
  void step() {
    x = x0;
    formulation->derivative(0.0, x, k1);
    x1.noalias() = x + kStep * k1;
    formulation->derivative(kStep, x1, k2);
    x += (0.5 * kStep) * (k1 + k2);
    formulation->accept(kStep, x);
  }

  // On the first call (a benchmark function is called again for every repetition), not timed:
  // the models, the formulation, start() and the check step. False when the method is out of scope.
  bool prepare() {
    if (formulation) return true;
    if (!out_of_scope.empty()) return false;
    c->get();
    model = method == "tree" ? c->open.get() : c->model.get();
    try {
      formulation = make_formulation(method, *model);
    } catch (const ModelError& e) {
      out_of_scope = e.what();
      return false;
    }
    const int size = formulation->state_size();
    for (VecX* v : {&x0, &x, &x1, &k1, &k2}) v->resize(size);
    q.resize(model->nq);
    u.resize(model->nv);
    v0 = model->v_index[model->joint_index("h0_0_pin")];
    rk2.kind = IntegratorKind::rk2;
    rk2.dt = kStep;
    formulation->start(step_plan(rk2), model->q0, model->u0);
    formulation->to_state(model->q0, model->u0, x0);
    step();
    formulation->to_joint(x, q, u);
    check = u(v0);
    return true;
  }
};

void bench_step(benchmark::State& st, Run* run) {
  if (!run->prepare()) {
    st.SkipWithError(("out of scope: " + run->out_of_scope).c_str());
    return;
  }
  for (auto _ : st) {
    run->step();
    benchmark::DoNotOptimize(run->x.data());
    benchmark::ClobberMemory();
  }
  st.counters["check"] = run->check;
  st.counters["n"] = run->model->nv;
  st.counters["m"] = run->c->m;
  st.counters["bars"] = run->c->bars;
}

}  // namespace

int main(int argc, char** argv) {
  // Deques keep cases and runs at fixed addresses while the benchmarks hold pointers to them.
  static std::deque<Case> cases;
  static std::deque<Run> runs;
  for (int k : {5, 21, 85, 341, 1365}) cases.emplace_back("square-chain", k, 3 * k + 1);
  for (int r : {3, 5, 11, 22, 45}) cases.emplace_back("square-net", r, 2 * r * r + 2 * r);
  for (const std::string method : {"srm", "tree", "lagrange-dense", "nullspace", "embedding", "rcr"}) {
    const bool dense = method != "srm" && method != "tree";
    std::string refused;  // the family whose smallest member the method refused
    for (std::size_t i = 0; i < cases.size(); ++i) {
      Case& c = cases[i];
      if (c.name == refused || (dense && c.bars > kDenseMaxBars)) continue;
      // Whether a method applies is decided by the structure of the loops, the same at every size
      // of a family: probe it on the family's smallest member (cheap to build; cases come
      // smallest first) and register none of the family where it does not apply.
      if (i == 0 || c.name != cases[i - 1].name) {
        Run probe(method, &c);
        if (!probe.prepare()) {
          std::cerr << "bench_square_nets: " << method << " does not apply to " << c.name << ", not run: "
                    << probe.out_of_scope << "\n";
          refused = c.name;
          continue;
        }
      }
      runs.emplace_back(method, &c);
      std::string name = method;
      name.append("/").append(c.name).append("/").append(std::to_string(c.bars));
      benchmark::RegisterBenchmark(name.c_str(), bench_step, &runs.back())->Unit(benchmark::kMicrosecond);
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
