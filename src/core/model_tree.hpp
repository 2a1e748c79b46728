// The tree part of Model::build (src/core/model.cpp), which src/loops/model_build.cpp completes with the loop
// structure. Private to the library.
#pragma once

#include "loopdyn/core/model.hpp"

namespace loopdyn::detail {

/// The Model of `mechanism` without its loop structure (Model::loop_structure null).
Model build_tree(const Mechanism& mechanism);

}  // namespace loopdyn::detail
