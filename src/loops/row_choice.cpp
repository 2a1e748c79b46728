// Rows of geometrically redundant loops chosen again along the motion (row_choice.hpp).
#include "loopdyn/loops/row_choice.hpp"

#include <algorithm>
#include <cmath>

#include "loops/constraint_rows.hpp"
#include "loopdyn/loops/loop_structure.hpp"

namespace loopdyn {

namespace {

bool is_loop_row(const ConstraintRow& row, int loop) {
  return row.kind != ConstraintRow::Kind::coupling && row.loop == loop;
}

std::string labels(const std::vector<ConstraintRow>& rows, const std::vector<int>& chosen) {
  std::string s;
  for (int r : chosen) s.append(s.empty() ? "" : ", ").append(rows[r].label);
  return s;
}

}  // namespace

RowChoice::RowChoice(const Model& model)
    : model_(model), cons_(model.loops().constraints), kin_(model), data_(model), scratch_(MatX::Zero(1, model.nv)) {
  for (int loop = 0; loop < static_cast<int>(model.loop_joints.size()); ++loop) {
    Group g;
    g.loop = loop;
    for (int k = 0; k < cons_.rows(); ++k)
      if (is_loop_row(cons_.kept()[k], loop)) {
        g.places.push_back(k);
        g.rows.push_back(cons_.kept()[k]);
        g.current.push_back(static_cast<int>(g.current.size()));
      }
    for (const ConstraintRow& row : cons_.alternates())
      if (is_loop_row(row, loop)) g.rows.push_back(row);
    if (g.rows.size() == g.places.size() || g.places.empty()) continue;
    g.best = g.current;
    g.speeds = detail::row_speeds(model, g.rows.front());  // every row of a loop joint acts on its tree path
    g.G.resize(static_cast<Eigen::Index>(g.rows.size()), static_cast<Eigen::Index>(g.speeds.size()));
    g.W.resize(g.G.rows(), g.G.cols());
    groups_.push_back(std::move(g));
  }
}

// g.G: the rows of g on its speeds, frames current.
void RowChoice::jacobian(Group& g) {
  for (int r = 0; r < static_cast<int>(g.rows.size()); ++r) {
    detail::jacobian_row(model_, g.rows[r], kin_, data_, scratch_, 0);
    for (std::size_t k = 0; k < g.speeds.size(); ++k) {
      g.G(r, static_cast<Eigen::Index>(k)) = scratch_(0, g.speeds[k]);
      scratch_(0, g.speeds[k]) = 0.0;
    }
  }
}

double RowChoice::smallest_singular_value(const Group& g, const std::vector<int>& chosen) {
  const int k = static_cast<int>(chosen.size());
  gram_.resize(k, k);
  for (int i = 0; i < k; ++i)
    for (int j = 0; j <= i; ++j) gram_(i, j) = gram_(j, i) = g.G.row(chosen[i]).dot(g.G.row(chosen[j]));
  eigen_.compute(gram_, Eigen::EigenvaluesOnly);
  return std::sqrt(std::max(0.0, eigen_.eigenvalues()(0)));
}

// g.best: as many rows as g has places, by column-pivoted Gram–Schmidt on the rows of g.G (the
// row farthest from the span of those taken before it, first), in `rows` order.
void RowChoice::choose_best(Group& g) const {
  g.W = g.G;
  const int n = static_cast<int>(g.rows.size());
  for (std::size_t pick = 0; pick < g.best.size(); ++pick) {
    int taken = -1;
    double largest = 0.0;
    for (int r = 0; r < n; ++r) {
      const bool used = std::find(g.best.begin(), g.best.begin() + static_cast<long>(pick), r) !=
                        g.best.begin() + static_cast<long>(pick);
      const double size = g.W.row(r).squaredNorm();
      if (!used && size > largest) {
        largest = size;
        taken = r;
      }
    }
    if (taken < 0) {  // every row left is zero here: keep the current choice
      g.best = g.current;
      return;
    }
    g.best[pick] = taken;
    for (int r = 0; r < n; ++r)
      if (r != taken) g.W.row(r) -= (g.W.row(r).dot(g.W.row(taken)) / largest) * g.W.row(taken);
  }
  std::sort(g.best.begin(), g.best.end());
}

std::string RowChoice::exchange(Group& g) {
  const std::string report = "loop joint '" + model_.loop_joints[g.loop].name + "': rows " + labels(g.rows, g.best) +
                             " (were " + labels(g.rows, g.current) + ")";
  std::vector<ConstraintRow> chosen;
  for (int r : g.best) chosen.push_back(g.rows[r]);
  cons_.exchange(g.places, std::move(chosen));
  g.current = g.best;
  return report;
}

std::string RowChoice::choose_again(const Eigen::Ref<const VecX>& q) {
  if (groups_.empty()) return {};
  update_positions(model_, kin_, q);
  detail::update_frames(model_, kin_, data_);
  std::string report;
  for (Group& g : groups_) {
    jacobian(g);
    choose_best(g);
    if (g.best == g.current) continue;
    const double now = smallest_singular_value(g, g.current), best = smallest_singular_value(g, g.best);
    if (now * kRowChoiceGrowth >= best) continue;
    report.append(report.empty() ? "" : "; ").append(exchange(g));
  }
  return report;
}

}  // namespace loopdyn
