// The viewer page (src/viewer/viewer.cpp) read back as data: the JSON block of the page is parsed and
// its float32 arrays decoded here (a decoder of the test's own), and compared with poses written
// out by hand for a double pendulum, with the shapes a body's inertia implies, with the visuals of
// the model, and the page refuses runs that do not match the model. The CSV reader's round trip and
// errors are here too (the viewer is its user), and the pages of a URDF robot with STL meshes and of
// an MJCF model with geoms. The page in a real browser: tests/viewer_browser.py.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "loopdyn/io/csv.hpp"
#include "loopdyn/io/model_file.hpp"
#include "loopdyn/viewer/viewer.hpp"
#include "test_support.hpp"

namespace {

using namespace loopdyn;
using nlohmann::json;

std::filesystem::path scratch(const std::string& name) {
  return std::filesystem::temp_directory_path() / ("loopdyn_test_viewer_" + name);
}

using test::error_of;

// The JSON block of a page.
json page_json(const std::string& page) {
  const std::string open = "<script type=\"application/json\" id=\"loopdyn-data\">";
  const auto begin = page.find(open) + open.size();
  return json::parse(page.substr(begin, page.find("</script>", begin) - begin));
}

// Base64 to bytes by the alphabet's positions (RFC 4648).
std::string decoded(const std::string& b64) {
  const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string bytes;
  unsigned bits = 0;
  int n = 0;
  for (char c : b64) {
    if (c == '=') break;
    bits = bits << 6 | static_cast<unsigned>(alphabet.find(c));
    if ((n += 6) >= 8) bytes += static_cast<char>(bits >> (n -= 8) & 0xff);
  }
  return bytes;
}

std::vector<float> floats(const std::string& b64) {
  const std::string bytes = decoded(b64);
  std::vector<float> out(bytes.size() / sizeof(float));
  std::memcpy(out.data(), bytes.data(), out.size() * sizeof(float));
  return out;
}

// Two 1 kg, 1 m rods along −z hanging from revolute joints about y (README's quickstart), a marker
// at the lower rod's tip.
Mechanism pendulum() {
  Mechanism m;
  m.name = "pendulum";
  const Mat3 rod = Vec3(1.0 / 12, 1.0 / 12, 1e-4).asDiagonal();
  m.add_body("upper", 1.0, Vec3(0, 0, -0.5), rod);
  m.add_body("lower", 1.0, Vec3(0, 0, -0.5), rod);
  m.add_joint("shoulder", JointType::revolute, "ground", "upper").axis = Vec3::UnitY();
  m.add_joint("elbow", JointType::revolute, "upper", "lower", Transform::translation(Vec3(0, 0, -1))).axis =
      Vec3::UnitY();
  m.markers.push_back({"tip", "lower", Vec3(0, 0, -1), ""});
  return m;
}

// A run of the pendulum: rows (t, q.shoulder, q.elbow, energy).
Trajectory pendulum_run(const std::vector<std::array<double, 3>>& rows) {
  Trajectory run;
  run.columns = {"t", "q.shoulder", "q.elbow", "energy"};
  for (const auto& r : rows) run.rows.push_back((VecX(4) << r[0], r[1], r[2], 10.0 * r[0]).finished());
  return run;
}

// Poses of the pendulum written out: the upper rod turned by q1 about y at the origin, the lower
// one turned by q1 + q2 about y at the upper rod's end R_y(q1) (0, 0, −1). float32 carries 7
// digits: 1e-6 on values of order 1.
TEST(Viewer, PosesAndMarkerTracesAreThePendulumsAtEveryRow) {
  const Mechanism m = pendulum();
  const Model model = Model::build(m);
  const std::vector<std::array<double, 3>> rows = {{0.0, 0.3, -0.2}, {0.1, 1.1, 0.7}, {0.2, -2.5, 3.0}};
  const json data = page_json(viewer_page(m, model, pendulum_run(rows)));
  const std::vector<float> poses = floats(data["poses"]), tips = floats(data["marker_positions"]);
  ASSERT_EQ(poses.size(), rows.size() * 2 * 7);
  ASSERT_EQ(tips.size(), rows.size() * 3);
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const double q1 = rows[k][1], q2 = rows[k][2];
    EXPECT_EQ(data["times"][k].get<double>(), rows[k][0]);
    const Vec3 elbow = Eigen::AngleAxisd(q1, Vec3::UnitY()) * Vec3(0, 0, -1);
    const Vec3 tip = elbow + Eigen::AngleAxisd(q1 + q2, Vec3::UnitY()) * Vec3(0, 0, -1);
    const std::pair<Vec3, double> expected[2] = {{Vec3::Zero(), q1}, {elbow, q1 + q2}};
    for (int i = 0; i < 2; ++i) {
      const float* pose = &poses[(k * 2 + i) * 7];
      EXPECT_TRUE(test::near(Eigen::Vector3f(pose[0], pose[1], pose[2]).cast<double>(), expected[i].first, 1e-6));
      // (x, y, z, w) of a turn by a about y: (0, sin a/2, 0, cos a/2), up to the sign of all four.
      const Eigen::Vector4d q(pose[3], pose[4], pose[5], pose[6]);
      const Eigen::Vector4d turn(0, std::sin(expected[i].second / 2), 0, std::cos(expected[i].second / 2));
      EXPECT_NEAR(std::abs(q.dot(turn)), 1.0, 1e-6) << "row " << k << " body " << i;
    }
    EXPECT_TRUE(test::near(Eigen::Vector3f(tips[3 * k], tips[3 * k + 1], tips[3 * k + 2]).cast<double>(), tip, 1e-6));
  }
  ASSERT_EQ(data["plots"].size(), 1u);  // energy; no residual columns in this run
  EXPECT_EQ(data["plots"][0]["name"], "energy");
  EXPECT_EQ(floats(data["plots"][0]["values"])[2], 2.0f);
}

