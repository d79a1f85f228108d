#!/usr/bin/env bash
# Runs the Python quickstart with Debian's python3 (its python3-cffi and python3-numpy) against
# libsightline_c. Usage: run.sh LIB_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
SIGHTLINE_C_LIBRARY="$1/libsightline_c.so" /usr/bin/python3 "$here/quickstart.py"
