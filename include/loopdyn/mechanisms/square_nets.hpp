// Paper 003's examples (Ascher and Lin, §4): planar chains and nets of squares of unit bars, the
// mechanisms with many coupled loops that sequential regularization is made for. Paper 003's text
// survives only as a word list (docs/notes/srm-sources.md): the unit bars and masses, the fixed
// joint 0, the chain's free fall and the net released at an angle from the vertical (its
// "breeze") are stated there; the layout, the spanning tree, the plane (x-y, gravity −y, as the
// planar ladder) and the net's default angle are loopdyn's choices.
//
//   square-chain-K    K squares side by side: 3K + 1 bars, K loops, K + 1 degrees of freedom.
//   square-net-RxC    R rows of C squares: 2RC + R + C bars, RC loops, R + C degrees of freedom.
#pragma once

#include "loopdyn/core/mechanism.hpp"

namespace loopdyn {

/// `square-net-RxC` (003 Ex 4.2; R = 1 is `square-chain-C`): R rows of C squares of uniform bars
/// of 1 m and 1 kg (inertia about the centre 1/12 kg m² across, 1e-3 along), pinned at every
/// corner by revolutes about z. With tilt = 0 the net hangs below its top edge: horizontal bars
/// "h{r}_{j}" from (j, −r) to (j + 1, −r), r = 0..R, and posts "v{r}_{j}" from (j, −r) down to
/// (j, −r − 1), j = 0..C. Joint 0, "h0_0_pin", fixes (0, 0) to ground and turns the whole net by
/// `tilt` (rad, counter-clockwise) about it; the net starts at rest. Spanning tree: the top edge
/// in series from ground, each column of posts hanging from the top edge, bar h{r+1}_{j} from the
/// foot of post v{r}_{j}; square (r, j) closes where h{r+1}_{j}'s right end meets the foot of
/// v{r}_{j+1} (loop-closing joint "square{r}_{j}"). A square whose four bars come into line (flat)
/// is a singular configuration of its loop. Throws std::invalid_argument for rows or cols < 1
/// or a non-finite tilt.
Mechanism square_net_mechanism(int rows, int cols, double tilt);

/// `square-chain-K` (003 Ex 4.1): square_net_mechanism(1, K, 0): the chain lies horizontal and
/// falls freely about joint 0. Throws std::invalid_argument for squares < 1.
Mechanism square_chain_mechanism(int squares);

}  // namespace loopdyn