// Without visuals, a 1 m rod of 1 kg with I = diag(1/12, 1/12, 1e-4) is drawn as a rod between its
// joints, a ball at each, and the uniform box of its inertia: a box of sides (a, b, L) has
// I_x = m (b² + L²)/12 etc., so L² = 6 (I_x + I_y − I_z)/m = 1 − 6e-4 along the rod (z) and
// a² = b² = 6 I_z/m: 0.024 m across it, cut to the joints' extent (1 m along, 0 across) and widened
// to 1.5 rod diameters, 3 × 0.02 × the 1 m link.
TEST(Viewer, ABodyWithoutVisualsIsDrawnFromItsJointsAndInertia) {
  const Mechanism m = pendulum();
  const json data = page_json(viewer_page(m, Model::build(m), pendulum_run({{0, 0, 0}})));
  EXPECT_EQ(data["scale"].get<double>(), 1.0);
  const json& upper = data["bodies"][0];
  EXPECT_EQ(upper["drawn_from"], "joints");
  int rods = 0, balls = 0, boxes = 0;
  for (const json& s : upper["shapes"]) {
    const std::string shape = s["shape"];
    const Quat r(s["origin"][6].get<double>(), s["origin"][3].get<double>(), s["origin"][4].get<double>(),
                 s["origin"][5].get<double>());
    const Vec3 at(s["origin"][0].get<double>(), s["origin"][1].get<double>(), s["origin"][2].get<double>());
    if (shape == "cylinder") {
      ++rods;
      EXPECT_NEAR(s["length"].get<double>(), 1.0, 1e-12);
      EXPECT_TRUE(test::near(at, Vec3(0, 0, -0.5), 1e-12));
      EXPECT_NEAR(std::abs((r * Vec3::UnitZ()).z()), 1.0, 1e-12);  // along the rod
    } else if (shape == "sphere") {
      ++balls;
      EXPECT_NEAR(at.x(), 0.0, 1e-12);
    } else if (shape == "box") {
      ++boxes;
      EXPECT_TRUE(test::near(at, Vec3(0, 0, -0.5), 1e-12));
      Vec3 size(s["size"][0].get<double>(), s["size"][1].get<double>(), s["size"][2].get<double>());
      const Vec3 world_extent = (r.toRotationMatrix() * size.asDiagonal()).cwiseAbs().rowwise().sum();
      EXPECT_TRUE(test::near(world_extent, Vec3(0.06, 0.06, std::sqrt(1 - 6e-4)), 1e-12)) << world_extent;
    }
  }
  EXPECT_EQ(rods, 1);
  EXPECT_EQ(balls, 2);  // shoulder and elbow
  EXPECT_EQ(boxes, 1);
  ASSERT_EQ(data["ground"].size(), 1u);  // the shoulder's point on ground
}

