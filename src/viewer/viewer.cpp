// The viewer page (viewer.hpp): the run's columns matched to the model, body poses and marker
// positions from loopdyn's kinematics at every row, packed as float32 base64 into a JSON block
// that the page's script (src/viewer/page.js) reads; three.js is embedded beside it.
#include "loopdyn/viewer/viewer.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string_view>

#include "viewer/assets.hpp"
#include "viewer/scene.hpp"
#include "loopdyn/core/names.hpp"
#include "loopdyn/core/kinematics.hpp"

namespace loopdyn {

namespace {

using nlohmann::json;

// The page decodes the float32 arrays with a Float32Array over the bytes: little-endian, as every
// browser platform is.
static_assert(std::endian::native == std::endian::little, "the viewer writes little-endian float32");

// The run's columns that the page uses, as indices.
struct RunColumns {
  int t = -1;
  std::vector<int> q;                    ///< (nq) model coordinate order
  std::vector<std::string> plot_names;
  std::vector<int> plots;
};

int find_column(const Trajectory& run, std::string_view name) {
  const auto it = std::find(run.columns.begin(), run.columns.end(), name);
  return it == run.columns.end() ? -1 : static_cast<int>(it - run.columns.begin());
}

// Every q column of the model present and no foreign one: a run of another model is refused.
std::vector<int> coordinate_columns(const Model& model, const Trajectory& run, const std::string& source) {
  std::vector<std::string> names = model.coordinate_names();
  names.resize(static_cast<std::size_t>(model.nq));
  std::vector<int> q;
  std::vector<std::string> missing;
  for (const std::string& name : names) {
    q.push_back(find_column(run, name));
    if (q.back() < 0) missing.push_back(name);
  }
  const std::string of_model = " of model '" + model.name + "'";
  if (!missing.empty())
    throw ModelError(source + ": no column " + quoted_list(missing) + of_model + " (a run of another model?)");
  for (const std::string& c : run.columns)
    if (c.rfind("q.", 0) == 0 && std::find(names.begin(), names.end(), c) == names.end())
      throw ModelError(source + ": column '" + c + "' is not a coordinate" + of_model + " (a run of another model?)");
  return q;
}

RunColumns match_columns(const Model& model, const Trajectory& run, const ViewerOptions& options) {
  RunColumns c;
  const std::string& source = options.run_source;
  c.t = find_column(run, "t");
  if (c.t < 0) throw ModelError(source + ": no column 't'");
  c.q = coordinate_columns(model, run, source);
  std::vector<std::string> wanted;
  for (const char* name : {"energy", "residual.position", "residual.velocity"})
    if (find_column(run, name) >= 0) wanted.emplace_back(name);
  for (const std::string& name : options.plots) {
    if (find_column(run, name) >= 0) {
      wanted.push_back(name);
      continue;
    }
    const std::vector<std::string> near = near_names(name, run.columns);
    throw ModelError(source + ": no column '" + name + "' to plot" +
                     (near.empty() ? "" : " (near: " + quoted_list(near) + ")") + "; its columns: " +
                     quoted_list(run.columns, 8));
  }
  for (const std::string& name : wanted)
    if (std::find(c.plot_names.begin(), c.plot_names.end(), name) == c.plot_names.end()) {
      c.plot_names.push_back(name);
      c.plots.push_back(find_column(run, name));
    }
  return c;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

// "source:line: " of row k: a CSV written by write_csv has its header on line 1.
std::string row_place(const std::string& source, std::size_t k) { return source + ":" + std::to_string(k + 2) + ": "; }

// Frame data of the page: per row, position + quaternion (x, y, z, w) of every body and the
// position of every marker, all world frame, float32.
struct Frames {
  std::vector<double> times;
  std::vector<float> poses;    ///< (rows x nbodies x 7)
  std::vector<float> markers;  ///< (rows x nmarkers x 3)
};

// The joint coordinates of row k, checked and with every quaternion normalized (the CSV's 15
// digits keep them unit to 1e-14, a hand-made file may not).
void row_coordinates(const Model& model, const Trajectory& run, const RunColumns& c, std::size_t k,
                     const std::string& source, VecX& q) {
  const VecX& row = run.rows[k];
  for (int j = 0; j < model.nq; ++j) {
    q(j) = row(c.q[static_cast<std::size_t>(j)]);
    if (!std::isfinite(q(j)))
      throw ModelError(row_place(source, k) + "column '" + run.columns[static_cast<std::size_t>(c.q[j])] + "' is " + number(q(j)));
  }
  model.normalize(q);
  if (!q.allFinite()) throw ModelError(row_place(source, k) + "a quaternion of zero length in the q columns");
}

Frames compute_frames(const Model& model, const Trajectory& run, const RunColumns& c, const std::string& source) {
  Frames f;
  KinematicsData kin(model);
  VecX q(model.nq);
  for (std::size_t k = 0; k < run.rows.size(); ++k) {
    const double t = run.rows[k](c.t);
    if (!std::isfinite(t)) throw ModelError(row_place(source, k) + "column 't' is " + number(t));
    if (k > 0 && t < f.times.back())
      throw ModelError(row_place(source, k) + "t = " + number(t) + " is before the previous row's " + number(f.times.back()));
    f.times.push_back(t);
    row_coordinates(model, run, c, k, source, q);
    update_positions(model, kin, q);
    for (const Transform& X : kin.X_world) {
      const Quat r(X.R);
      for (double v : {X.p.x(), X.p.y(), X.p.z(), r.x(), r.y(), r.z(), r.w()}) f.poses.push_back(static_cast<float>(v));
    }
    for (const ModelMarker& m : model.markers) {
      const Vec3 p = point_position(kin, m.body, m.point);
      for (double v : {p.x(), p.y(), p.z()}) f.markers.push_back(static_cast<float>(v));
    }
  }
  return f;
}

// Diagonal of the box of every body origin at every row.
double swept_extent(const Frames& f, int nbodies) {
  Eigen::AlignedBox3f box;
  for (std::size_t k = 0; k < f.times.size() * static_cast<std::size_t>(nbodies); ++k)
    box.extend(Eigen::Vector3f(f.poses[7 * k], f.poses[7 * k + 1], f.poses[7 * k + 2]));
  return box.isEmpty() ? 0.0 : static_cast<double>(box.diagonal().norm());
}

std::string base64_floats(const std::vector<float>& v) { return viewer::base64(v.data(), v.size() * sizeof(float)); }

json page_data(const Model& model, const Trajectory& run, const RunColumns& c, const viewer::Scene& scene,
               const Frames& frames, const ViewerOptions& options) {
  json markers = json::array();
  for (const ModelMarker& m : model.markers) markers.push_back({{"name", m.name}, {"body", m.body}});
  json plots = json::array();
  for (std::size_t p = 0; p < c.plots.size(); ++p) {
    std::vector<float> values;
    for (const VecX& row : run.rows) values.push_back(static_cast<float>(row(c.plots[p])));
    plots.push_back({{"name", c.plot_names[p]}, {"values", base64_floats(values)}});
  }
  return {{"model", model.name},
          {"run", options.run_source},
          {"gravity", {model.gravity.x(), model.gravity.y(), model.gravity.z()}},
          {"scale", scene.scale},
          {"times", frames.times},
          {"bodies", scene.bodies},
          {"ground", scene.ground},
          {"meshes", scene.meshes},
          {"notes", scene.notes},
          {"poses", base64_floats(frames.poses)},
          {"markers", markers},
          {"marker_positions", base64_floats(frames.markers)},
          {"plots", plots}};
}

void replace_all(std::string& text, std::string_view from, std::string_view to) {
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

std::string html_escaped(std::string text) {
  replace_all(text, "&", "&amp;");
  replace_all(text, "<", "&lt;");
  replace_all(text, ">", "&gt;");
  return text;
}

std::string script(std::string_view code) { return std::string("<script>").append(code).append("</script>\n"); }

}  // namespace

std::string viewer_page(const Mechanism& mechanism, const Model& model, const Trajectory& run,
                        const ViewerOptions& options) {
  if (run.rows.empty()) throw ModelError(options.run_source + ": no rows");
  const RunColumns columns = match_columns(model, run, options);
  const Frames frames = compute_frames(model, run, columns, options.run_source);
  const viewer::Scene scene =
      viewer::make_scene(mechanism, model, options.model_dir, swept_extent(frames, model.nbodies));
  if (options.notes) options.notes->insert(options.notes->end(), scene.notes.begin(), scene.notes.end());
  // "</" inside the JSON block would end its <script> element; "<\/" is the same JSON string.
  std::string data = page_data(model, run, columns, scene, frames, options).dump();
  replace_all(data, "</", "<\\/");
  std::string page(viewer_assets::page_html());
  replace_all(page, "LOOPDYN_TITLE", html_escaped(model.name + " - " + options.run_source));
  const std::string scripts = script(viewer_assets::three_js()) + script(viewer_assets::orbit_controls_js()) +
                              script(viewer_assets::stl_loader_js()) +
                              "<script type=\"application/json\" id=\"loopdyn-data\">" + data + "</script>\n" +
                              script(viewer_assets::page_js());
  const auto at = page.find("<!--LOOPDYN_SCRIPTS-->");
  return page.replace(at, std::string_view("<!--LOOPDYN_SCRIPTS-->").size(), scripts);
}

void write_viewer_page(const std::string& path, const Mechanism& mechanism, const Model& model,
                       const Trajectory& run, const ViewerOptions& options) {
  const std::string page = viewer_page(mechanism, model, run, options);
  std::ofstream out(path, std::ios::binary);
  if (!out) throw std::runtime_error("cannot write '" + path + "'");
  out << page;
  if (!out) throw std::runtime_error("error while writing '" + path + "'");
}

}  // namespace loopdyn
