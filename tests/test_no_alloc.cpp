// Proves that the per-step paths allocate nothing per call: ABA (factor, velocity, solve), RNEA,
// every loop formulation's accelerations, complete_state and complete_accepted_state, the
// projection and the reactions (after a first call, which may size lazily what depends on the
// state). This executable replaces malloc/calloc/realloc with counting wrappers around glibc's
// allocator, which also catches operator new and Eigen's aligned allocations (both go through
// malloc). Not built with the sanitizers, which interpose malloc themselves.
#include <atomic>
#include <cstdlib>

#include "loopdyn/core/body_coordinates.hpp"
#include "loopdyn/formulations/formulation.hpp"
#include "loopdyn/formulations/dca.hpp"
#include "loopdyn/formulations/srm.hpp"
#include "loopdyn/mechanisms/generators.hpp"
#include "loopdyn/loops/loop_structure.hpp"
#include "loopdyn/loops/projection.hpp"
#include "loopdyn/loops/reactions.hpp"
#include "loopdyn/loops/row_choice.hpp"
#include "loopdyn/mechanisms/square_nets.hpp"
#include "loopdyn/core/tree_dynamics.hpp"
#include "loopdyn/mechanisms/zoo.hpp"
#include "loopdyn/formulations/registry.hpp"
#include "loopdyn/run/integrators.hpp"
#include "test_support.hpp"

extern "C" {
void* __libc_malloc(std::size_t);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
}

namespace {
std::atomic<long> allocations{0};
}

extern "C" {
void* malloc(std::size_t n) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_malloc(n);
}
void* calloc(std::size_t a, std::size_t b) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_calloc(a, b);
}
void* realloc(void* p, std::size_t n) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_realloc(p, n);
}
}

