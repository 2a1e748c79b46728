#!/usr/bin/env bash
# Test install_tree: `cmake --install` of the build into a fresh prefix, then, as a user would, from
# that prefix only: examples/ built by CMake with find_package(loopdyn), examples/quickstart.cpp
# built by g++ with pkg-config, both run; the installed CLI's --version and a simulation of an
# installed model; `import loopdyn` from the prefix's site directory (when the module is built).
#   tests/install_tree.sh BUILD_DIR SOURCE_DIR PYTHON_ON
set -euo pipefail
build=$1 source=$2 python_on=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/loopdyn-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

cmake --install "$build" --prefix "$prefix" >/dev/null
# Nothing of the source or build tree may be needed from here on: hide them behind the prefix alone.
export CMAKE_PREFIX_PATH=$prefix PKG_CONFIG_PATH=$prefix/lib/pkgconfig

expect() {  # expect WHAT REGEX OUTPUT
  if ! grep -Eq "$2" <<<"$3"; then
    echo "FAIL: $1: no line matching '$2' in:"; echo "$3"; exit 1
  fi
  echo "ok: $1"
}

cmake -S "$prefix/share/loopdyn/examples" -B "$work/examples" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/examples" >/dev/null
expect "examples/ with find_package(loopdyn)" '^t = 2\.00 .*energy' "$("$work/examples/example_quickstart")"

g++ -std=c++20 -O1 "$prefix/share/loopdyn/examples/quickstart.cpp" -o "$work/quickstart_pc" \
    $(pkg-config --cflags --libs loopdyn)
expect "quickstart.cpp with pkg-config" '^t = 2\.00 .*energy' "$("$work/quickstart_pc")"

expect "installed CLI --version" "^loopdyn $(pkg-config --modversion loopdyn)" "$("$prefix/bin/loopdyn" --version)"
expect "installed CLI on an installed model" '^wrote +trajectory\.csv' \
  "$(cd "$work" && "$prefix/bin/loopdyn" simulate "$prefix/share/loopdyn/models/fourbar_park_regular.yaml" --t-end 0.1 2>&1)"

if [ "$python_on" = ON ]; then
  site=$(find "$prefix" -type d -name dist-packages)
  for typed in py.typed _loopdyn.pyi; do
    [ -f "$site/loopdyn/$typed" ] || { echo "FAIL: $site/loopdyn/$typed not installed"; exit 1; }
  done
  echo "ok: the package's types (py.typed, _loopdyn.pyi) installed"
  expect "import loopdyn from the prefix" "^$prefix/" \
    "$(cd "$work" && PYTHONPATH=$site /usr/bin/python3 -c 'import loopdyn; print(loopdyn.__file__); print(loopdyn.__version__)')"
fi
