// Time per right-hand side of `dca` (paper 004, divide and conquer with the augmented Lagrangian,
// formulations/dca.hpp) at 1 and 2 threads beside `embedding`, `srm` and `lagrange-dense` (and
// `tree`, the articulated-body algorithm, on the chain, which has no loops), on a
// tree (chain-N), a stack of coupled planar loops (ladder-comb-L) and a net of loops (paper 003's
// square net). Run bench/run_dca.sh for the tables of docs/performance.md.
//
// Cases (size in a name: chain N and square-net bars = bodies; ladder-comb L = cells, 3L bodies, as
// in ../shared/design/benchmarks.md; the `bodies` counter holds the number of bodies):
//   chain        chain_mechanism(N), state chain_state(N) (q, u; τ unused: no applied joint
//                forces), N = 16, 32, ..., 4096;
//   ladder-comb  ladder_mechanism(L, comb), state ladder_state: L = 6, 11, 22, 43, 86, 171, 342, 683,
//                1366, i.e. 18, 33, 66, 129, 258, 513, 1026, 2049, 4098 bodies (~16·2^k);
//   square-net   square_net_mechanism(R, R, 0.5) at its q0, u0 (at rest, loops closed), R = 3, 4, 6,
//                8, 11, 16, 22, 32, 45: 24, 40, 84, 144, 264, 544, 1012, 2112, 4140 bars (Model::build
//                of the last takes about 10 s, the tables' build column: the sparse QR of the loop rows).
//   Models are built on first use (Case::get), once per process, untimed.
//
// Methods and names (`<method>/<case>/<size>`; Google Benchmark appends `/real_time`, every
// benchmark here measures wall-clock time, UseRealTime(), so that the threaded runs compare):
//   dca/<case>/<size>/threads:T             T = 1, 2 (FormulationSettings::threads = T);
//   dca-projection/<case>/<size>/threads:1  one Dca::project(x) (positions, then velocities, 004 §3);
//   dca-paired/<case>/<size>                from 256 bodies: one call at 1 thread and one at 2 threads
//                                           (two Dca, one per thread count), back to back, their
//                                           order alternating; counters `t1_us`, `t2_us` (each
//                                           call's own wall time, mean over the repetition) and
//                                           `speedup` = their ratio: the two thread counts timed
//                                           within the same milliseconds, so that a change of the
//                                           host's load or of its placement of the two virtual
//                                           cores, which moves the separate dca/…/threads:T
//                                           benchmarks by up to 30 % between runs, falls on both;
//   embedding, srm                          every size (max_bodies; embedding on the 4140-bar net:
//                                           seconds per call, O(n³) over its one aggregated body);
//   lagrange-dense                          up to ~1024 bodies (<= 1100): O(n³);
//   tree                                    chain only (every size): the exact reference of the
//                                           chain's check (run_dca.sh), and dca's O(n) floor.
//
// One timed iteration = one call of Formulation::derivative(t = 0, x, dx), the integrator's call,
// with x = to_state(q, u) of the benchmark state made once before timing (dca: 13 absolute numbers
// per body; the joint methods [q; u]; srm its S iterates), nothing reused between calls but the
// workspaces. derivative() is called once before timing. srm is started first, start(rk2, h =
// 1e-3 s, q, u) (ε and λ_0, as the Simulator does), then to_state.
// dca-projection: each iteration copies x = x0 (13 doubles per body, timed, negligible beside the
// projection) and projects it; x0 is the already-closed benchmark state, so each projection does
// the same work: its position Newton iteration stops after its first increment (below ε_p or after
// the second), then the velocity iteration. The counters `pos_it`, `vel_it` hold the iteration counts.
//
// Only one formulation is alive at a time: the previous benchmark's is destroyed when the next one
// is prepared. Keeping all of them alive (one oneTBB task arena per 2-thread Dca) took away the
// 2-thread speed-up of every dca benchmark after the first dozen or so (full run while writing this:
// T1/T2 = 0.95-1.0 on the ladder and the net, 1.7-1.8 when the same benchmarks ran alone).
//
// Aggregates: Google Benchmark's mean, median, stddev and cv, and `min` over the repetitions
// (run_dca.sh: on a shared machine noise only adds time, so the least of repetitions spread over
// the run by random interleaving is the code's own cost).
//
// Counters: `check` = u̇ of speed 0 (the first joint: joint0 of the chain, the first ladder or net
// joint in model order) from formulation.joint_accelerations(0, x, u̇) once before timing, the same
// quantity for every method of a case (dca maps its body accelerations to the joints); `bodies`;
// `threads` (dca-paired: 1, that of its first dca); `build_s` (Model::build of the case, s); `others` (cores used on average by OTHER
// processes during the timed loop, from /proc/stat minus this process's getrusage: 0 on an idle
// machine; near 1 on 2 cores, a 2-thread run had no second core); for dca `depth` (assembly tree depth),
// `handles` (largest handle count of a node), `rows` (constraint rows), `acc_it` (iterations of λ
// in the last call), `solve_MB` and `kc_MB` (Dca::TreeShape: the tree's solve data, streamed by
// every sweep, and the K_C blocks kept per node, in 10⁶ bytes), `factor_Mmadds` and
// `critical_Mmadds` (multiply-adds of one factoring, and of its critical path, in 10⁶).
#include <benchmark/benchmark.h>

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <deque>
#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "loopdyn/formulations/formulation.hpp"
#include "loopdyn/formulations/dca.hpp"
#include "loopdyn/mechanisms/generators.hpp"
#include "loopdyn/mechanisms/square_nets.hpp"
#include "loopdyn/formulations/registry.hpp"
#include "loopdyn/run/integrators.hpp"

