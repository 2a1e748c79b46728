// Structural rank of the loop-closure rows: which rows a model keeps.
//
// Structurally redundant constraint rows (dependent at every closed configuration, e.g. the out-of-
// plane rows of a planar loop with parallel axes, or one row per cell of the spatial ladder, whose
// cells close only with parallel axes) are found once per model and dropped; the formulations see
// only the kept rows. The rank of G is decided where the loops are closed, because a dependency may
// come from the closed geometry alone: at the model's initial configuration, closed first by Newton
// steps of least norm on every row when it is not, and at a few closed configurations reached from
// it along the null space of G (so that a singular initial configuration does not decide alone). As
// many rows as the highest rank over the samples are kept. Which ones matters: a loop redundant
// everywhere (Bricard's, 5 rows of rank 4) can have rows that are independent at one configuration
// and singular at another where the mechanism is regular. So, when m² · n · (samples) is small
// (RowRank::robust_rows), the check also walks 16 steps both ways along the manifold and keeps the
// rows chosen greedily by their smallest distance over all samples of that rank from the span of
// those chosen before; for larger models, the rows independent at the best sample: by column-
// pivoted QR of Gᵀ when G is small enough for a dense factorization (a few hundred speeds), else in
// the order of a sparse QR of Gᵀ. When no closed configuration is found (loops that cannot close),
// random configurations are sampled instead. A dropped row that is not zero at every sample is an
// alternate (Constraints::alternates): samples prove nothing, and a formulation's RowChoice
// (row_choice.hpp) puts it back in its loop's kept rows where those lose rank along the motion.
#pragma once

#include <vector>

#include "loopdyn/loops/constraints.hpp"

namespace loopdyn {

/// `rows` split into the structurally independent ones (Constraints::kept, in their order) and the
/// redundant ones (Constraints::dropped), by the check of the file comment. It runs Newton solves
/// and QR factorizations at sampled configurations: LoopStructure runs it once per model.
Constraints structural_reduction(const Model& model, const std::vector<ConstraintRow>& rows);

}  // namespace loopdyn
