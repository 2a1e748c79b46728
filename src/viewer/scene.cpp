// The viewer's shapes (scene.hpp): visuals as the file gives them, or joint points, links between
// them and the body's equivalent-inertia box.
#include "viewer/scene.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <stdexcept>

namespace loopdyn::viewer {

namespace {

using nlohmann::json;

// Sizes of the fallback shapes relative to Scene::scale: joints as balls a tenth of a typical link
// across, links as rods of a fifth of that (the double pendulum's 1 m links get 10 cm balls and
// 4 cm rods; checked by eye on the screenshots of docs/viewer.md).
constexpr double kJointRadius = 0.05, kLinkRadius = 0.02;

json origin_json(const Transform& X) {
  const Quat q(X.R);
  return {X.p.x(), X.p.y(), X.p.z(), q.x(), q.y(), q.z(), q.w()};
}

json shape_json(const char* shape, const Transform& origin, const std::array<double, 4>& rgba) {
  return {{"shape", shape}, {"origin", origin_json(origin)}, {"rgba", rgba}};
}

// Body i's colour: hues spread by the golden ratio so that neighbours differ, full saturation
// softened (HSV with s = 0.55, v = 0.85).
std::array<double, 4> body_colour(int i) {
  const double h = std::fmod(0.08 + 0.618033988749895 * i, 1.0) * 6.0, s = 0.55, v = 0.85;
  const double c = v * s, x = c * (1.0 - std::abs(std::fmod(h, 2.0) - 1.0)), m = v - c;
  const int sector = static_cast<int>(h);
  const double r[6] = {c, x, 0, 0, x, c}, g[6] = {x, c, c, x, 0, 0}, b[6] = {0, 0, x, c, c, x};
  return {r[sector] + m, g[sector] + m, b[sector] + m, 1.0};
}
constexpr std::array<double, 4> kJointColour{0.35, 0.35, 0.38, 1.0};

// Joint points of every body in its own frame, the body's own (tree) joint first; index -1 of
// the result's map is ground, its points in the world frame.
std::map<int, std::vector<Vec3>> joint_points(const Model& model) {
  std::map<int, std::vector<Vec3>> points;
  for (int i = 0; i < model.nbodies; ++i) points[i].push_back(model.joints[i].child_frame.p);
  for (int i = 0; i < model.nbodies; ++i) points[model.parent[i]].push_back(model.joints[i].parent_frame.p);
  for (const ModelJoint& j : model.loop_joints) {
    points[j.parent].push_back(j.parent_frame.p);
    points[j.child].push_back(j.child_frame.p);
  }
  return points;
}

// Side lengths and axes of the uniform box with the body's mass and inertia about its centre:
// a box of sides s has I_k = m (S − s_k²)/12 with S = Σ s², so s_k² = 6 (I_1 + I_2 + I_3 − 2 I_k)/m.
std::pair<Vec3, Mat3> inertia_box(double mass, const Mat3& inertia) {
  const Eigen::SelfAdjointEigenSolver<Mat3> eig(inertia);
  const Vec3 I = eig.eigenvalues();
  Mat3 axes = eig.eigenvectors();
  if (axes.determinant() < 0) axes.col(2) *= -1.0;  // a rotation, not a reflection
  Vec3 sides;
  for (int k = 0; k < 3; ++k) sides(k) = std::sqrt(std::max(0.0, 6.0 * (I.sum() - 2.0 * I(k)) / mass));
  return {sides, axes};
}

// The typical link length: the median distance from a body's own joint point to its other joint
// points; without any (a single free body), the largest side of the inertia boxes; else 1 m.
double typical_length(const Model& model, const std::map<int, std::vector<Vec3>>& points) {
  std::vector<double> lengths;
  for (int i = 0; i < model.nbodies; ++i)
    for (const Vec3& p : points.at(i))
      if (double d = (p - points.at(i).front()).norm(); d > 1e-9) lengths.push_back(d);
  if (lengths.empty())
    for (int i = 0; i < model.nbodies; ++i) {
      if (model.mass[i] <= 0) continue;
      const Mat3 C = skew(model.com[i]);  // inertia about the centre: I_origin − m c×c×ᵀ (spatial.hpp)
      const Mat3 inertia = model.inertia[i].topLeftCorner<3, 3>() - model.mass[i] * C * C.transpose();
      lengths.push_back(inertia_box(model.mass[i], inertia).first.maxCoeff());
    }
  if (lengths.empty()) return 1.0;
  std::nth_element(lengths.begin(), lengths.begin() + lengths.size() / 2, lengths.end());
  return lengths[lengths.size() / 2] > 0 ? lengths[lengths.size() / 2] : 1.0;
}

// A ball at every joint point.
void add_joint_balls(const std::vector<Vec3>& points, double radius, json& shapes) {
  for (const Vec3& p : points) {
    json s = shape_json("sphere", Transform::translation(p), kJointColour);
    s["radius"] = radius;
    shapes.push_back(std::move(s));
  }
}

// The body's equivalent-inertia box (inertia_box), each side at most twice the joint points'
// reach from the centre of mass along that axis (models of planar mechanisms give links plate-like
// inertias, the papers' data no rod has, which would hide the mechanism; a last link hinged at one
// end reaches as far beyond its centre) and at least 1.5 rod diameters, so that a thin rod or a
// point mass stays visible. A body whose joints all sit at its centre of mass (a free body) keeps
// its box.
json inertia_box_shape(const BodySpec& body, const std::vector<Vec3>& points, double scale,
                       const std::array<double, 4>& colour) {
  auto [sides, axes] = inertia_box(body.mass, body.inertia);
  const double thinnest = 3 * kLinkRadius * scale;
  const bool linked =
      std::any_of(points.begin(), points.end(), [&](const Vec3& p) { return (p - body.com).norm() > 1e-9; });
  for (int k = 0; k < 3; ++k) {
    double extent = 0;  // twice the farthest joint point from the centre of mass along axis k
    for (const Vec3& p : points) extent = std::max(extent, 2 * std::abs((p - body.com).dot(axes.col(k))));
    if (linked) sides(k) = std::min(sides(k), extent);
    sides(k) = std::max(sides(k), thinnest);
  }
  json box = shape_json("box", Transform{axes, body.com}, {colour[0], colour[1], colour[2], 0.85});
  box["size"] = {sides.x(), sides.y(), sides.z()};
  return box;
}

// Body i without visuals: a rod from its own joint point to each other joint point, a ball at
// each, and its inertia box at the centre of mass.
json fallback_shapes(const BodySpec& body, const std::vector<Vec3>& points, double scale, int i) {
  json shapes = json::array();
  const auto colour = body_colour(i);
  for (std::size_t k = 1; k < points.size(); ++k) {
    const Vec3 d = points[k] - points[0];
    if (d.norm() < 1e-9) continue;
    // The rod's shape frame: z along d (cylinders lie along their frame's z), centred between.
    const Transform X{Quat::FromTwoVectors(Vec3::UnitZ(), d).toRotationMatrix(), 0.5 * (points[0] + points[k])};
    json rod = shape_json("cylinder", X, colour);
    rod["radius"] = kLinkRadius * scale;
    rod["length"] = d.norm();
    shapes.push_back(std::move(rod));
  }
  add_joint_balls(points, kJointRadius * scale, shapes);
  if (body.mass > 0) shapes.push_back(inertia_box_shape(body, points, scale, colour));
  return shapes;
}

std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in || std::filesystem::is_directory(path)) return {};
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

bool is_stl(const std::string& file) {
  std::string ext = std::filesystem::path(file).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext == ".stl";
}

}  // namespace