// World-frame extent (x, y, z) of the box shape of a body.
Vec3 box_extent(const json& shapes) {
  for (const json& s : shapes) {
    if (s["shape"] != "box") continue;
    const Quat r(s["origin"][6].get<double>(), s["origin"][3].get<double>(), s["origin"][4].get<double>(),
                 s["origin"][5].get<double>());
    const Vec3 size(s["size"][0].get<double>(), s["size"][1].get<double>(), s["size"][2].get<double>());
    return (r.toRotationMatrix() * size.asDiagonal()).cwiseAbs().rowwise().sum();
  }
  return Vec3::Constant(std::nan(""));
}

// Paper 001's planar links: 2 m, 5 kg, J = 10 kg m² about z, 5 about x and y: a uniform box of
// 3.5 x 3.5 m. Cut to the joints' reach from the centre of mass, it is the 2 m link along x and 1.5
// rod diameters across (3 × 0.02 × the 2 m link length); the last link, hinged at one end only,
// reaches as far beyond its centre: the same bar.
TEST(Viewer, PlateLikeInertiasOfLinksAreCutToTheLinks) {
  Mechanism m;
  m.name = "link";
  const Mat3 plate = Vec3(5, 5, 10).asDiagonal();
  m.add_body("link1", 5.0, Vec3(1, 0, 0), plate);
  m.add_body("link2", 5.0, Vec3(1, 0, 0), plate);
  m.add_joint("shoulder", JointType::revolute, "ground", "link1");
  m.add_joint("elbow", JointType::revolute, "link1", "link2", Transform::translation(Vec3(2, 0, 0)));
  Trajectory run;
  run.columns = {"t", "q.shoulder", "q.elbow"};
  run.rows.push_back(VecX::Zero(3));
  const json data = page_json(viewer_page(m, Model::build(m), run));
  EXPECT_EQ(data["scale"].get<double>(), 2.0);
  for (int i = 0; i < 2; ++i)
    EXPECT_TRUE(test::near(box_extent(data["bodies"][i]["shapes"]), Vec3(2, 0.12, 0.12), 1e-12)) << i;
}

