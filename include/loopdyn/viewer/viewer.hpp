// The viewer: one self-contained HTML page that animates a run of a mechanism in the browser
// (three.js, embedded in the page; docs/viewer.md). Body poses are computed here, with loopdyn's
// own kinematics, from the run's joint coordinates (the q.* columns every method writes), and
// embedded per frame as float32 position + quaternion per body; the page draws each body's visual
// geometry (BodySpec::visuals) or, for a body without any, shapes made from its joints and inertia.
#pragma once

#include <string>
#include <vector>

#include "loopdyn/core/mechanism.hpp"
#include "loopdyn/core/model.hpp"
#include "loopdyn/run/simulator.hpp"

namespace loopdyn {

struct ViewerOptions {
  /// Columns of the run plotted below the 3D view, after energy, residual.position and
  /// residual.velocity (those three when the run has them).
  std::vector<std::string> plots;
  /// Names the run in messages (the CSV's path), and in the page's title.
  std::string run_source = "run";
  /// The folder that relative mesh paths of the visuals start from (the model file's); "" is the
  /// current folder.
  std::string model_dir;
  /// When given, receives the notes the page shows, one line each (meshes drawn as wire cubes: a
  /// format the page does not read, or a file that cannot be read), for the caller to print.
  std::vector<std::string>* notes = nullptr;
};

/// The page for `run` (a Trajectory, or read_csv of its CSV) of `model`, built from `mechanism`
/// (whose visuals it draws). Throws ModelError naming the run and the column for a run that does
/// not match the model (a q column missing or foreign to it, a non-finite coordinate, t not
/// increasing) or an unknown plot column (with the near matches); std::invalid_argument when model
/// was not built from mechanism. A mesh that cannot be drawn does not stop the page: it becomes a
/// wire cube and a note (ViewerOptions::notes).
std::string viewer_page(const Mechanism& mechanism, const Model& model, const Trajectory& run,
                        const ViewerOptions& options = {});
/// Writes viewer_page(...) to `path`; throws std::runtime_error naming it when it cannot.
void write_viewer_page(const std::string& path, const Mechanism& mechanism, const Model& model,
                       const Trajectory& run, const ViewerOptions& options = {});

}  // namespace loopdyn
