#!/usr/bin/env bash
# Installs the dependencies, builds loopdyn in Release and simulates the bundled default mechanism
# (the double pendulum of paper 001 §4.1), writing double_pendulum.csv. Builds the Python module
# too and makes `import loopdyn` work in Debian's python3 (docs/python.md).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DLOOPDYN_TESTS=OFF -DLOOPDYN_BENCH=OFF >/dev/null
cmake --build build -j"$(nproc)" --target loopdyn_cli _loopdyn
./build/loopdyn info models/double_pendulum.yaml
./build/loopdyn simulate models/double_pendulum.yaml --t-end 10 --out double_pendulum.csv
bash scripts/install-python-path.sh
