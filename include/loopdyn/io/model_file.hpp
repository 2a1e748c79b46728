// YAML model file (docs/model-format.md): parse into a Mechanism. Syntax and shape errors
// (malformed YAML, unknown or misspelt keys, wrong vector lengths, wrong types, missing required
// fields) throw ModelError "file:line: problem"; each spec's `where` is set to "file:line" so that
// Model::build names the same place for semantic errors (unknown bodies, bad inertia, ...).
// The writer produces the same format, so that parse_mechanism(write_mechanism(m)) == m.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "loopdyn/core/mechanism.hpp"

namespace loopdyn {

/// Reads and parses a model file: YAML, or MJCF for a `.xml` or `.mjcf` path (io/mjcf.hpp).
/// Throws ModelError when it cannot be read or is invalid. `notes`, when given, receives one line
/// per thing an importer left out without changing the dynamics (MJCF contacts, ...).
Mechanism load_mechanism(const std::string& path, std::vector<std::string>* notes = nullptr);

/// Largest model file read (bytes): 256 MiB, three times the 100,000-cell spatial ladder.
inline constexpr std::size_t kMostModelBytes = std::size_t{256} << 20;

/// The text of the model file at `path` (YAML, URDF); ModelError when it cannot be opened or read,
/// or is longer than `most` bytes (`loopdyn info /dev/zero` read until memory ran out).
std::string read_model_text(const std::string& path, std::size_t most = kMostModelBytes);
/// Parses model-file text; `source` names it in messages.
Mechanism parse_mechanism(const std::string& text, const std::string& source);

/// Model-file text of a mechanism: every field that the reader reads, numbers in their shortest
/// round-trip form, rotations as roll-pitch-yaw, keys at their default value left out (`where` is
/// not written). Throws ModelError when the mechanism has C++ force callbacks (a file cannot hold them).
std::string write_mechanism(const Mechanism& m);
/// Writes write_mechanism(m) to `path`, with every absolute mesh file (an importer's: URDF and MJCF
/// meshes are kept absolute) written relative to the folder of `path`, from which the reader takes
/// it: the file and its meshes can move together. Throws ModelError naming the path when it cannot
/// be written.
void save_mechanism(const Mechanism& m, const std::string& path);

/// Throws std::invalid_argument when `out` names the file `input` (by any of its names), which
/// writing `out` would overwrite: `loopdyn simulate m.yaml --out m.yaml` replaced the model by its
/// trajectory, `convert r.urdf --out r.urdf` the URDF by YAML, without a word. `what` names the
/// output in the message (an option, "the page").
void refuse_overwriting(const std::string& input, const std::string& out, const std::string& what);

/// `loopdyn convert` and Python's loopdyn.convert: loads any model file load_mechanism reads,
/// checks it by building its Model (so that a file that would not load is never written; throws
/// as Model::build does), writes it with save_mechanism when `out` is not empty, and returns
/// write_mechanism's text of it (refuse_overwriting: `out` is not `path`). `notes` as load_mechanism's.
std::string convert_model_file(const std::string& path, const std::string& out,
                               std::vector<std::string>* notes = nullptr);

}  // namespace loopdyn
