#!/usr/bin/env bash
# Installs loopdyn's build and test dependencies from Debian 12 packages (run as root).
# Does nothing when they are all present already.
#   scripts/install-deps.sh          what building and running loopdyn needs (scripts/quickstart.sh)
#   scripts/install-deps.sh --test   also what only the test suite needs (scripts/test.sh): chromium,
#                                    the real browser that opens the viewer's pages (docs/viewer.md),
#                                    pkgconf (the install test builds an example with pkg-config) and
#                                    python3-mypy (the Python stubs checked by stubtest and mypy)
set -euo pipefail
# libjs-three: three.js r111, embedded into the viewer's pages at build time.
packages=(g++ cmake make libeigen3-dev libyaml-cpp-dev libyaml-dev libcli11-dev nlohmann-json3-dev
          libgtest-dev libbenchmark-dev libtbb-dev python3
          libmetis-dev  # dca's assembly tree (nested dissection)
          libsuitesparse-dev  # SuiteSparseQR: the structural rank check of large loop systems
          python3-dev pybind11-dev python3-pybind11 python3-numpy python3-pytest
          python3-pandas python3-matplotlib  # the README's Python lines (to_pandas) and examples/quickstart.py's plot
          liburdfdom-dev libconsole-bridge-dev  # URDF: urdfdom (tinyxml2 below reads <loop_joint>)
          libmujoco-dev libtinyxml2-dev libmujoco-samples  # MJCF: MuJoCo, tinyxml2; the samples for tests
          libmuparser-dev  # drives: motions as expressions of t
          libsundials-dev  # the implicit integrator (bdf): CVODE
          python3-distributed python3-tqdm python3-yaml  # `loopdyn sweep`: parameter studies on Dask, its progress bar, study files
          libjs-three)
if [ "${1:-}" = "--test" ]; then
  packages+=(chromium pkgconf python3-mypy)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
