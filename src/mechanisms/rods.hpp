// Unit rods and pins for the generated planar mechanisms of unit bars (IFToMM A02 in iftomm.cpp,
// paper 003's square chain in square_nets.cpp). Private to the library.
#pragma once

#include <string>

#include "loopdyn/core/mechanism.hpp"

namespace loopdyn::detail {

/// Axial moment of inertia of a rod (kg m²): a thin rod has none, and a zero one would make the
/// body's inertia singular; 1e-3 keeps it positive without entering a planar motion.
inline constexpr double kRodAxialInertia = 1e-3;

/// prefix + k, appended rather than by operator+(const char*, std::string&&), on which GCC 12
/// reports a false -Wrestrict.
inline std::string indexed(const char* prefix, int k) {
  std::string s(prefix);
  s += std::to_string(k);
  return s;
}

/// Uniform rod of 1 m and 1 kg along x of its frame, frame at one end.
inline void add_rod(Mechanism& m, const std::string& name) {
  m.add_body(name, 1.0, Vec3(0.5, 0.0, 0.0), Vec3(kRodAxialInertia, 1.0 / 12.0, 1.0 / 12.0).asDiagonal());
}

/// A revolute joint about z at `in_parent` / `in_child` (frames unrotated), with its q and u.
inline JointSpec& add_pin(Mechanism& m, const std::string& name, const std::string& parent, const std::string& child,
                          const Vec3& in_parent, const Vec3& in_child, double q, double u) {
  JointSpec& j = m.add_joint(name, JointType::revolute, parent, child, Transform::translation(in_parent),
                             Transform::translation(in_child));
  j.q = {q};
  j.u = {u};
  return j;
}

}  // namespace loopdyn::detail
