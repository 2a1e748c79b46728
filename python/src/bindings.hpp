// The pieces of the _loopdyn extension module (module.cpp puts them together).
#pragma once
#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include <memory>

#include "loopdyn/core/model.hpp"
#include "loopdyn/run/integrators.hpp"

namespace loopdyn::python {

namespace py = pybind11;

void bind_model(py::module_& m);    // model.cpp: Model, info, assemble, generators
void bind_methods(py::module_& m);  // methods.cpp: Method, simulate
void bind_viewer(py::module_& m);   // viewer.cpp: the viewer's page of a run
void bind_analysis(py::module_& m); // analysis.cpp: Analysis, InverseDynamics

/// Each note (import notes, the viewer page's notes) as a Python UserWarning, as the CLI prints
/// them on stderr; error_already_set when warnings are errors.
void warn(const std::vector<std::string>& notes);

/// model, when it is one: pybind11 passes None as an empty shared_ptr, which the classes taking a
/// Model dereferenced (`loopdyn.Analysis(None)` crashed Python); TypeError naming `where` instead.
std::shared_ptr<const Model> required(std::shared_ptr<const Model> model, const char* where);

/// The integrator of `name` (rk2, rk4, dopri5, bdf); ValueError listing them otherwise.
IntegratorKind integrator_kind(const std::string& name);

}  // namespace loopdyn::python