namespace {

using namespace loopdyn;

constexpr double kStep = 1e-3;         // srm's h (start), s
constexpr double kNetTilt = 0.5;       // rad, the CLI's default
constexpr int kDenseMaxBodies = 1100;  // lagrange-dense: up to ~1024 bodies
constexpr int kPairedMinBodies = 256;  // dca-paired: where the 2-thread target starts

struct Case {
  Case(std::string name_, int size_, int bodies_) : name(std::move(name_)), size(size_), bodies(bodies_) {}
  std::string name;  // "chain", "ladder-comb" or "square-net"
  int size;          // N, L or R
  int bodies;
  std::unique_ptr<Model> model;
  VecX q, u;
  double build_seconds = 0.0;
  bool has_dca_check = false;  // dca's check, from its first benchmark of the case
  double dca_check = 0.0;

  std::string label() const { return name + "/" + std::to_string(name == "square-net" ? bodies : size); }

  void get() {
    if (model) return;
    const auto t0 = std::chrono::steady_clock::now();
    if (name == "chain") {
      model = std::make_unique<Model>(Model::build(chain_mechanism(size)));
      const ChainState s = chain_state(size);
      q = s.q;
      u = s.u;
    } else if (name == "ladder-comb") {
      model = std::make_unique<Model>(Model::build(ladder_mechanism(size, LadderLayout::comb)));
      const LadderState s = ladder_state(*model, size);
      q = s.q;
      u = s.u;
    } else {
      model = std::make_unique<Model>(Model::build(square_net_mechanism(size, size, kNetTilt)));
      q = model->q0;
      u = model->u0;
    }
    build_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
};

// Largest number of bodies at which a method is registered: lagrange-dense up to ~1024 bodies
// (O(n³)); embedding and srm at every size here (the slowest call, embedding on the 4140-bar net,
// O(n³) over its one aggregated body, takes seconds: see run_dca.sh's table).
int max_bodies(const std::string& method) { return method == "lagrange-dense" ? kDenseMaxBodies : 1 << 30; }

enum class Mode { derivative, projection, paired };

struct Run {
  Run(std::string method_, int threads_, Mode mode_, Case* c_)
      : method(std::move(method_)), threads(threads_), mode(mode_), c(c_) {}
  std::string method;
  int threads;
  Mode mode;  // projection: time Dca::project; paired: derivative at 1 and at 2 threads, alternating
  Case* c;
  std::unique_ptr<Formulation> formulation;
  std::unique_ptr<Formulation> two_threads;  // paired: the second dca, FormulationSettings::threads = 2
  Dca* dca = nullptr;
  std::string error;
  VecX x0, x, dx, udot;
  double check = 0.0;

  // The formulations are freed once the next benchmark starts (release), so that one benchmark's
  // are alive at a time, as in a simulation.
  void release() {
    formulation.reset();
    two_threads.reset();
    dca = nullptr;
  }

