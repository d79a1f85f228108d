#!/usr/bin/env bash
# Builds the C# quickstart with Debian's mcs and runs it under mono against libsightline_c.
# Usage: run.sh LIB_DIR OUT_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$2"
mcs -warnaserror -out:"$2/sightline-quickstart.exe" "$here/Sightline.cs" "$here/Quickstart.cs"
LD_LIBRARY_PATH="$1${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" mono "$2/sightline-quickstart.exe"