// Visuals are drawn as the model gives them; an STL mesh travels inside the page byte for byte, a
// mesh of another format or an STL file that cannot be read becomes a placeholder with a note
// naming the file (on the page and for the caller), and the page is written all the same.
TEST(Viewer, VisualsAreDrawnAsGivenWithTheirMeshes) {
  const auto dir = scratch("visuals");
  std::filesystem::create_directories(dir);
  const std::string stl = "solid t\n facet normal 0 0 1\n  outer loop\n   vertex 0 0 0\n   vertex 1 0 0\n"
                          "   vertex 0 1 0\n  endloop\n endfacet\nendsolid t\n";
  std::ofstream(dir / "part.stl") << stl;
  Mechanism m = pendulum();
  VisualSpec box, mesh, obj;
  box.size = Vec3(0.1, 0.2, 0.3);
  box.origin = Transform::translation(Vec3(0, 0, -0.5));
  box.rgba = {1, 0, 0, 0.5};
  mesh.shape = obj.shape = VisualSpec::Shape::mesh;
  mesh.file = "part.stl";
  mesh.scale = Vec3(2, 2, 2);
  obj.file = "part.obj";
  m.bodies[0].visuals = {box, mesh, obj};
  ViewerOptions options;
  options.model_dir = dir.string();
  const json data = page_json(viewer_page(m, Model::build(m), pendulum_run({{0, 0, 0}}), options));
  const json& shapes = data["bodies"][0]["shapes"];
  EXPECT_EQ(data["bodies"][0]["drawn_from"], "visuals");
  EXPECT_EQ(data["bodies"][1]["drawn_from"], "joints");
  ASSERT_EQ(shapes.size(), 3u);
  EXPECT_EQ(shapes[0]["size"], json({0.1, 0.2, 0.3}));
  EXPECT_EQ(shapes[0]["rgba"], json({1.0, 0.0, 0.0, 0.5}));
  EXPECT_EQ(shapes[0]["origin"], json({0.0, 0.0, -0.5, 0.0, 0.0, 0.0, 1.0}));
  EXPECT_EQ(shapes[1]["scale"], json({2.0, 2.0, 2.0}));
  ASSERT_EQ(data["meshes"].size(), 1u);
  EXPECT_EQ(decoded(data["meshes"][0]), stl);
  EXPECT_EQ(shapes[2]["mesh"], -1);
  ASSERT_EQ(data["notes"].size(), 1u);
  EXPECT_NE(data["notes"][0].get<std::string>().find("'part.obj' is not STL"), std::string::npos);
  std::filesystem::remove(dir / "gone.stl");
  std::ofstream(dir / "empty.stl");
  m.bodies[0].visuals[1].file = "gone.stl";
  m.bodies[0].visuals.push_back(m.bodies[0].visuals[1]);
  m.bodies[0].visuals.back().file = "empty.stl";
  m.bodies[0].where = "m.yaml:3";
  std::vector<std::string> notes;
  options.notes = &notes;
  const json missing = page_json(viewer_page(m, Model::build(m), pendulum_run({{0, 0, 0}}), options));
  const json& drawn = missing["bodies"][0]["shapes"];
  ASSERT_EQ(drawn.size(), 4u);
  EXPECT_EQ(drawn[1]["mesh"], -1);  // a wire cube, as the .obj
  EXPECT_EQ(drawn[3]["mesh"], -1);
  EXPECT_EQ(drawn[1]["scale"], json({2.0, 2.0, 2.0}));
  EXPECT_TRUE(missing["meshes"].empty());
  ASSERT_EQ(missing["notes"].size(), 3u);
  EXPECT_EQ(missing["notes"], json(notes));  // the caller gets the page's notes
  const std::string gone = missing["notes"][0], empty = missing["notes"][2];  // in the visuals' order
  EXPECT_EQ(gone, "m.yaml:3: body 'upper': cannot read mesh file '" + (dir / "gone.stl").string() +
                      "' (missing, unreadable or empty); drawn as a wire cube");
  EXPECT_NE(empty.find("cannot read mesh file '" + (dir / "empty.stl").string() + "'"), std::string::npos) << empty;
}

// A one-row run of `model` at its initial q (every q column the page asks for).
Trajectory initial_run(const Model& model) {
  Trajectory run;
  run.columns = {"t"};
  const std::vector<std::string> names = model.coordinate_names();
  run.columns.insert(run.columns.end(), names.begin(), names.begin() + model.nq);
  VecX row(1 + model.nq);
  row << 0.0, model.q0;
  run.rows.push_back(row);
  return run;
}

std::string file_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

const std::string robots_dir = std::string(LOOPDYN_SOURCE_DIR) + "/models/robots/";