  // On the first call (the benchmark function is called again for every repetition), untimed.
  bool prepare() {
    static Run* live = nullptr;  // the run whose formulation is alive
    if (live != this && live) live->release();
    live = this;
    if (formulation) return true;
    if (!error.empty()) return false;
    try {
      c->get();
      const Model& model = *c->model;
      FormulationSettings settings;
      settings.threads = threads;
      formulation = make_formulation(method, model, settings);
      dca = dynamic_cast<Dca*>(formulation.get());
      if (method == "srm") {
        IntegratorSettings rk2;
        rk2.kind = IntegratorKind::rk2;
        rk2.dt = kStep;
        formulation->start(step_plan(rk2), c->q, c->u);
      }
      const int size = formulation->state_size();
      x0.resize(size);
      dx.resize(size);
      udot.resize(model.nv);
      formulation->to_state(c->q, c->u, x0);
      x = x0;
      if (dca && c->has_dca_check) {  // identical for every thread count (dca.hpp): computed once per case
        check = c->dca_check;
      } else {
        formulation->joint_accelerations(0.0, x, udot);
        check = udot(0);
        if (dca) c->has_dca_check = true, c->dca_check = check;
      }
      x = x0;
      formulation->derivative(0.0, x, dx);
      if (mode == Mode::projection) dca->project(x);
      if (mode == Mode::paired) {
        settings.threads = 2;
        two_threads = make_formulation(method, model, settings);
        two_threads->derivative(0.0, x, dx);
      }
      x = x0;
    } catch (const std::exception& e) {
      error = e.what();
      formulation.reset();
      return false;
    }
    return true;
  }
};

// CPU seconds used by every process on the machine (/proc/stat, all cores) and by this one.
double machine_cpu_seconds() {
  std::ifstream f("/proc/stat");
  std::string cpu;
  double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  f >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
  return (user + nice + system + irq + softirq) / 100.0;  // USER_HZ = 100
}
double own_cpu_seconds() {
  rusage r{};
  getrusage(RUSAGE_SELF, &r);
  return r.ru_utime.tv_sec + r.ru_stime.tv_sec + 1e-6 * (r.ru_utime.tv_usec + r.ru_stime.tv_usec);
}

void bench_run(benchmark::State& st, Run* run) {
  if (!run->prepare()) {
    st.SkipWithError(run->error.c_str());
    return;
  }
  const double machine0 = machine_cpu_seconds(), own0 = own_cpu_seconds();
  const auto wall0 = std::chrono::steady_clock::now();
  if (run->mode == Mode::paired) {
    using Clock = std::chrono::steady_clock;
    double seconds[2] = {0.0, 0.0};
    Formulation* f[2] = {run->formulation.get(), run->two_threads.get()};
    int first = 0;
    for (auto _ : st) {
      for (int k : {first, 1 - first}) {
        const auto t0 = Clock::now();
        f[k]->derivative(0.0, run->x, run->dx);
        benchmark::DoNotOptimize(run->dx.data());
        benchmark::ClobberMemory();
        seconds[k] += std::chrono::duration<double>(Clock::now() - t0).count();
      }
      first = 1 - first;
    }
    const double calls = static_cast<double>(st.iterations());
    st.counters["t1_us"] = 1e6 * seconds[0] / calls;
    st.counters["t2_us"] = 1e6 * seconds[1] / calls;
    st.counters["speedup"] = seconds[0] / seconds[1];
  } else if (run->mode == Mode::projection) {
    for (auto _ : st) {
      run->x = run->x0;
      run->dca->project(run->x);
      benchmark::DoNotOptimize(run->x.data());
      benchmark::ClobberMemory();
    }
  } else {
    for (auto _ : st) {
      run->formulation->derivative(0.0, run->x, run->dx);
      benchmark::DoNotOptimize(run->dx.data());
      benchmark::ClobberMemory();
    }
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  if (wall > 0.02)  // /proc/stat counts in 10 ms ticks
    st.counters["others"] = std::max(0.0, (machine_cpu_seconds() - machine0 - (own_cpu_seconds() - own0)) / wall);
  st.counters["check"] = run->check;
  st.counters["bodies"] = run->c->bodies;
  st.counters["threads"] = run->threads;
  st.counters["build_s"] = run->c->build_seconds;
  if (run->dca) {
    const Dca::TreeShape shape = run->dca->tree_shape();
    st.counters["depth"] = shape.depth;
    st.counters["handles"] = shape.max_handles;
    st.counters["rows"] = shape.rows;
    st.counters["solve_MB"] = shape.solve_bytes / 1e6;
    st.counters["kc_MB"] = shape.kc_bytes / 1e6;
    st.counters["factor_Mmadds"] = shape.factor_madds / 1e6;
    st.counters["critical_Mmadds"] = shape.critical_madds / 1e6;
    const Dca::Diagnostics& d = run->dca->diagnostics();
    st.counters["acc_it"] = d.acceleration_iterations;
    if (run->mode == Mode::projection) {
      st.counters["pos_it"] = d.position_iterations;
      st.counters["vel_it"] = d.velocity_iterations;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  // Deques keep cases and runs at fixed addresses while the benchmarks hold pointers to them.
  static std::deque<Case> cases;
  static std::deque<Run> runs;
  for (int n = 16; n <= 4096; n *= 2) cases.emplace_back("chain", n, n);
  for (int l : {6, 11, 22, 43, 86, 171, 342, 683, 1366}) cases.emplace_back("ladder-comb", l, 3 * l);
  for (int r : {3, 4, 6, 8, 11, 16, 22, 32, 45}) cases.emplace_back("square-net", r, 2 * r * r + 2 * r);

  const auto add = [](const std::string& name, Run& run) {
    benchmark::RegisterBenchmark(name.c_str(), bench_run, &run)
        ->Unit(benchmark::kMicrosecond)
        ->UseRealTime()
        ->ComputeStatistics("min", [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); });
  };
  for (Case& c : cases) {
    for (int t : {1, 2}) {
      runs.emplace_back("dca", t, Mode::derivative, &c);
      add("dca/" + c.label() + "/threads:" + std::to_string(t), runs.back());
    }
    if (c.bodies >= kPairedMinBodies) {
      runs.emplace_back("dca", 1, Mode::paired, &c);
      add("dca-paired/" + c.label(), runs.back());
    }
    runs.emplace_back("dca", 1, Mode::projection, &c);
    add("dca-projection/" + c.label() + "/threads:1", runs.back());
    for (const std::string method : {"embedding", "srm", "lagrange-dense", "tree"}) {
      if (c.bodies > max_bodies(method) || (method == "tree" && c.name != "chain")) continue;
      runs.emplace_back(method, 1, Mode::derivative, &c);
      add(method + "/" + c.label(), runs.back());
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
