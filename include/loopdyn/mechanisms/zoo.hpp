// A randomized zoo of the closed-loop mechanisms users build ("never silently wrong"):
// planar four-bars of every Grashof class, planar five-bars, spatial Bennett linkages, offset and
// isosceles slider-cranks, spatial RSSR and RSCR four-bars, Bricard linkages and 3-RPS platforms,
// with random link lengths, masses, inertias, initial configurations and speeds, and on some
// cases springs and dampers, for differential tests of the loop methods against an independent
// reference (tests/test_zoo.cpp, bench/zoo_results.cpp).
//
// Every case is drawn from its own SplitMix64 stream (generators.hpp: its output, unlike
// std::uniform_real_distribution's, is the same on every platform), seeded from (seed, index), so
// a case can be drawn again alone by its seed and index. The joints are those the
// absolute-coordinate reference takes (revolute, prismatic, cylindrical, spherical), gravity
// (0, −9.81, 0), in the plane of motion for the planar classes, and the initial state is closed.
//
// The first seven classes are all revolute, without force elements, their positions in closed
// form and their speeds by assemble() from the drawn input speeds (assembly.hpp):
//
// Four-bar (lengths ground g, crank a, coupler b, rocker c; s, l the shortest and longest, p, q
// the others): pivots O (origin) and C, crank O→A, coupler A→B, rocker C→B. Classes by Grashof's
// condition:
//   crank-rocker   s + l < p + q, the crank shortest: the crank turns fully, the rocker rocks;
//   double-crank   s + l < p + q, the ground shortest: both turn fully (drag link);
//   double-rocker  s + l < p + q, the coupler shortest: neither turns fully, the coupler does;
//   triple-rocker  s + l > p + q: no link turns fully relative to another;
//   change-point   s + l = p + q: all four pivots can line up, where the loop loses rank.
// (rocker-crank, the rocker shortest, is what grashof_class calls the fifth case; the zoo does not
// draw it: it is a crank-rocker driven from the other side.) Two spanning trees, drawn at random:
// `serial` (ground → crank → coupler → rocker, the cut at the rocker's ground pivot C) and
// `two-branch` (ground → crank → coupler and ground → rocker, the cut at the coupler-rocker pin B).
//
// Five-bar (2 degrees of freedom): pivots O1 (origin) and O2, cranks O1→A1 and O2→A2, couplers
// A1→P and A2→P, cut at the apex P.
//
// Bennett linkage (spatial, 1 degree of freedom, overconstrained: its revolute loop has 5 rows of
// rank 2): links 1..3 and the ground with the lengths and twists (a1, α1), (a2, α2), (a1, α1),
// (a2, α2), a1 / sin α1 = a2 / sin α2, joints 1..4 in Denavit–Hartenberg order, the cut at joint
// 4, joint 1's frame turned at random in the world (gravity (0, −9.81, 0) then has any direction
// relative to the linkage).
//
// The six classes after them are laid out in their drawn initial configuration: every body and
// joint frame placed in the world with the joints at their neutral q, so the loops close by
// construction and the link lengths follow from the pose; speeds by assemble() from the inputs.
// Half of the slider-cranks, RSSRs and RSCRs (drawn) carry a spring-damper on the crank pivot and
// one from a ground point to the slider or coupler (src/mechanisms/zoo.cpp, Layout::maybe_springs, has the
// ranges); the platforms have one on every leg.
//   slider-crank-offset     crank O→A, rod A→B, slider on a prismatic joint along a line at offset
//                           e from O; rod >= crank + |e| + 0.1 m, so the crank turns fully;
//   slider-crank-isosceles  e = 0, rod = crank: passes the singular point B = O (crank and rod
//                           folded), as users' do; trees serial (the prismatic joint cut) or
//                           two-branch (the rod-slider pin cut);
//   rssr                    spatial four-bar, ground axes 0.3 rad or more from parallel, spherical
//                           joints at both ends of the coupler, whose spin about its axis is a
//                           second degree of freedom, regular by the coupler's inertia;
//   rscr                    the same with a cylindrical joint between coupler and rocker;
//   bricard                 6R loop of IFToMM A04's geometry, scaled and turned at random, the cut
//                           at any of its six joints;
//   stewart                 3-RPS platform (three legs, prismatic with spring-dampers).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "loopdyn/core/mechanism.hpp"

namespace loopdyn {

struct ZooCase {
  std::string kind;         ///< one of zoo_classes()
  std::string description;  ///< one line: lengths, masses, initial angle and speed, tree
  /// Link lengths (m): four-bar (ground, crank, coupler, rocker); five-bar (ground, crank1,
  /// coupler1, coupler2, crank2); Bennett (a1, a2, a1, a2); slider-crank (crank, rod, offset);
  /// RSSR, RSCR (pivot distance, crank, coupler, rocker); Bricard (edge); 3-RPS (base radius,
  /// platform radius, height).
  std::vector<double> lengths;
  /// Markers "A" (crank tip; Bennett: joint 2; Bricard: joint 2; platform: leg 0's top), "B"
  /// (four-bar, RSSR, RSCR: the rocker's coupler joint; five-bar: crank2's tip; Bennett: joint 3;
  /// slider-crank: the slider pin; Bricard: joint 4; platform: leg 1's top) and "P" (a point off
  /// the coupler or link 2; five-bar: the apex; platform: its centre), the initial q and u closed.
  Mechanism mechanism;
};

/// The classes in the order zoo() cycles through them: the four-bar classes of the file comment
/// (double-rocker included), "five-bar", "bennett", then "slider-crank-offset",
/// "slider-crank-isosceles", "rssr", "rscr", "bricard" and "stewart".
const std::vector<std::string>& zoo_classes();

/// Case `index` of the zoo of `seed`: class zoo_classes()[index mod their number], drawn from its
/// own stream, so the same (seed, index) gives the same case whatever else is drawn.
ZooCase zoo_case(std::uint64_t seed, int index);
/// Cases 0..count−1 of the zoo of `seed`. Throws std::invalid_argument for count < 0.
std::vector<ZooCase> zoo(std::uint64_t seed, int count);

/// Grashof class of a four-bar with these link lengths (positive): "crank-rocker",
/// "double-crank", "double-rocker", "rocker-crank" (by which link is the shortest, s + l < p + q),
/// "triple-rocker" (s + l > p + q) or "change-point" (|s + l − p − q| <= 1e-9 l).
std::string_view grashof_class(double ground, double crank, double coupler, double rocker);

/// Model-file text of a case (write_mechanism, io/model_file.hpp) under a comment with its class,
/// seed, index and description: what `loopdyn generate zoo` writes.
std::string zoo_model_file(const ZooCase& c, std::uint64_t seed, int index);

}  // namespace loopdyn
