// dca's state vector and its per-body vectors by name (formulations/dca.hpp, "Coordinates"): every
// index of the state is written here once, and read everywhere else through these functions.
#pragma once

#include "loopdyn/core/spatial.hpp"

namespace loopdyn::dca {

/// x = [r, p (7 per body); ω, ṙ (6 per body)], 13 numbers per body: the world position r of each
/// body's centre of mass and its Euler parameters p (unit quaternion w, x, y, z; body axes to
/// world), then every body's world angular velocity ω and centre-of-mass velocity ṙ. The
/// velocity part is a body vector (BodyVector) of 6 per body.
class StateLayout {
 public:
  explicit StateLayout(int bodies) : nb_(bodies) {}
  int bodies() const { return nb_; }
  int size() const { return 13 * nb_; }
  int position(int i) const { return 7 * i; }                    ///< r_i, 3
  int quaternion(int i) const { return 7 * i + 3; }              ///< p_i, 4 (w first)
  int angular_velocity(int i) const { return 7 * nb_ + 6 * i; }  ///< ω_i, 3
  int velocity(int i) const { return 7 * nb_ + 6 * i + 3; }      ///< ṙ_i, 3
  int velocities_size() const { return 6 * nb_; }                ///< the velocity part, the last of x

  template <class V>
  auto r(V&& x, int i) const { return x.template segment<3>(position(i)); }
  template <class V>
  auto p(V&& x, int i) const { return x.template segment<4>(quaternion(i)); }
  template <class V>
  auto w(V&& x, int i) const { return x.template segment<3>(angular_velocity(i)); }
  template <class V>
  auto v(V&& x, int i) const { return x.template segment<3>(velocity(i)); }
  /// [ω; ṙ] of every body (x's velocities, dx's accelerations [ω̇; r̈]): a BodyVector.
  template <class V>
  auto velocities(V&& x) const { return x.tail(velocities_size()); }

  /// p_i as a rotation matrix (normalized first: integrated p drifts off the unit sphere).
  template <class V>
  Mat3 rotation(const V& x, int i) const {
    const auto q = p(x, i);
    return Quat(q(0), q(1), q(2), q(3)).normalized().toRotationMatrix();
  }

 private:
  int nb_;
};

/// 6 numbers per body, [angular; linear]: velocities [ω; ṙ], accelerations [ω̇; r̈], wrenches
/// [moment about the centre of mass; force], all in world axes.
struct BodyVector {
  static int size(int bodies) { return 6 * bodies; }
  template <class V>
  static auto body(V&& x, int i) { return x.template segment<6>(6 * i); }
  template <class V>
  static auto angular(V&& x, int i) { return x.template segment<3>(6 * i); }
  template <class V>
  static auto linear(V&& x, int i) { return x.template segment<3>(6 * i + 3); }
};

}  // namespace loopdyn::dca
