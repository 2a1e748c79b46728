// The IFToMM benchmark cases of docs/results.md with their references (iftomm.hpp for A02's exact
// motion, absolute_coordinates.hpp for the others): what the tests and bench/iftomm_results run.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absolute_coordinates.hpp"
#include "loopdyn/formulation.hpp"
#include "loopdyn/mechanism.hpp"
#include "loopdyn/simulator.hpp"

namespace loopdyn::reference {

struct BenchmarkCase {
  std::string name;
  Mechanism mechanism;
  double t_end = 0.0, output_dt = 0.0;
  std::string marker;         ///< the benchmark's reported point
  double energy_scale = 1.0;  ///< potential-energy scale: total weight × 1 m (J)
  /// The marker's world position at each output time (sorted, from 0).
  std::function<std::vector<Vec3>(const std::vector<double>&)> reference;
};

/// Body states of the mechanism's initial q, u (mechanism body order), from loopdyn's tree
/// kinematics at t = 0 only: the input of the absolute-coordinate reference, not its dynamics.
std::vector<BodyState> initial_bodies(const Mechanism& m);

/// A02 with n four-bars over t_end (the benchmark: n = 40, 20 s), B0 from the exact motion.
BenchmarkCase a02_case(int n, double t_end);
/// A04 Bricard (models/iftomm_a04_bricard.yaml) over t_end (the benchmark: 10 s), P3 from the
/// absolute-coordinate reference with RK4 step h.
BenchmarkCase a04_case(const std::string& models_dir, double t_end, double h = 2.5e-4);

/// Runs formulation f on the case's model (built from c.mechanism) from its initial state as every
/// IFToMM table and test does: dopri5 at rtol = atol = 1e-10, the case's length and output interval.
Trajectory simulate_case(const BenchmarkCase& c, const Model& model, Formulation& f);

}  // namespace loopdyn::reference
