// dca's parallel driver (004 §1, §4.4): the two subtrees of a node are visited as two tasks of a
// oneTBB task arena down to subtrees of Dca::kParallelGrain bodies, and loops over bodies or rows
// run in chunks of Dca::kParallelLoopGrain. Each node's and element's arithmetic is the same
// whatever the thread count, so results are identical (bit for bit) for any number of threads.
#pragma once

#include <memory>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_invoke.h>
#include <tbb/task_arena.h>

#include "formulations/dca/tree.hpp"

namespace loopdyn::dca {

struct Pool {
  explicit Pool(int threads) : arena(threads) {}
  tbb::task_arena arena;

  /// One arena per thread count for the whole process, shared by every dca that asks for it:
  /// oneTBB's workers serve the arenas that exist, and with one per formulation the two-thread
  /// speed-up vanished after a dozen formulations had been made (bench/bench_dca.cpp).
  static std::shared_ptr<Pool> shared(int threads);
};

class ParallelDriver {
 public:
  /// threads > 1: in the shared arena of that many threads; 1: everything on the calling thread.
  explicit ParallelDriver(int threads) : threads_(threads) {
    if (threads_ > 1) pool_ = Pool::shared(threads_);
  }
  int threads() const { return threads_; }
  /// The running thread's number, 0 .. threads() − 1 (the arena's; 0 with one thread).
  int thread_index() const { return threads_ > 1 ? tbb::this_task_arena::current_thread_index() : 0; }

  /// Calls f(node) for every node, children before parents (post) or after (pre), two subtrees
  /// in parallel from kParallelGrain bodies on when threads > 1.
  template <class F>
  void post_order(const std::vector<Node>& nodes, int node, const F& f) const {
    const Node& n = nodes[node];
    if (n.body < 0) {
      if (pool_ && n.hi - n.lo >= Dca::kParallelGrain)
        tbb::parallel_invoke([&] { post_order(nodes, n.left, f); }, [&] { post_order(nodes, n.right, f); });
      else {
        post_order(nodes, n.left, f);
        post_order(nodes, n.right, f);
      }
    }
    f(node);
  }
  template <class F>
  void pre_order(const std::vector<Node>& nodes, int node, const F& f) const {
    f(node);
    const Node& n = nodes[node];
    if (n.body >= 0) return;
    if (pool_ && n.hi - n.lo >= Dca::kParallelGrain)
      tbb::parallel_invoke([&] { pre_order(nodes, n.left, f); }, [&] { pre_order(nodes, n.right, f); });
    else {  // right first: the exact reverse of the post order, in which the solve data is laid out
      pre_order(nodes, n.right, f);
      pre_order(nodes, n.left, f);
    }
  }
  /// f() in the task arena (or directly with one thread).
  template <class F>
  void in_pool(const F& f) const {
    if (pool_) pool_->arena.execute(f);
    else f();
  }
  /// f(i) for i = 0 .. n − 1, in parallel chunks when threads > 1; f(i) writes element i only.
  template <class F>
  void for_each(int n, const F& f) const {
    if (!pool_ || n < 2 * Dca::kParallelLoopGrain) {
      for (int i = 0; i < n; ++i) f(i);
      return;
    }
    in_pool([&] {
      tbb::parallel_for(tbb::blocked_range<int>(0, n, Dca::kParallelLoopGrain),
                        [&](const tbb::blocked_range<int>& range) {
                          for (int i = range.begin(); i < range.end(); ++i) f(i);
                        },
                        tbb::simple_partitioner());
    });
  }

 private:
  int threads_;
  std::shared_ptr<Pool> pool_;
};

}  // namespace loopdyn::dca
