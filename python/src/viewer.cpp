// loopdyn.view: the viewer's page (loopdyn/viewer/viewer.hpp) of a run, for a model file. The model is
// read from its file here, not taken from a Model: the page draws the file's visuals, which a
// Model does not keep.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <filesystem>

#include "bindings.hpp"
#include "loopdyn/io/csv.hpp"
#include "loopdyn/io/model_file.hpp"
#include "loopdyn/viewer/viewer.hpp"

namespace loopdyn::python {

namespace {

using Table = py::array_t<double, py::array::c_style | py::array::forcecast>;

// A run given as column names and a (rows x columns) array (Result.columns, Result.data).
Trajectory run_of(const std::vector<std::string>& columns, const Table& data, const std::string& source) {
  if (data.ndim() != 2 || static_cast<std::size_t>(data.shape(1)) != columns.size())
    throw ModelError(source + ": data of shape (rows, " + std::to_string(columns.size()) + ") expected, one per column");
  Trajectory run;
  run.columns = columns;
  for (py::ssize_t r = 0; r < data.shape(0); ++r)
    run.rows.push_back(Eigen::Map<const VecX>(data.data(r, 0), static_cast<Eigen::Index>(columns.size())));
  return run;
}

void view(const std::string& model_path, const Trajectory& run, const std::string& out,
          const std::vector<std::string>& plots, const std::string& source) {
  const Mechanism mechanism = load_mechanism(model_path);
  ViewerOptions options;
  options.plots = plots;
  options.run_source = source;
  options.model_dir = std::filesystem::path(model_path).parent_path().string();
  std::vector<std::string> notes;  // meshes drawn as wire cubes: warnings, as the CLI's stderr notes
  options.notes = &notes;
  write_viewer_page(out, mechanism, Model::build(mechanism), run, options);
  warn(notes);
}

}  // namespace

void bind_viewer(py::module_& m) {
  m.def(
      "_view_table",
      [](const std::string& model, const std::vector<std::string>& columns, const Table& data, const std::string& out,
         const std::vector<std::string>& plots) { view(model, run_of(columns, data, "run"), out, plots, "run"); },
      py::arg("model"), py::arg("columns"), py::arg("data"), py::arg("out"), py::arg("plots"));
  m.def(
      "_view_csv",
      [](const std::string& model, const std::string& csv, const std::string& out, const std::vector<std::string>& plots) {
        view(model, read_csv(csv), out, plots, csv);
      },
      py::arg("model"), py::arg("csv"), py::arg("out"), py::arg("plots"));
}

}  // namespace loopdyn::python
