#include "formulations/dca/parameters.hpp"

#include <algorithm>
#include <cmath>
#include <thread>
#include <utility>

#include "formulations/setting_check.hpp"

namespace loopdyn::dca {

namespace {

void check_setting(bool ok, const char* what, double value) { detail::check_setting(ok, "dca", what, value); }

}  // namespace

Parameters parameters_of(const FormulationSettings& settings) {
  check_settings(settings);
  Parameters p;
  p.alpha = settings.dca.alpha;
  p.mu = settings.dca.mu;
  p.omega = settings.dca.omega;
  p.max_iterations = settings.dca.max_iterations;
  p.eps_p = settings.dca.position_tolerance;
  p.eps_v = settings.dca.velocity_tolerance;
  p.eps_a = settings.dca.acceleration_tolerance;
  p.projections = settings.dca.projections;
  p.rank_tolerance = settings.rank_tolerance;
  p.threads = settings.threads > 0 ? settings.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));

  check_setting(std::isfinite(p.alpha) && p.alpha > 0.0, "the penalty α (`dca_alpha`) must be finite and > 0", p.alpha);
  check_setting(std::isfinite(p.mu) && p.mu >= 0.0, "μ (`dca_mu`) must be finite and >= 0", p.mu);
  check_setting(std::isfinite(p.omega) && p.omega >= 0.0, "Ω (`dca_omega`) must be finite and >= 0", p.omega);
  check_setting(p.max_iterations >= 1, "the largest number of iterations (`dca_max_iterations`) must be at least 1",
                p.max_iterations);
  for (const auto& [eps, what] : {std::pair{p.eps_p, "ε_p (`dca_position_tolerance`) must be finite and > 0"},
                                  std::pair{p.eps_v, "ε_v (`dca_velocity_tolerance`) must be finite and > 0"},
                                  std::pair{p.eps_a, "ε_a (`dca_acceleration_tolerance`) must be finite and > 0"}})
    check_setting(std::isfinite(eps) && eps > 0.0, what, eps);
  return p;
}

}  // namespace loopdyn::dca
