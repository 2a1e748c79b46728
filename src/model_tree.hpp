// The tree part of Model::build (src/model.cpp), which src/model_build.cpp completes with the loop
// structure. Private to the library.
#pragma once

#include "loopdyn/model.hpp"

namespace loopdyn::detail {

/// The Model of `mechanism` without its loop structure (Model::loop_structure null).
Model build_tree(const Mechanism& mechanism);

}  // namespace loopdyn::detail
