#!/usr/bin/env bash
# A screenshot of the viewer's page (docs/viewer.md) for a model, at a time, made by Debian's
# chromium (headless, software WebGL):
#   scripts/viewer_screenshot.sh MODEL.yaml TIME OUT.png [simulate options ...]
# Needs ./build/loopdyn (scripts/quickstart.sh) and chromium (scripts/install-deps.sh --test).
set -euo pipefail
model=$(realpath "$1") t=$2 out=$(realpath "$3")
shift 3
cli=$(realpath build/loopdyn)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
(cd "$dir" && "$cli" simulate "$model" --out run.csv --view "$@" >/dev/null)
chromium --headless --no-sandbox --user-data-dir="$dir/profile" --use-angle=swiftshader --enable-unsafe-swiftshader \
  --hide-scrollbars --window-size=900,760 --virtual-time-budget=3000 --screenshot="$out" \
  "file://$dir/run.html#t=$t&paused" >/dev/null 2>&1
echo "wrote $out"
