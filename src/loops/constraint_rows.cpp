// The rows of the loop-closing joints and couplings (constraints.hpp has the table per joint type).
#include <algorithm>
#include <type_traits>

#include "loops/constraint_rows.hpp"

namespace loopdyn {

using Kind = ConstraintRow::Kind;

// Rows of one joint (see the table in constraints.hpp).
void detail::joint_rows(const ModelJoint& lj, int loop, std::vector<ConstraintRow>& out) {
  const Vec3 ex = Vec3::UnitX(), ey = Vec3::UnitY(), ez = Vec3::UnitZ();
  auto along = [&](const Vec3& u, const char* name) { out.push_back({Kind::along, loop, u, u, lj.name + ".along." + name}); };
  auto dot = [&](const Vec3& u, const Vec3& w, const char* name) { out.push_back({Kind::dot, loop, u, w, lj.name + ".dot." + name}); };
  auto translation = [&] {
    along(ex, "x");
    along(ey, "y");
    along(ez, "z");
  };
  auto rotation_locked = [&] {
    dot(ey, ez, "yz");
    dot(ez, ex, "zx");
    dot(ex, ey, "xy");
  };
  // b1, b2: an orthonormal pair perpendicular to the axis a.
  auto axis_kept = [&](const Vec3& a) {
    dot(a.unitOrthogonal(), a, "b1");
    dot(a.cross(a.unitOrthogonal()), a, "b2");
  };
  auto off_axis = [&](const Vec3& a) {
    along(a.unitOrthogonal(), "b1");
    along(a.cross(a.unitOrthogonal()), "b2");
  };
  std::visit(
      [&](const auto& k) {
        using K = std::decay_t<decltype(k)>;
        if constexpr (std::is_same_v<K, Revolute>) {
          translation();
          axis_kept(k.axis);
        } else if constexpr (std::is_same_v<K, Prismatic>) {
          off_axis(k.axis);
          rotation_locked();
        } else if constexpr (std::is_same_v<K, Cylindrical>) {
          off_axis(k.axis);
          axis_kept(k.axis);
        } else if constexpr (std::is_same_v<K, Universal>) {
          translation();
          dot(k.axis, k.axis2, "axes");
        } else if constexpr (std::is_same_v<K, Spherical>) {
          translation();
        } else if constexpr (std::is_same_v<K, Planar>) {
          along(ez, "z");
          dot(ex, ez, "xz");
          dot(ey, ez, "yz");
        } else if constexpr (std::is_same_v<K, Fixed>) {
          translation();
          rotation_locked();
        }
      },
      lj.joint);
}

Constraints::Constraints(std::vector<ConstraintRow> kept, std::vector<ConstraintRow> dropped,
                         std::vector<ConstraintRow> alternates)
    : rows_(std::move(kept)), dropped_(std::move(dropped)), alternates_(std::move(alternates)) {}

void Constraints::exchange(const std::vector<int>& places, std::vector<ConstraintRow> rows) {
  // Row labels are unique in a model (joint name and row), so they identify rows.
  const auto among = [](const std::vector<ConstraintRow>& set, const ConstraintRow& r) {
    return std::any_of(set.begin(), set.end(), [&](const ConstraintRow& s) { return s.label == r.label; });
  };
  std::vector<ConstraintRow> leaving, before;
  for (int k : places) {
    before.push_back(rows_[k]);
    if (!among(rows, rows_[k])) leaving.push_back(rows_[k]);
  }
  std::size_t next = 0;
  for (const ConstraintRow& r : rows) {
    if (among(before, r)) continue;
    // An entering row leaves the dropped rows (and the alternates) for a leaving one, in its place.
    for (std::vector<ConstraintRow>* set : {&dropped_, &alternates_})
      for (ConstraintRow& s : *set)
        if (s.label == r.label) s = leaving[next];
    ++next;
  }
  for (std::size_t i = 0; i < places.size(); ++i) rows_[places[i]] = rows[i];
}

std::vector<ConstraintRow> Constraints::all_rows(const Model& model) {
  std::vector<ConstraintRow> rows;
  for (std::size_t k = 0; k < model.loop_joints.size(); ++k) detail::joint_rows(model.loop_joints[k], static_cast<int>(k), rows);
  for (std::size_t k = 0; k < model.couplings.size(); ++k)
    rows.push_back({Kind::coupling, static_cast<int>(k), Vec3::Zero(), Vec3::Zero(), model.couplings[k].name});
  return rows;
}

std::string row_owner(const Model& model, const ConstraintRow& row) {
  std::string s;
  if (row.kind == ConstraintRow::Kind::coupling)
    s.append("constraint '").append(model.couplings[row.loop].name).append("'");
  else
    s.append("loop joint '").append(model.loop_joints[row.loop].name).append("' (row ").append(row.label).append(")");
  return s;
}

}  // namespace loopdyn