std::string base64(const void* data, std::size_t bytes) {
  static constexpr char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const auto* in = static_cast<const unsigned char*>(data);
  std::string out;
  out.reserve((bytes + 2) / 3 * 4);
  for (std::size_t k = 0; k < bytes; k += 3) {
    const unsigned v = in[k] << 16 | (k + 1 < bytes ? in[k + 1] << 8 : 0) | (k + 2 < bytes ? in[k + 2] : 0);
    out += digits[v >> 18 & 63];
    out += digits[v >> 12 & 63];
    out += k + 1 < bytes ? digits[v >> 6 & 63] : '=';
    out += k + 2 < bytes ? digits[v & 63] : '=';
  }
  return out;
}

namespace {

// Builds the page shapes of visuals, reading STL meshes into the scene (each file once).
class VisualReader {
 public:
  VisualReader(Scene& scene, const std::string& model_dir) : scene_(scene), model_dir_(model_dir) {}

  json shapes(const BodySpec& body) {
    json out = json::array();
    for (const VisualSpec& v : body.visuals) out.push_back(shape(body, v));
    return out;
  }

 private:
  json shape(const BodySpec& body, const VisualSpec& v) {
    json s = shape_json(std::string(to_string(v.shape)).c_str(), v.origin, v.rgba);
    switch (v.shape) {
      case VisualSpec::Shape::box: s["size"] = {v.size.x(), v.size.y(), v.size.z()}; break;
      case VisualSpec::Shape::sphere: s["radius"] = v.radius; break;
      case VisualSpec::Shape::cylinder:
      case VisualSpec::Shape::capsule:
        s["radius"] = v.radius;
        s["length"] = v.length;
        break;
      case VisualSpec::Shape::mesh:
        s["mesh"] = mesh_index(body, v.file);
        s["scale"] = {v.scale.x(), v.scale.y(), v.scale.z()};
        break;
    }
    return s;
  }

