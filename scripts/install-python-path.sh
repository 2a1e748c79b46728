#!/usr/bin/env bash
# Makes `import loopdyn` work in Debian's python3 (run as root, after the module is built): a
# loopdyn.pth file in its site directory names build/python, so the module in use is always the
# last one built. Remove that file to undo.
set -euo pipefail
cd "$(dirname "$0")/.."
site=$(/usr/bin/python3 -c 'import site; print(site.getsitepackages()[0])')
mkdir -p "$site"
echo "$PWD/build/python" > "$site/loopdyn.pth"
/usr/bin/python3 -c "import loopdyn"
echo "python      import loopdyn works in /usr/bin/python3 ($site/loopdyn.pth -> $PWD/build/python);"
echo "            try: /usr/bin/python3 examples/quickstart.py (docs/python.md)"
