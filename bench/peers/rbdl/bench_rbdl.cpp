// RBDL ForwardDynamics (ABA) on chain-N (shared/design/benchmarks.md), N = 8, 32, 128, 512,
// named aba/chain/N like loopdyn's bench/bench_tree.cpp, with counters `check` (q̈ of joint 0) and
// `bodies` (N). One timed call = RigidBodyDynamics::ForwardDynamics(model, Q, QDot, Tau, QDDot):
// kinematics included (RBDL's ABA runs jcalc and the parent transforms in its first pass).
#include <benchmark/benchmark.h>

#include <rbdl/rbdl.h>

#include "loopdyn/mechanisms/generators.hpp"

#include <deque>
#include <memory>
#include <string>

namespace {

namespace RBD = RigidBodyDynamics;
using RBD::Math::Matrix3d;
using RBD::Math::SpatialTransform;
using RBD::Math::Vector3d;
using RBD::Math::VectorNd;

// The benchmark's random stream, loopdyn's own (header-only) SplitMix64: bit-for-bit as in
// benchmarks.md, so RBDL is timed on the very same numbers.
using loopdyn::SplitMix64;

struct Case {
  int n;
  std::unique_ptr<RBD::Model> model;
  VectorNd q, u, tau;
};

Case make_chain(int n) {
  Case c;
  c.n = n;
  c.model = std::make_unique<RBD::Model>();
  RBD::Model& m = *c.model;
  m.gravity = Vector3d(0.0, 0.0, -9.81);
  // Body(mass, com, inertia about the centre of mass) (rbdl/Body.h: mInertia is "at the center of mass").
  const RBD::Body body(1.0, Vector3d(0.0, 0.0, 0.5), Matrix3d(0.1, 0.0, 0.0, 0.0, 0.1, 0.0, 0.0, 0.0, 0.01));
  const RBD::JointType axis_type[3] = {RBD::JointTypeRevoluteX, RBD::JointTypeRevoluteY, RBD::JointTypeRevoluteZ};
  unsigned int parent = 0;  // 0 = RBDL's root (world)
  for (int i = 0; i < n; ++i) {
    const SpatialTransform at = i == 0 ? SpatialTransform() : RBD::Math::Xtrans(Vector3d(0.0, 0.0, 1.0));
    parent = m.AddBody(parent, at, RBD::Joint(axis_type[2 - i % 3]), body, "link" + std::to_string(i));
  }
  // State: SplitMix64(12345 + N); q (N), then u (N), then τ (N), each uniform(−1, 1).
  SplitMix64 rng(12345u + static_cast<std::uint64_t>(n));
  c.q = VectorNd::Zero(m.q_size);
  c.u = VectorNd::Zero(m.qdot_size);
  c.tau = VectorNd::Zero(m.qdot_size);
  for (int k = 0; k < n; ++k) c.q[k] = rng.uniform(-1.0, 1.0);
  for (int k = 0; k < n; ++k) c.u[k] = rng.uniform(-1.0, 1.0);
  for (int k = 0; k < n; ++k) c.tau[k] = rng.uniform(-1.0, 1.0);
  return c;
}

void bench_aba(benchmark::State& st, Case* c) {
  RBD::Model& m = *c->model;
  VectorNd qdd = VectorNd::Zero(m.qdot_size);
  for (auto _ : st) {
    RBD::ForwardDynamics(m, c->q, c->u, c->tau, qdd);
    benchmark::DoNotOptimize(qdd.data());
    benchmark::ClobberMemory();
  }
  // Body 1 (joint 0) has q index 0 for this chain of 1-DoF joints.
  st.counters["check"] = qdd[m.mJoints[1].q_index];
  st.counters["bodies"] = c->n;
}

}  // namespace

int main(int argc, char** argv) {
  static std::deque<Case> cases;
  for (int n : {8, 32, 128, 512}) cases.push_back(make_chain(n));
  for (Case& c : cases)
    benchmark::RegisterBenchmark(("aba/chain/" + std::to_string(c.n)).c_str(), bench_aba, &c)
        ->Unit(benchmark::kNanosecond);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
