// rcr's settings (formulations/rcr.hpp) and their option table (core/options.hpp).
#pragma once

#include "loopdyn/core/options.hpp"

namespace loopdyn {

struct RcrSettings {
  /// rcr chooses its independent speeds again, between two steps, when the condition indicator of
  /// a loop's dependent speeds (formulations/rcr.hpp) has grown by this factor since they were
  /// chosen, and keeps a speed marked independent within this factor of the choice without the
  /// mark. rcr integrates its dependent coordinates, so an integration error of the independent
  /// speeds reaches them multiplied by the indicator, and no position analysis takes it back
  /// (paper 004's five-bar, docs/methods.md).
  double indicator_growth = 10.0;
  /// The largest condition indicator of a loop's dependent speeds, with every choice of them,
  /// before LoopMethodSettings::on_singular applies.
  double singular_condition = 1e6;
};

/// The options of RcrSettings.
inline const OptionTable<RcrSettings>& rcr_options() {
  using S = RcrSettings;
  static const OptionTable<S> table{
      member_option("rcr_indicator_growth", &S::indicator_growth, "",
                    "rcr: growth of a loop's condition indicator since its independent speeds were chosen at which "
                    "they are chosen again, between two steps"),
      member_option("singular_condition", &S::singular_condition, "",
                    "rcr: largest condition indicator of a loop's dependent speeds before `on_singular` applies"),
  };
  return table;
}

}  // namespace loopdyn
