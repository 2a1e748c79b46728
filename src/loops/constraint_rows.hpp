// Row-level evaluation of the loop-closure constraints (src/loops/constraints.cpp), for the structural
// rank check (src/loops/structural_rank.cpp), which evaluates sets of rows outside any Constraints.
// Private to the library: the public interface is constraints.hpp.
#pragma once

#include <vector>

#include "loopdyn/loops/constraints.hpp"

namespace loopdyn::detail {

/// Appends the rows of `joint` (6 − dof, the table in constraints.hpp), tagged with index `loop`:
/// a loop-closing joint's, or in absolute coordinates (formulations/dca.hpp) any joint's.
void joint_rows(const ModelJoint& joint, int loop, std::vector<ConstraintRow>& out);
/// Φ, Φ̇ and γ (with G u̇ = γ) of a dot or along row from the world kinematics of its two frames
/// (parent side p, child side c; for γ, dw0 and a0 at zero accelerations of the coordinates).
double frame_position_row(const ConstraintRow& row, const ConstraintData::Frame& p, const ConstraintData::Frame& c);
double frame_velocity_row(const ConstraintRow& row, const ConstraintData::Frame& p, const ConstraintData::Frame& c);
double frame_bias_row(const ConstraintRow& row, const ConstraintData::Frame& p, const ConstraintData::Frame& c);
/// World poses of both frames of every loop joint; positions must be current in kin.
void update_frames(const Model& model, const KinematicsData& kin, ConstraintData& d);
/// Φ of one row at time t (drives); frames current (update_frames), q for coupling rows.
double position_row(const Model& model, const ConstraintRow& row, const VecX& q, double t, const ConstraintData& d);
/// ∂Φ/∂t of one row: −ḟ(t) for a drive's, 0 for the others.
double time_rate_row(const Model& model, const ConstraintRow& row, double t);
/// Row r of G for `row`, columns = global speeds; frames current; G's row r must be zero.
void jacobian_row(const Model& model, const ConstraintRow& row, const KinematicsData& kin, const ConstraintData& d,
                  Eigen::Ref<MatX> G, int r);
/// The world motion columns [ω; v_O] of the given speeds into d.S_world (global speed order):
/// one per speed for all the rows that read it (jacobian_row_on_path). Positions must be current.
void update_motion_columns(const Model& model, const KinematicsData& kin, const std::vector<int>& speeds,
                           ConstraintData& d);
/// The speeds some row acts on (ascending, once each), from each row's row_speeds.
std::vector<int> path_speeds(const std::vector<std::vector<int>>& row_speeds);
/// Row r of G for `row` on the speeds it acts on only: out(r, j) is its entry for speeds[j], with
/// speeds its row_speeds; O(length of its tree path). Frames and motion columns current
/// (update_frames, update_motion_columns); out's row r must be zero.
void jacobian_row_on_path(const Model& model, const ConstraintRow& row, const ConstraintData& d,
                          const std::vector<int>& speeds, Eigen::Ref<MatX> out, int r);
/// G (rows.size() x nv) of a set of rows, overwritten; frames current.
void jacobian_rows(const Model& model, const std::vector<ConstraintRow>& rows, const KinematicsData& kin,
                   const ConstraintData& d, Eigen::Ref<MatX> G);
/// Speeds a row acts on, ascending: those of the bodies on its loop joint's tree path, or of its
/// coupling's terms (every other column of its G row is zero at every configuration).
std::vector<int> row_speeds(const Model& model, const ConstraintRow& row);

}  // namespace loopdyn::detail
