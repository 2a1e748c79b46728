// Paper 003's examples (Ascher and Lin, §4): planar chains and nets of squares of unit bars, the
// mechanisms with many coupled loops that sequential regularization is made for. Paper 003's text
// survives only as a word list (docs/notes/srm-sources.md): its bars, masses, fixed joint 0 and
// free fall are stated there; the layout and the spanning tree below are loopdyn's choice, as
// is the plane (x-y, gravity −y, as the planar ladder).
//
//   square-chain-K   K squares side by side, 3K + 1 bars, K loops, K + 1 degrees of freedom.
#pragma once

#include "loopdyn/mechanism.hpp"

namespace loopdyn {

/// `square-chain-K` (003 Ex 4.1): K squares of uniform bars of 1 m and 1 kg (inertia about the
/// centre 1/12 kg m² across, 1e-3 along), pinned at every corner by revolutes about z. At q0 the
/// squares stand side by side: top bars "top{i}" from (i, 0) to (i + 1, 0), bottom bars
/// "bottom{i}" from (i, −1) to (i + 1, −1), posts "post{i}" from (i, 0) down to (i, −1), i = 0..K
/// (posts 0..K, bars 0..K−1). Joint 0, "top0_pin", fixes top0's left end to ground at the
/// origin; the chain starts at rest and falls about it. Spanning tree: the top bars in series,
/// post i hanging from top i's left end (post K from top K−1's right end), bottom i from the foot
/// of post i; loop i closes bottom i's right end on the foot of post i + 1 ("square{i}", cut).
/// A square whose four bars come into line (flat) is a singular configuration of its loop.
/// Throws std::invalid_argument for squares < 1.
Mechanism square_chain_mechanism(int squares);

}  // namespace loopdyn
