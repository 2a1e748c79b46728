// Conversions between numpy arrays and loopdyn's Eigen vectors at the Python boundary. Arguments
// are checked here, once, so that a wrong shape or a NaN is a ValueError naming the argument and
// never reaches the library (where it would be an assertion or a meaningless result).
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>

#include "loopdyn/core/spatial.hpp"

namespace loopdyn::python {

namespace py = pybind11;

/// A vector argument (q, u, udot, ...): any object numpy reads as an array (a list, a tuple, an
/// array), checked by vector_arg. A py::object whose name in signatures and in the generated
/// stubs is numpy.typing.ArrayLike (a py::handle would show as "handle").
class ArrayLike : public py::object {
 public:
  PYBIND11_OBJECT_DEFAULT(ArrayLike, py::object, [](PyObject*) { return true; })
};

/// An optional vector argument (the model's q0 when None, ...): typing.Optional[ArrayLike].
class OptionalArrayLike : public py::object {
 public:
  PYBIND11_OBJECT_DEFAULT(OptionalArrayLike, py::object, [](PyObject*) { return true; })
};

/// numpy's float64 C-contiguous view of `value`: the caller's own buffer when it is one already
/// (no copy), else numpy's conversion (lists, integer arrays). Throws ValueError naming `name`
/// ("q: expected a 1-D array of nq = 3 numbers, got shape (3, 1)") for another shape or a
/// non-finite entry.
py::array_t<double, py::array::c_style> vector_arg(const py::handle& value, Eigen::Index size, const char* name,
                                                   const char* size_name);

/// The checked vector_arg copied into `out` (already sized: no allocation).
void read_vector(const py::handle& value, const char* name, const char* size_name, VecX& out);

/// A new numpy array holding v.
py::array_t<double> to_numpy(const Eigen::Ref<const VecX>& v);

/// A finite time: ValueError naming the argument otherwise.
void check_finite(double value, const char* name);

}  // namespace loopdyn::python

namespace pybind11::detail {
template <>
struct handle_type_name<loopdyn::python::ArrayLike> {
  static constexpr auto name = const_name("numpy.typing.ArrayLike");
};
template <>
struct handle_type_name<loopdyn::python::OptionalArrayLike> {
  static constexpr auto name = const_name("typing.Optional[numpy.typing.ArrayLike]");
};
}  // namespace pybind11::detail