namespace loopdyn {
namespace {

template <class F>
long allocations_in(F&& f) {
  const long before = allocations.load();
  f();
  return allocations.load() - before;
}

TEST(NoAllocation, CounterSeesEigenAllocations) {
  // The counter must be live, or the tests below could not fail.
  EXPECT_GT(allocations_in([] {
              VecX v(1000);
              v.setOnes();
              EXPECT_EQ(v.sum(), 1000.0);
            }),
            0);
}

TEST(NoAllocation, AbaAndRneaAllocateNothingPerCall) {
  for (int first_type = 0; first_type < 8; ++first_type) {
    const Model m = Model::build(test::random_tree(100 + first_type, 16, first_type));
    std::mt19937_64 rng(5);
    const VecX q = test::random_q(m, rng), u = test::random_vector(m.nv, rng), tau = test::random_vector(m.nv, rng);
    Mat6X fext = Mat6X::Ones(6, m.nbodies);
    AbaData aba_data(m);
    RneaData rnea_data(m);
    VecX udot(m.nv), tau_out(m.nv);
    EXPECT_EQ(allocations_in([&] { aba(m, aba_data, q, u, tau, &fext, udot); }), 0);
    EXPECT_EQ(allocations_in([&] { aba_solve(m, aba_data, tau, nullptr, Bias::no, udot); }), 0);
    EXPECT_EQ(allocations_in([&] { rnea(m, rnea_data, q, u, udot, &fext, tau_out); }), 0);
  }
}

// The rows of a geometrically redundant loop are checked after every accepted step
// (row_choice.hpp): the check allocates nothing; an exchange, rare, allocates its report.
TEST(NoAllocation, RowChoiceOfAGeometricallyRedundantLoopAllocatesNothing) {
  const Model m = Model::build(zoo_case(36, 6).mechanism);  // a Bennett linkage: 5 rows of rank 2
  ASSERT_EQ(zoo_case(36, 6).kind, "bennett");
  ASSERT_FALSE(m.loops().constraints.alternates().empty());
  RowChoice rows(m);
  ASSERT_TRUE(rows.active());
  ASSERT_EQ(rows.choose_again(m.q0), "");  // the structural check's choice is the best at q0
  EXPECT_EQ(allocations_in([&] { (void)rows.choose_again(m.q0); }), 0);
  for (const char* method : {"lagrange-dense", "lagrange-on", "gcp", "nullspace", "embedding"}) {
    auto f = make_formulation(method, m);
    VecX q = m.q0, u = m.u0, udot(m.nv);
    f->accelerations(0.0, q, u, udot);
    EXPECT_EQ(allocations_in([&] { f->complete_accepted_state(0.0, q, u); }), 0) << method;
  }
}

TEST(NoAllocation, LoopFormulationsProjectionAndReactionsAllocateNothingPerCall) {
  for (int seed = 0; seed < 4; ++seed) {
    const test::ClosedCase c = test::closed_loops(300 + seed, 7, 2, seed);
    const Model m = Model::build(c.mechanism);
    const Constraints& cons = m.loops().constraints;
    for (const char* method : {"lagrange-dense", "lagrange-on", "gcp", "nullspace", "embedding"}) {
      auto f = make_formulation(method, m);
      VecX q = c.q, u = c.u, udot(m.nv);
      f->accelerations(0.0, q, u, udot);  // first call: partition choice of gcp and nullspace
      EXPECT_EQ(allocations_in([&] { f->accelerations(0.0, q, u, udot); }), 0) << method << ", seed " << seed;
      EXPECT_EQ(allocations_in([&] { f->complete_state(0.0, q, u); }), 0) << method << ", seed " << seed;
      // After every accepted step the partitioned methods check whether to choose again.
      EXPECT_EQ(allocations_in([&] { f->complete_accepted_state(0.0, q, u); }), 0) << method << ", seed " << seed;
    }
    // Off the manifold, so that both projections run their Newton and solve paths.
    std::mt19937_64 rng(seed);
    const VecX q_off = test::moved(m, c.q, test::random_vector(m.nv, rng), 1e-4);
    const VecX u_off = c.u + test::random_vector(m.nv, rng, 1e-3);
    Projector projector(m, cons);
    VecX q = q_off, u = u_off;
    projector.project(0.0, q, u);
    q = q_off;
    u = u_off;
    EXPECT_EQ(allocations_in([&] { projector.project(0.0, q, u); }), 0) << "seed " << seed;
    EXPECT_GT(projector.stats().position_projections, 1);
    EXPECT_GT(projector.stats().velocity_projections, 1);
    Reactions reactions(m, cons);
    auto f = make_formulation("lagrange-dense", m);
    VecX udot(m.nv);
    f->accelerations(0.0, q, u, udot);
    EXPECT_EQ(allocations_in([&] { reactions.compute(0.0, q, u, udot, f->multipliers()); }), 0) << "seed " << seed;
  }
}

// srm's calls during a run: the derivative of its S iterates and the step's acceptance (λ_0 of the
// next step and the convergence check), on random coupled loops and the 3 x 3 square net.
TEST(NoAllocation, SrmAllocatesNothingPerStep) {
  std::vector<test::LoopState> cases;
  for (std::uint64_t seed = 300; seed < 303; ++seed) cases.push_back(test::random_loop_state(seed, 2));
  const Model net = Model::build(square_net_mechanism(3, 3, 0.5));
  cases.push_back({"square net 3 x 3", net, net.q0, net.u0});
  for (const test::LoopState& c : cases) {
    FormulationSettings settings;
    settings.srm.iterations = 3;
    Srm srm(c.model, settings);
    IntegratorSettings rk2;
    rk2.kind = IntegratorKind::rk2;
    srm.start(step_plan(rk2), c.q, c.u);
    VecX x(srm.state_size()), dx(srm.state_size()), udot(c.model.nv);
    srm.to_state(c.q, c.u, x);
    EXPECT_EQ(allocations_in([&] { srm.derivative(0.0, x, dx); }), 0) << c.name;
    EXPECT_EQ(allocations_in([&] { srm.accept(0.0, x); }), 0) << c.name;
    EXPECT_EQ(allocations_in([&] { srm.joint_accelerations(0.0, x, udot); }), 0) << c.name;
  }
}

// Sizes where Eigen's matrix products and triangular solves switch to their blocked kernels, whose
// packing buffers must fit its stack allocation limit (CMakeLists.txt): the planar ladder of 128
// cells (n = 384, m = 256), the largest benchmarked.
TEST(NoAllocation, LoopFormulationsAllocateNothingOnALargeLadder) {
  const Model m = Model::build(ladder_mechanism(128, LadderLayout::comb));
  const LadderState s = ladder_state(m, 128);
  for (const char* method : {"lagrange-dense", "lagrange-on", "gcp", "nullspace", "embedding"}) {
    auto f = make_formulation(method, m);
    VecX udot(m.nv);
    f->accelerations(0.0, s.q, s.u, udot);
    EXPECT_EQ(allocations_in([&] { f->accelerations(0.0, s.q, s.u, udot); }), 0) << method;
    // λ on demand (embedding), from the call's sweeps and from the call made again.
    EXPECT_EQ(allocations_in([&] { f->multipliers(); }), 0) << method;
    VecX q = s.q, u = s.u;
    f->accelerations(0.0, s.q, s.u, udot);
    f->complete_state(0.0, q, u);
    EXPECT_EQ(allocations_in([&] { f->multipliers(); }), 0) << method;
  }
}

// rcr on random single loops of every joint type, the four-bar and the spatial ladder of 128
// cells (m = 512), multipliers included.
TEST(NoAllocation, RcrAllocatesNothingPerCall) {
  std::vector<test::LoopState> cases;
  for (std::uint64_t seed = 0; seed < 8; ++seed) {
    const test::ClosedCase c = test::closed_loops(400 + seed, 6, 1, static_cast<int>(seed));
    cases.push_back({"random loop", Model::build(c.mechanism), c.q, c.u});
  }
  cases.push_back(test::assembled_state("fourbar_anderson", 1));
  Model ladder = Model::build(spatial_ladder_mechanism(128));
  const SpatialLadderState s = spatial_ladder_state(ladder, 128);
  cases.push_back({"spatial ladder 128", std::move(ladder), s.q, s.u});
  for (const test::LoopState& c : cases) {
    auto f = make_formulation("rcr", c.model);
    VecX q = c.q, u = c.u, udot(c.model.nv);
    f->accelerations(0.0, q, u, udot);  // first call: choice of the independent speeds
    EXPECT_EQ(allocations_in([&] { f->accelerations(0.0, q, u, udot); }), 0) << c.name;
    EXPECT_EQ(allocations_in([&] { f->multipliers(); }), 0) << c.name;  // on demand, from the sweeps
    EXPECT_EQ(allocations_in([&] { f->complete_state(0.0, q, u); }), 0) << c.name;
    f->accelerations(0.0, q, u, udot);
    f->complete_state(0.0, q, u);
    EXPECT_EQ(allocations_in([&] { f->multipliers(); }), 0) << c.name;  // from the call made again
  }
}

// dca's calls during a run: the derivative (assembly, iterations, disassembly) and the step's
// acceptance (both projections, the joint angles' reference), on one thread and on two (oneTBB's
// tasks come from its own pools, reused across calls), for random coupled loops, a gear train and
// a 6 x 6 square net (84 bodies: split into tasks).
TEST(NoAllocation, DcaAllocatesNothingPerStep) {
  std::vector<test::LoopState> cases;
  for (std::uint64_t seed = 300; seed < 303; ++seed) cases.push_back(test::random_loop_state(seed, 2));
  cases.push_back(test::assembled_state("geared_chain", 1));
  const Model net = Model::build(square_net_mechanism(6, 6, 0.5));
  cases.push_back({"square net 6 x 6", net, net.q0, net.u0});
  const Model chain = Model::build(square_chain_mechanism(200));  // bodies in parallel chunks
  cases.push_back({"square chain 200", chain, chain.q0, chain.u0});
  // Geometric redundancy (its rows gain rank at the unprojected stage).
  cases.push_back(test::assembled_state("iftomm_a04_bricard", 1));
  for (const test::LoopState& c : cases)
    for (int threads : {1, 2}) {
      FormulationSettings settings;
      settings.threads = threads;
      Dca dca(c.model, settings);
      VecX x(dca.state_size()), dx(dca.state_size());
      dca.to_state(c.q, c.u, x);
      dca.derivative(0.0, x, dx);
      dca.accept(0.0, x);
      x.tail(6 * c.model.nbodies) += 1e-3 * dx.tail(6 * c.model.nbodies);  // off the constraints
      EXPECT_EQ(allocations_in([&] { dca.derivative(0.0, x, dx); }), 0) << c.name << ", " << threads << " threads";
      EXPECT_EQ(allocations_in([&] { dca.accept(0.0, x); }), 0) << c.name << ", " << threads << " threads";
    }
}

// joint_state, the per-output map of the absolute-coordinate methods, with q and u sized.
TEST(NoAllocation, JointStateAllocatesNothingPerCall) {
  for (int first_type = 0; first_type < 8; ++first_type) {
    const Model m = Model::build(test::random_tree(500 + first_type, 16, first_type));
    std::mt19937_64 rng(first_type);
    const VecX q0 = test::random_q(m, rng), u0 = test::random_vector(m.nv, rng);
    BodyState s;
    body_state(m, q0, u0, s);
    VecX q(m.nq), u(m.nv);
    EXPECT_EQ(allocations_in([&] { joint_state(m, s, q0, q, u); }), 0) << "first type " << first_type;
  }
}

}  // namespace
}  // namespace loopdyn
