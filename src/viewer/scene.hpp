// What the viewer page draws of each body, in the body's frame: its visual shapes (BodySpec::
// visuals) or, for a body without any, the shapes made from its joints and inertia (docs/viewer.md,
// "Bodies without visuals"). Page data as JSON: every shape is {shape, origin, rgba, ...} with
// origin = [px, py, pz, qx, qy, qz, qw], the shape frame in the body frame.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "loopdyn/core/mechanism.hpp"
#include "loopdyn/core/model.hpp"

namespace loopdyn::viewer {

struct Scene {
  nlohmann::json bodies = nlohmann::json::array();  ///< (nbodies) {name, drawn_from, shapes}, model order
  nlohmann::json ground = nlohmann::json::array();  ///< shapes fixed in the world (ground-side joint points)
  nlohmann::json meshes = nlohmann::json::array();  ///< base64 of each STL file; mesh shapes hold an index
  std::vector<std::string> notes;                   ///< shown on the page (meshes drawn as placeholders: not
                                                    ///< STL, or a file that cannot be read)
  double scale = 1.0;                               ///< sizes the fallback shapes [m] (make_scene)
};

/// `swept` is the size of the region the bodies' origins sweep over the run (its box's diagonal):
/// the fallback shapes are sized by the typical link length or, for a mechanism of many links that
/// sweeps a region far larger than one link, by a 40th of that region, so that they stay visible
/// once the camera frames it. A mesh file that cannot be read is drawn as a placeholder with a
/// note naming the body's place and the file. Throws std::invalid_argument when model was not
/// built from mechanism.
Scene make_scene(const Mechanism& mechanism, const Model& model, const std::string& model_dir, double swept);

/// RFC 4648 base64 of `bytes` bytes.
std::string base64(const void* data, std::size_t bytes);

}  // namespace loopdyn::viewer