// The page of a URDF robot with STL meshes (the bundled KUKA KR5, models/robots/kr5): every body is
// drawn from its own mesh, each of the seven files embedded once, byte for byte, with no note.
TEST(Viewer, AUrdfRobotIsDrawnWithItsStlMeshes) {
  const std::string urdf = robots_dir + "kr5/kr5_sixx_r650.urdf";
  const Mechanism m = load_mechanism(urdf);
  const Model model = Model::build(m);
  ViewerOptions options;
  options.model_dir = robots_dir + "kr5";
  const json data = page_json(viewer_page(m, model, initial_run(model), options));
  ASSERT_EQ(data["bodies"].size(), 7u);
  EXPECT_TRUE(data["notes"].empty()) << data["notes"];
  ASSERT_EQ(data["meshes"].size(), 7u);
  std::set<int> used;
  for (int i = 0; i < model.nbodies; ++i) {
    const json& body = data["bodies"][i];
    const BodySpec& spec = m.bodies[static_cast<std::size_t>(model.mechanism_body[i])];
    EXPECT_EQ(body["name"], spec.name);
    EXPECT_EQ(body["drawn_from"], "visuals") << spec.name;
    ASSERT_EQ(body["shapes"].size(), 1u) << spec.name;
    const json& shape = body["shapes"][0];
    EXPECT_EQ(shape["shape"], "mesh");
    const int mesh = shape["mesh"];
    ASSERT_GE(mesh, 0) << spec.name;
    used.insert(mesh);
    EXPECT_EQ(decoded(data["meshes"][mesh]), file_bytes(spec.visuals.at(0).file)) << spec.name;
    EXPECT_GT(decoded(data["meshes"][mesh]).size(), 1000u) << spec.name;  // a real mesh, not an empty file
  }
  EXPECT_EQ(used.size(), 7u);  // one file per link
}

// The page of an MJCF model (models/robots/fourbar.xml): its box geoms are the bodies' visuals, at
// their full sizes (MJCF gives half-sizes), positions and colours; the loop's ground-side joint
// point is drawn on ground.
TEST(Viewer, AnMjcfModelIsDrawnWithItsGeoms) {
  const Mechanism m = load_mechanism(robots_dir + "fourbar.xml");
  const Model model = Model::build(m);
  const json data = page_json(viewer_page(m, model, initial_run(model)));
  EXPECT_TRUE(data["notes"].empty()) << data["notes"];
  EXPECT_TRUE(data["meshes"].empty());
  struct Link {
    const char* name;
    double length;
    std::array<double, 4> rgba;
  };
  const Link links[] = {{"crank", 0.1, {0.8, 0.2, 0.2, 1}}, {"coupler", 0.35, {0.6, 0.6, 0.65, 1}},
                        {"rocker", 0.25, {0.2, 0.3, 0.8, 1}}};
  ASSERT_EQ(data["bodies"].size(), 3u);
  for (const Link& link : links) {
    const json* body = nullptr;
    for (const json& b : data["bodies"])
      if (b["name"] == link.name) body = &b;
    ASSERT_NE(body, nullptr) << link.name;
    EXPECT_EQ((*body)["drawn_from"], "visuals") << link.name;
    ASSERT_EQ((*body)["shapes"].size(), 1u) << link.name;
    const json& box = (*body)["shapes"][0];
    EXPECT_EQ(box["shape"], "box") << link.name;
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(box["size"][k].get<double>(), k == 0 ? link.length : 0.02, 1e-12) << link.name;
    const Vec3 at(box["origin"][0].get<double>(), box["origin"][1].get<double>(), box["origin"][2].get<double>());
    EXPECT_TRUE(test::near(at, Vec3(link.length / 2, 0, 0), 1e-12)) << link.name << ": " << at.transpose();
    for (int k = 0; k < 4; ++k) EXPECT_NEAR(box["rgba"][k].get<double>(), link.rgba[k], 1e-7) << link.name;  // float
  }
  EXPECT_EQ(data["ground"].size(), 2u);  // the crank's and the rocker's pivots
}

