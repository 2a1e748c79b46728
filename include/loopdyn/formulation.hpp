// Formulation: maps (t, q, u) to u̇ (and loop multipliers λ where the method has them), applied
// forces of the model included. One class per method of the papers, each owning a workspace
// sized at construction; names are the CLI's `--method` values (docs/methods.md).
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "loopdyn/forces.hpp"
#include "loopdyn/model.hpp"

namespace loopdyn {

class Formulation {
 public:
  virtual ~Formulation() = default;
  virtual std::string_view name() const = 0;
  /// u̇ (nv) at (t, q, u). Throws std::runtime_error with the time on a physics failure.
  virtual void accelerations(double t, const VecX& q, const VecX& u, Eigen::Ref<VecX> udot) = 0;
  /// Loop-closure multipliers of the last call (empty for methods without them).
  virtual const VecX& multipliers() const { return no_multipliers_; }
  /// Kinematics of the last call (positions and velocities at its q, u).
  virtual const KinematicsData& kinematics() const = 0;

 private:
  VecX no_multipliers_;
};

/// Names of every formulation loopdyn knows, implemented or not.
const std::vector<std::string_view>& formulation_names();
/// Creates the formulation `name` for `model`. Throws ModelError when the name is unknown, the
/// method is not implemented yet, or it cannot handle the model (e.g. `tree` with loops).
std::unique_ptr<Formulation> make_formulation(std::string_view name, const Model& model);

}  // namespace loopdyn
