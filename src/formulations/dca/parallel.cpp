#include "formulations/dca/parallel.hpp"

#include <map>
#include <mutex>

namespace loopdyn::dca {

std::shared_ptr<Pool> Pool::shared(int threads) {
  static std::mutex mutex;
  static std::map<int, std::weak_ptr<Pool>> pools;
  const std::lock_guard<std::mutex> lock(mutex);
  std::shared_ptr<Pool> pool = pools[threads].lock();
  if (!pool) {
    pool = std::make_shared<Pool>(threads);
    pools[threads] = pool;
  }
  return pool;
}

}  // namespace loopdyn::dca