// A run that does not fit the model is refused, naming the run, the line and the column.
TEST(Viewer, RunsThatDoNotMatchTheModelAreRefused) {
  const Mechanism m = pendulum();
  const Model model = Model::build(m);
  ViewerOptions o;
  o.run_source = "run.csv";
  auto message = [&](const Trajectory& run) { return error_of([&] { viewer_page(m, model, run, o); }); };
  Trajectory run = pendulum_run({{0, 0.1, 0.2}, {0.1, 0.2, 0.3}});
  Trajectory other = run;
  other.columns[2] = "q.knee";
  EXPECT_NE(message(other).find("run.csv: no column 'q.elbow' of model 'pendulum'"), std::string::npos) << message(other);
  other.columns.push_back("q.hip");
  other.columns[2] = "q.elbow";
  for (VecX& r : other.rows) r.conservativeResize(5);
  EXPECT_NE(message(other).find("column 'q.hip' is not a coordinate of model 'pendulum'"), std::string::npos);
  other = run;
  other.rows[1](2) = std::nan("");
  EXPECT_NE(message(other).find("run.csv:3: column 'q.elbow' is nan"), std::string::npos) << message(other);
  other = run;
  other.rows[1](0) = -1.0;
  EXPECT_NE(message(other).find("run.csv:3: t = -1 is before the previous row's 0"), std::string::npos) << message(other);
  other = run;
  other.columns[0] = "time";
  EXPECT_NE(message(other).find("run.csv: no column 't'"), std::string::npos);
  other = run;
  other.rows.clear();
  EXPECT_NE(message(other).find("run.csv: no rows"), std::string::npos);
  o.plots = {"q.elbw"};
  EXPECT_NE(message(run).find("run.csv: no column 'q.elbw' to plot (near: 'q.elbow')"), std::string::npos) << message(run);
  o.plots = {"q.elbow"};
  EXPECT_EQ(page_json(viewer_page(m, model, run, o))["plots"][1]["name"], "q.elbow");
}

// Poses are per body and row, not per vertex: a page grows by 7 float32 (28 bytes, 37⅓ in base64)
// per body and row, plus the time in JSON (up to ~20 characters) and the plotted energy (4 bytes).
TEST(Viewer, PagesGrowByAPoseForEachBodyAndRow) {
  const Mechanism m = pendulum();
  const Model model = Model::build(m);
  auto size = [&](int rows) {
    std::vector<std::array<double, 3>> r;
    for (int k = 0; k < rows; ++k) r.push_back({0.001 * k, 0.001 * k, -0.002 * k});
    return static_cast<double>(viewer_page(m, model, pendulum_run(r)).size());
  };
  const double per_row = (size(1001) - size(1)) / 1000.0;
  const double poses = 2 * 28 * 4.0 / 3, tip = 12 * 4.0 / 3, energy = 4 * 4.0 / 3;
  EXPECT_GT(per_row, poses + tip + energy);
  EXPECT_LT(per_row, poses + tip + energy + 22);
}

TEST(Csv, ReadBackGivesTheWrittenColumnsAndRows) {
  Trajectory run = pendulum_run({{0, 0.25, -1.5}, {0.125, 3.0, 1e-300}});
  const auto path = scratch("round.csv");
  write_csv(path.string(), run);
  const Trajectory back = read_csv(path.string());
  EXPECT_EQ(back.columns, run.columns);
  ASSERT_EQ(back.rows.size(), 2u);
  for (std::size_t k = 0; k < 2; ++k) EXPECT_EQ(back.rows[k], run.rows[k]);  // binary fractions: exact
}

TEST(Csv, BadFilesAreRefusedWithTheLine) {
  const auto path = scratch("bad.csv");
  auto message = [&](const std::string& text) {
    std::ofstream(path) << text;
    return error_of([&] { read_csv(path.string()); });
  };
  const std::string p = path.string();
  EXPECT_EQ(error_of([] { read_csv("/nonexistent/run.csv"); }), "cannot open CSV file '/nonexistent/run.csv'");
  EXPECT_EQ(message(""), p + ":1: no header line of column names");
  EXPECT_EQ(message("t,a\n"), p + ": no rows after the header");
  EXPECT_EQ(message("t,a,a\n0,1,2\n"), p + ":1: column 'a' appears twice");
  EXPECT_EQ(message("t,,a\n0,1,2\n"), p + ":1: empty column name in the header");
  EXPECT_EQ(message("t,a\n0,1\n0.1,2,3\n"), p + ":3: 3 cells, the header has 2");
  EXPECT_EQ(message("t,a\n0,1\n0.1,x2\n"), p + ":3: column 'a' is not a number: 'x2'");
  EXPECT_EQ(message("t,a\n0,1\n0.1,\n"), p + ":3: column 'a' is not a number: ''");
}

}  // namespace
