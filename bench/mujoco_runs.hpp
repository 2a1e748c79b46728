// The IFToMM cases in MuJoCo (Debian's libmujoco 2.2.2), for the work-precision tables
// (bench/work_precision.cpp): a mechanism of revolute and prismatic joints, planar loops and point
// spring-dampers written as MJCF, then stepped at a fixed timestep.
//
// The MJCF (mjcf_of): each tree joint's body at its pose at the initial coordinates, the joint's
// `ref` at them, so that MuJoCo's qpos is loopdyn's q and its reference configuration is the
// initial one, closed; inertias as `fullinertia`; no geoms (nothing to collide). A loop-closing
// revolute joint becomes a `connect` equality at its point (three rows: on a planar mechanism
// whose joints all turn about one axis, the two rows that keep the axes parallel are redundant),
// which MuJoCo enforces softly: the constraint's error is part of what the tables show. A point
// spring-damper becomes a two-site spatial tendon with the same stiffness, damping and rest
// length; a constant joint_force an applied generalized force. Anything else is refused
// (std::invalid_argument).
#pragma once

#include <string>
#include <vector>

#include "loopdyn/core/mechanism.hpp"

namespace loopdyn::bench {

std::string mjcf_of(const Mechanism& m);

enum class MujocoIntegrator { euler, rk4, implicit };
const char* to_string(MujocoIntegrator i);

struct MujocoRun {
  bool finite = true;          ///< false: the state left the floating-point range (unstable)
  std::vector<Vec3> marker;    ///< the marker at each output time
  double cpu = 0.0;            ///< stepping only, not the compile [s]
  long steps = 0;
};

/// Steps the MJCF of m at `timestep` with `integrator` from the mechanism's initial q and u to
/// t_end, recording marker `marker` every output_dt (a multiple of timestep). solref_timeconst:
/// the soft constraints' time constant (0: MuJoCo's default, 0.02 s; MuJoCo raises any value
/// below 2 timesteps to 2 timesteps).
MujocoRun run_mujoco(const Mechanism& m, const std::string& marker, double t_end, double output_dt, double timestep,
                     MujocoIntegrator integrator, double solref_timeconst = 0.0);

}  // namespace loopdyn::bench
