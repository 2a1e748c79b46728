// Settings shared by the loop methods (each uses what applies to it) and their option table
// (core/options.hpp). A method's own settings sit beside it: rcr_settings.hpp, srm_settings.hpp,
// dca_settings.hpp; FormulationSettings (formulation.hpp) holds them all.
#pragma once

#include "loopdyn/core/options.hpp"

namespace loopdyn {

struct LoopMethodSettings {
  /// Baumgarte stabilization of the acceleration constraint (paper 001 eqs 6-9):
  /// Φ̈ + 2α Φ̇ + β² Φ = 0. Zero (the default) integrates G u̇ = γ unstabilized.
  double baumgarte_alpha = 0.0;
  double baumgarte_beta = 0.0;
  /// Relative threshold below which a pivot of the multiplier system counts as zero (rank loss at
  /// a singular configuration or a redundant constraint): multipliers are then minimum-norm.
  double rank_tolerance = 1e-10;
  /// Position analysis of gcp and nullspace (paper 001 eqs 12-13): Newton stops when every kept
  /// constraint row has |Φ| <= position_tolerance (metres for `along` rows, cosines for `dot`
  /// rows), and fails after max_position_iterations.
  double position_tolerance = 1e-10;
  int max_position_iterations = 25;
  /// gcp, nullspace and embedding choose the dependent coordinates again (001 §2.2), between two
  /// steps, when the condition number of the dependent block has grown by this factor since they
  /// were chosen (and another choice is twice better); a coordinate marked independent yields when
  /// keeping it would cost this factor (formulations/coordinate_partition.hpp). Small: the
  /// independent coordinates must not come near a limit of their motion within a step (measured:
  /// 100 lost 20 % of the energy of a triple rocker at rk4 h = 1e-3, 10 lost 1e-4, 4 loses 2e-6).
  double partition_condition_growth = 4.0;
  /// What a method does at a singular configuration of the loops (a change point, where the
  /// constraint rows lose rank and branches of the motion meet):
  ///  * `stop` (the default): stop with an error naming the method, the time, the loops and the
  ///    rank, and what to use instead. The Lagrange-multiplier methods (lagrange-dense,
  ///    lagrange-on) refuse runs that can reach a change point (change_points.hpp) and stop when
  ///    their multiplier system loses rank: integrating G u̇ = γ they hold no position information
  ///    that tells the continuing branch from the others, and on the IFToMM N-four-bar they leave
  ///    the motion at the second crossing without notice. `rcr` stops when the condition indicator
  ///    of a loop's dependent speeds exceeds RcrSettings::singular_condition with every choice of them.
  ///  * `proceed` (`continue` in the option table): report and go on (the Lagrange methods with
  ///    minimum-norm multipliers; rcr with its best choice), for studies of what happens there.
  /// gcp, nullspace, embedding and rcr choose their partition again on their own
  /// (formulations/coordinate_partition.hpp, formulations/rcr.hpp).
  enum class OnSingular { stop, proceed };
  OnSingular on_singular = OnSingular::stop;
  /// Threads of the methods that run in parallel (dca's assembly and disassembly); 0: the
  /// machine's cores. Results do not depend on it (formulations/dca.hpp).
  int threads = 0;
};

/// Most threads a run may ask for (`threads`): more than any machine's cores; far past it TBB's
/// arena crashes (at 100,000).
inline constexpr int kMostThreads = 4096;

/// Throws std::invalid_argument naming the first setting out of its range (`name`, what it must
/// be, the value): α, β finite and >= 0; rank_tolerance in (0, 1); position_tolerance finite and
/// > 0; max_position_iterations >= 1; partition_condition_growth finite and > 1; threads in
/// 0 .. kMostThreads. make_formulation checks them for every method.
void check_settings(const LoopMethodSettings& settings);

/// The options of LoopMethodSettings.
inline const OptionTable<LoopMethodSettings>& loop_method_options() {
  using S = LoopMethodSettings;
  static const OptionTable<S> table{
      choice_option("on_singular", &S::on_singular, {"stop", "continue"},
                    "at a singular configuration of the loops (lagrange-dense, lagrange-on: the multiplier system "
                    "loses rank; rcr: condition indicator above `singular_condition` with every choice of "
                    "independent speeds; srm: its iterates stop converging or its loop forces do work; every method "
                    "but dca: near one that no survey predicted, on loops with more than one degree of freedom): "
                    "stop with a diagnostic (under `method = auto`: dca takes the run over), or continue (report and "
                    "go on: Lagrange methods with minimum-norm multipliers, at your own risk)"),
      member_option("baumgarte_alpha", &S::baumgarte_alpha, "1/s",
                    "Baumgarte damping α in Φ̈ + 2αΦ̇ + β²Φ = 0 (Lagrange-multiplier methods, paper 001 eqs 6-9)"),
      member_option("baumgarte_beta", &S::baumgarte_beta, "1/s", "Baumgarte stiffness β of the same equation"),
      member_option("rank_tolerance", &S::rank_tolerance, "",
                    "relative pivot below which the multiplier system counts as rank-deficient (minimum-norm "
                    "multipliers then)"),
      member_option("position_tolerance", &S::position_tolerance, "m or cosine",
                    "gcp, nullspace: the position analysis stops when every kept row has |Φ| below it"),
      member_option("max_position_iterations", &S::max_position_iterations, "",
                    "gcp, nullspace: Newton iterations of the position analysis before it fails"),
      member_option("partition_condition_growth", &S::partition_condition_growth, "",
                    "gcp, nullspace, embedding: growth of the dependent block's condition number since the "
                    "coordinates were chosen at which they are chosen again, between two steps"),
      member_option("threads", &S::threads, "",
                    "threads of the parallel methods (dca); 0: the machine's cores. Results do not depend on it"),
  };
  return table;
}

}  // namespace loopdyn
