// The aggregated body's steps of the articulated-body sweeps (Jain 002 eqs 50-57), which
// tree_dynamics.cpp's factor_sweep and solve_sweep call at the top body of each aggregated body.
#pragma once

#include "loopdyn/core/tree_dynamics.hpp"

namespace loopdyn::detail {

/// Eq 50 at aggregated body g: its articulated inertia added to the body it hangs from.
void factor_aggregated(const Model& model, AbaData& d, AggregatedBodyData& g);
/// Eqs 54-55 at aggregated body g: ε, ν and the bias force passed to the body it hangs from.
void bias_aggregated(const Model& model, AbaData& d, AggregatedBodyData& g, const Eigen::Ref<const VecX>& tau,
                     bool with_bias);
/// Eq 56 at aggregated body g: its speeds' accelerations and its bodies'.
void accelerate_aggregated(const Model& model, AbaData& d, AggregatedBodyData& g, const Vec6& a_ground, bool with_bias,
                           Eigen::Ref<VecX> udot);

}  // namespace loopdyn::detail