  // Index of the file's bytes in Scene::meshes; -1 for a placeholder (a wire cube on the page),
  // with a note naming the file: a format the page does not parse, or an STL file that cannot be
  // read (missing, unreadable or empty; a URDF mesh not found is kept as written). The run is still
  // drawn: a mesh is only its body's looks.
  int mesh_index(const BodySpec& body, const std::string& file) {
    const std::string place = body.where.empty() ? "" : body.where + ": ";
    if (!is_stl(file)) {
      scene_.notes.push_back(place + "body '" + body.name + "': mesh '" + file +
                             "' is not STL, the only mesh format the viewer reads; drawn as a wire cube");
      return -1;
    }
    const std::filesystem::path path = std::filesystem::path(model_dir_) / file;  // absolute files stay so
    if (auto it = index_.find(path.string()); it != index_.end()) return it->second;
    const std::string bytes = read_bytes(path);
    if (bytes.empty()) {
      scene_.notes.push_back(place + "body '" + body.name + "': cannot read mesh file '" + path.string() +
                             "' (missing, unreadable or empty); drawn as a wire cube");
      return index_[path.string()] = -1;
    }
    scene_.meshes.push_back(base64(bytes.data(), bytes.size()));
    return index_[path.string()] = static_cast<int>(scene_.meshes.size()) - 1;
  }

  Scene& scene_;
  std::string model_dir_;
  std::map<std::string, int> index_;
};

}  // namespace

Scene make_scene(const Mechanism& mechanism, const Model& model, const std::string& model_dir, double swept) {
  for (int i = 0; i < model.nbodies; ++i) {
    const auto b = static_cast<std::size_t>(model.mechanism_body[i]);
    if (b >= mechanism.bodies.size() || mechanism.bodies[b].name != model.body_name[i])
      throw std::invalid_argument("viewer: model '" + model.name + "' was not built from mechanism '" +
                                  mechanism.name + "' (body '" + model.body_name[i] + "')");
  }
  Scene scene;
  const auto points = joint_points(model);
  scene.scale = std::max(typical_length(model, points), swept / 40);
  VisualReader visuals(scene, model_dir);
  for (int i = 0; i < model.nbodies; ++i) {
    const BodySpec& body = mechanism.bodies[static_cast<std::size_t>(model.mechanism_body[i])];
    const bool own = !body.visuals.empty();
    scene.bodies.push_back({{"name", body.name},
                            {"drawn_from", own ? "visuals" : "joints"},
                            {"shapes", own ? visuals.shapes(body) : fallback_shapes(body, points.at(i), scene.scale, i)}});
  }
  if (auto it = points.find(-1); it != points.end()) add_joint_balls(it->second, kJointRadius * scene.scale, scene.ground);
  return scene;
}

}  // namespace loopdyn::viewer
