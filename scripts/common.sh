# Sourced by the scripts in this folder: paths and the MPI launch settings.
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_root=${MPIDHT_BUILD_ROOT:-$repo/build}
jobs=$(nproc)

# Open MPI refuses to run as root or with more ranks than cores unless told;
# MPICH ignores these.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1

# python_env DIR MPI: a virtual environment at DIR with NumPy, pytest, the
# simulator's PHREEQC, SciPy and tqdm, and mpi4py for that MPI (Open MPI:
# the PyPI wheel, which loads the system's libmpi; MPICH: a wheel built from
# source with mpicc.mpich once and kept, see mpi4py_wheels), then mpidht
# itself, built by `pip install` from this checkout with the same compiler
# wrapper.
python_env() {
  local venv=$1 mpi=$2
  local pip=("$venv/bin/python" -m pip install -q --disable-pip-version-check)
  [[ -x $venv/bin/python ]] || python3 -m venv "$venv" || return 1
  # setuptools 77: the first to read pyproject.toml's SPDX licence (PEP 639),
  # and mpidht is built with the venv's own (--no-build-isolation); pip 25:
  # the first whose `pip show` prints that licence (License-Expression).
  local deps=("pip>=25" numpy pytest "setuptools>=77" phreeqc scipy tqdm meshio matplotlib)
  if ! "$venv/bin/python" -c "import mpi4py, numpy, pytest, phreeqc, scipy, tqdm, meshio, matplotlib,
setuptools.command.bdist_wheel, pip
assert int(setuptools.__version__.split('.')[0]) >= 77 and int(pip.__version__.split('.')[0]) >= 25" \
      2> /dev/null; then
    if [[ $mpi == openmpi ]]; then
      "${pip[@]}" "${deps[@]}" mpi4py || return 1
    else
      local wheels
      wheels=$(mpi4py_wheels "$venv" "$mpi") || return 1
      "${pip[@]}" --no-index --find-links "$wheels" mpi4py || return 1
      "${pip[@]}" "${deps[@]}" || return 1
    fi
  fi
  MPICC=mpicc.$mpi "${pip[@]}" --no-build-isolation --no-deps --force-reinstall "$repo"
}

# mpi4py_wheels VENV MPI: prints a folder holding an mpi4py wheel built
# from source against MPI (PyPI's wheel loads a libmpi.so.12, which
# Debian's MPICH does not ship) for VENV's Python. The build takes minutes
# on 2 cores, so it is kept, per MPI library and version, under
# ${XDG_CACHE_HOME:-~/.cache}/mpidht/ (not in pip's cache, which would
# hand the wheel to any later source build of mpi4py, whatever its MPI).
mpi4py_wheels() {
  local venv=$1 mpi=$2 version tag dir
  version=$("${mpi}version" 2> /dev/null | awk '/Version:/ { print $NF; exit }')
  if [[ -n $version ]]; then
    dir=${XDG_CACHE_HOME:-$HOME/.cache}/mpidht/mpi4py-$mpi-$version
  else
    dir=$build_root/mpi4py-$mpi  # version unknown: not kept beyond this build
  fi
  tag=$("$venv/bin/python" -c 'import sys; print("cp%d%d" % sys.version_info[:2])') || return 1
  if ! compgen -G "$dir/mpi4py-*-$tag-*.whl" > /dev/null; then
    MPICC=mpicc.$mpi "$venv/bin/python" -m pip wheel -q --disable-pip-version-check \
      --no-cache-dir --no-binary mpi4py --no-deps -w "$dir" mpi4py >&2 || return 1
  fi
  echo "$dir"
}

# configure_and_build DIR MPI [cmake options...]: MPI is openmpi or mpich;
# the compiler wrapper and launcher are named explicitly because both MPI
# libraries are installed side by side.
configure_and_build() {
  local dir=$1 mpi=$2
  shift 2
  cmake -S "$repo" -B "$dir" -G Ninja \
    -DMPI_C_COMPILER="mpicc.$mpi" -DMPIEXEC_EXECUTABLE="$(command -v "mpiexec.$mpi")" \
    "$@" > "$dir.configure.log" 2>&1 || { cat "$dir.configure.log"; return 1; }
  cmake --build "$dir" -j "$jobs"
}
