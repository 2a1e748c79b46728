// Proves that ABA (factor, velocity, solve) and RNEA allocate nothing per call: this executable
// replaces malloc/calloc/realloc with counting wrappers around glibc's allocator, which also
// catches operator new and Eigen's aligned allocations (both go through malloc). Not built with
// the sanitizers, which interpose malloc themselves.
#include <atomic>
#include <cstdlib>

#include "loopdyn/tree_dynamics.hpp"
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

}  // namespace
}  // namespace loopdyn
