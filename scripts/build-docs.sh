#!/usr/bin/env bash
# Builds the HTML documentation and checks it, offline:
#
#   build-docs.sh PYTHON OUT
#
# PYTHON is the interpreter of a virtual environment with mpidht installed
# (the Python API reference is read from the installed package's
# docstrings, so it must be this checkout's: scripts/common.sh's
# python_env); Sphinx and MyST, the `docs` extra of pyproject.toml, are
# installed into it if missing. Writes OUT/html (open OUT/html/index.html)
# and Sphinx's cache, OUT/doctrees; nothing in the source tree.
#
# 1. Sphinx, strict: warnings are errors (-W) and every cross-reference
#    must resolve (-n), so a broken reference, a missing page or anchor, or
#    a header declaration the C API reference cannot read fails the build.
# 2. scripts/check-links.py: every link of README.md and docs/ names a file
#    (and anchor) of the repository, or is an https:// URL (not fetched).
# 3. The README's C example compiles against include/ (mpicc.openmpi,
#    -Wall -Wextra -Werror) and its Python example runs on 2 processes.
# Exits non-zero at the first that fails; the last line sums up.
set -euo pipefail
source "$(dirname "$0")/common.sh"

if (($# == 1)) && [[ $1 == -h || $1 == --help ]]; then
  script_help
  exit 0
fi
if (($# != 2)); then
  echo "usage: build-docs.sh PYTHON OUT (--help says more)" >&2
  exit 2
fi
python=$1 out=$2
start=$SECONDS
mkdir -p "$out"

if ! "$python" -c "import sphinx, myst_parser" 2> /dev/null; then
  mapfile -t deps < <("$python" -c 'import sys, tomllib
with open(sys.argv[1], "rb") as f:
    print("\n".join(tomllib.load(f)["project"]["optional-dependencies"]["docs"]))' \
    "$repo/pyproject.toml")
  "$python" -m pip install -q --disable-pip-version-check "${deps[@]}"
fi

# Every page read afresh (no cache: a warning is only given when a page is
# read); no bytecode written next to docs/_ext (-B). Importing mpi4py, for
# the Python API reference, starts MPI as a singleton.
rm -rf "$out/html" "$out/doctrees"
"$python" -B -m sphinx -W --keep-going -n -q -b html -d "$out/doctrees" "$repo/docs" "$out/html"
pages=$(find "$repo/docs" -name "*.md" -o -name "*.rst" | wc -l)

links=$("$python" "$repo/scripts/check-links.py") || { echo "$links"; exit 1; }
echo "$links"

# readme_block LANG: the first ```LANG block of README.md.
readme_block() {
  awk -v fence="\`\`\`$1" '$0 == fence { on = 1; next } on && $0 == "```" { exit } on' \
    "$repo/README.md"
}
c=$(readme_block c)
python_example=$(readme_block python)
[[ -n $c && -n $python_example ]] || { echo "README.md: no C or no Python example"; exit 1; }
{
  grep '^#include' <<< "$c"
  echo 'int main(int argc, char **argv) {'
  echo 'MPI_Init(&argc, &argv);'
  grep -v '^#include' <<< "$c"
  echo 'MPI_Finalize();'
  echo 'return 0; }'
} > "$out/readme-example.c"
mpicc.openmpi -std=c11 -Wall -Wextra -Werror -fsyntax-only -I"$repo/include" \
  "$out/readme-example.c" || { echo "README.md: the C example does not compile"; exit 1; }
printf '%s\n' "$python_example" > "$out/readme-example.py"
timeout 300 mpiexec.openmpi -n 2 "$python" "$out/readme-example.py" \
  > "$out/readme-example.log" 2>&1 ||
  { cat "$out/readme-example.log"; echo "README.md: the Python example fails"; exit 1; }

echo "docs: $pages pages in $out/html, links checked, the README's examples compile" \
     "and run ($((SECONDS - start)) s)"
