#!/usr/bin/env bash
# Builds the Python source distribution of this checkout, checks that it
# carries what a build and a reader need, installs it into a fresh virtual
# environment and imports mpidht there under mpiexec (Open MPI), comparing
# the versions with include/mpidht.h and `pip show` with the licence.
#
# usage: check-sdist.sh VENV OUTDIR
#   VENV    an environment made by python_env (common.sh) for Open MPI: its
#           setuptools builds the sdist and its pip installs into the fresh
#           one, whose mpi4py and NumPy wheels come from pip's cache
#   OUTDIR  scratch folder, emptied first
set -euo pipefail
source "$(dirname "$0")/common.sh"
if (($# == 1)) && [[ $1 == -h || $1 == --help ]]; then
  script_help
  exit 0
fi
(($# == 2)) || { echo "usage: check-sdist.sh VENV OUTDIR (--help says more)" >&2; exit 2; }
venv=$1 out=$2
[[ -x $venv/bin/python ]] || { echo "check-sdist.sh: VENV '$venv' has no bin/python" >&2; exit 2; }
python=$(cd "$venv" && pwd)/bin/python  # absolute: the script works in OUTDIR
rm -rf -- "$out"
mkdir -p -- "$out"
out=$(cd "$out" && pwd)
cd "$out"  # not the checkout, whose build/ folder would pass for the build package
start=$SECONDS

version=$(for part in MAJOR MINOR PATCH; do
            sed -n -E "s/^#define MPIDHT_VERSION_$part +([0-9]+) *$/\\1/p" "$repo/include/mpidht.h"
          done | paste -s -d .)
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "no version in include/mpidht.h"; exit 1; }

# PyPA's `build` calls the build backend's sdist hook, as a release would
# (`setup.py sdist` is deprecated). --no-isolation: the venv's setuptools,
# which python_env keeps at pyproject.toml's floor; the install below
# builds in pip's isolated environment from the sdist alone.
"$python" -c "import build" 2> /dev/null ||
  "$python" -m pip install -q --disable-pip-version-check build
# From a copy of the files git would commit (tracked and new, not ignored),
# so that no leftover egg-info in python/ (whose SOURCES.txt setuptools
# reads back) or build output slips into the sdist or hides a missing file.
tree=$repo
if git -C "$repo" rev-parse --git-dir > /dev/null 2>&1; then
  tree=$out/tree
  mkdir "$tree"
  git -C "$repo" ls-files -z --cached --others --exclude-standard |
    tar -c -C "$repo" --null --no-recursion --ignore-failed-read -T - -f - | tar -x -C "$tree"
fi
"$python" -m build --sdist --no-isolation --outdir "$out/dist" "$tree" > "$out/build.log" 2>&1 ||
  { cat "$out/build.log"; exit 1; }
sdist=$out/dist/mpidht-$version.tar.gz
[[ -f $sdist ]] || { echo "expected $sdist, got: $(ls "$out/dist")"; exit 1; }

# Contents: the metadata files, and every tracked file under include/, src/
# and python/ (the C library, the extension, the packages and their tests).
listing=$(tar -tzf "$sdist" | sed "s|^mpidht-$version/||")
required=(LICENSE CITATION.cff CHANGELOG.md README.md pyproject.toml setup.py MANIFEST.in
          python/mpidht_sim/configs/simdol2d.toml)
if git -C "$repo" rev-parse --git-dir > /dev/null 2>&1; then
  mapfile -t -O ${#required[@]} required < <(git -C "$repo" ls-files include src python)
fi
missing=()
for file in "${required[@]}"; do
  grep -qxF -- "$file" <<< "$listing" || missing+=("$file")
done
((${#missing[@]} == 0)) || { printf 'missing from the sdist: %s\n' "${missing[@]}"; exit 1; }
if grep -E '(__pycache__|\.pyc$|\.so$|\.o$)' <<< "$listing"; then
  echo "build products in the sdist (above)"
  exit 1
fi

# A fresh environment with no pip of its own: VENV's pip installs into it,
# with a temporary folder of its own, which the build must leave empty.
python3 -m venv --without-pip "$out/venv"
mkdir "$out/tmp"
TMPDIR=$out/tmp MPICC=mpicc.openmpi "$python" -m pip --python "$out/venv/bin/python" install -q \
  --disable-pip-version-check "$sdist" > "$out/install.log" 2>&1 ||
  { cat "$out/install.log"; exit 1; }
left=$(ls -A "$out/tmp")
[[ -z $left ]] || { echo "the install left in its temporary folder: $left"; exit 1; }

got=$(mpiexec.openmpi -n 1 "$out/venv/bin/python" -c \
      "import mpidht, mpidht_sim; print(mpidht.__version__, mpidht_sim.__version__)")
[[ $got == "$version $version" ]] ||
  { echo "mpidht, mpidht_sim report '$got'; include/mpidht.h says $version"; exit 1; }
show=$("$python" -m pip --python "$out/venv/bin/python" show mpidht)
grep -qxF "Version: $version" <<< "$show" && grep -qxF "License-Expression: BSD-3-Clause" <<< "$show" ||
  { echo "$show"; echo "pip show: version or licence wrong"; exit 1; }
echo "sdist $(basename "$sdist"): ${#required[@]} files checked, installed into a fresh venv," \
     "imported under mpiexec, version $version ($((SECONDS - start)) s)"
