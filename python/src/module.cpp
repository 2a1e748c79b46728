// The _loopdyn extension: loopdyn's C++ library for Python (python/loopdyn/__init__.py wraps it).
// loopdyn's error kinds become one Python exception class each, with the library's message.
#include "bindings.hpp"
#include "loopdyn/formulations/formulation.hpp"
#include "loopdyn/core/mechanism.hpp"
#include "loopdyn/run/run_watch.hpp"

PYBIND11_MODULE(_loopdyn, m) {
  namespace py = pybind11;
  using namespace loopdyn;
  m.doc() = "loopdyn: forward dynamics of multibody systems with closed kinematic loops";
  // ModelError is a std::invalid_argument in C++: a ValueError in Python too, so that code
  // catching bad input generically still catches it.
  py::register_exception<ModelError>(m, "ModelError", PyExc_ValueError);
  py::register_exception<SingularConfigurationError>(m, "SingularConfigurationError", PyExc_RuntimeError);
  py::register_exception<IntegrationError>(m, "IntegrationError", PyExc_RuntimeError);
  py::register_exception<RunWatchError>(m, "RunWatchError", PyExc_RuntimeError);
  python::bind_model(m);
  python::bind_methods(m);
  python::bind_viewer(m);
}
