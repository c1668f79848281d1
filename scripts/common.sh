# Sourced by the scripts in this folder: paths and the MPI launch settings.
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_root=${MPIDHT_BUILD_ROOT:-$repo/build}
jobs=$(nproc)

# script_help: the comment block at the top of the running script (after
# its #! line), without the comment marks.
script_help() {
  sed -n '2,/^[^#]/{/^#/{s/^# \{0,1\}//;p}}' "$0"
}

# no_arguments "$@": for a script that takes none: -h or --help prints
# what it does and exits 0; anything else is refused (exit 2).
no_arguments() {
  (($# == 0)) && return
  if (($# == 1)) && [[ $1 == -h || $1 == --help ]]; then
    script_help
    exit 0
  fi
  echo "$(basename "$0"): takes no arguments, got '$*' (--help says what it does)" >&2
  exit 2
}

# Open MPI refuses to run as root or with more ranks than cores unless told;
# MPICH ignores these.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1

# What a run across hosts prints when it was stopped at its limit and is
# run once more (run-tests.sh names the logs that hold it).
retried_mark=RETRIED

# twice_if_stopped WHO COMMAND...: runs COMMAND, and where it exits 124 (a
# job across hosts stopped at its limit, hosts-mpiexec.sh --limit, its
# stacks printed), says so and runs it once more; returns the last run's
# status. Open MPI's osc pt2pt crawls on a busy machine where the hosts
# have no CPU group of their own (docs/hosts.md).
twice_if_stopped() {
  local who=$1 rc=0
  shift
  "$@" || rc=$?
  ((rc == 124)) || return "$rc"
  echo "$who: $retried_mark: run 1 was stopped at its limit (stacks above); running once more"
  rc=0
  "$@" || rc=$?
  return "$rc"
}

# other_ranks_logs DIR: the last 60 lines of the logs of every rank but 0
# that python/tests/pytest-rank.sh wrote into DIR (rank 0's went to the
# terminal), for a run that failed: a failure or a stack dumped on one of
# them is seen there only.
other_ranks_logs() {
  local log
  for log in "$1"/rank[1-9]*.log; do
    [[ -f $log ]] || continue
    echo "--- the last 60 lines of $log"
    tail -n 60 "$log"
  done
}

# python_env DIR MPI: a virtual environment at DIR with NumPy, pytest, the
# simulator's PHREEQC, SciPy and tqdm, and mpi4py's wheel from PyPI, then
# mpidht itself, built by `pip install` from this checkout with MPI's
# compiler wrapper: python_deps DIR MPI, then python_package DIR MPI.
python_env() {
  python_deps "$@" && python_package "$@"
}

# python_deps DIR MPI: the environment at DIR and everything mpidht needs
# in it. The mpi4py wheel loads the system's libmpi: with Open MPI as is;
# with MPICH through the name libmpi.so.12 (MPICH's ABI), which Debian
# ships as libmpich.so.12 only, so DIR/mpich-abi/ holds that name for it
# and `mpi_env DIR MPI` gives what its processes need in their
# environment. Two of these may run at once (pip's cache takes that).
python_deps() {
  local venv=$1 mpi=$2
  [[ -x $venv/bin/python ]] || python3 -m venv "$venv" || return 1
  if [[ $mpi == mpich ]]; then
    local lib
    lib=$(ldconfig -p | awk '$1 == "libmpich.so.12" { print $NF; exit }')
    [[ -n $lib ]] || { echo "python_deps: MPICH's libmpich.so.12 not found (ldconfig -p)" >&2; return 1; }
    mkdir -p "$venv/mpich-abi" && ln -sfn "$lib" "$venv/mpich-abi/libmpi.so.12" || return 1
  fi
  # setuptools 77: the first to read pyproject.toml's SPDX licence (PEP 639),
  # and mpidht is built with the venv's own (--no-build-isolation); pip 25:
  # the first whose `pip show` prints that licence (License-Expression).
  local deps=("pip>=25" numpy pytest "setuptools>=77" phreeqc scipy tqdm meshio matplotlib mpi4py)
  if ! "$venv/bin/python" -c "import mpi4py, numpy, pytest, phreeqc, scipy, tqdm, meshio, matplotlib,
setuptools.command.bdist_wheel, pip
assert int(setuptools.__version__.split('.')[0]) >= 77 and int(pip.__version__.split('.')[0]) >= 25" \
      2> /dev/null; then
    "$venv/bin/python" -m pip install -q --disable-pip-version-check "${deps[@]}" || return 1
  fi
}

# python_package DIR MPI: mpidht built into DIR (made by python_deps) with
# MPI's compiler wrapper. One at a time: pip builds it in this checkout's
# build/ folder, which two builds at once would share.
python_package() {
  local venv=$1 mpi=$2
  MPICC=mpicc.$mpi "$venv/bin/python" -m pip install -q --disable-pip-version-check \
    --no-build-isolation --no-deps --force-reinstall "$repo"
}

# mpi_env VENV MPI: the environment (NAME=value, one a line) that
# processes of VENV's Python need under MPI: for MPICH, the library
# mpi4py loads (MPI4PY_LIBMPI; it would otherwise find the libmpi.so of
# Open MPI, Debian's default) and VENV/mpich-abi on the library path for
# its extension (see python_env); nothing for Open MPI.
mpi_env() {
  local venv=$1 mpi=$2
  if [[ $mpi == mpich ]]; then
    echo "MPI4PY_LIBMPI=$venv/mpich-abi/libmpi.so.12"
    echo "LD_LIBRARY_PATH=$venv/mpich-abi${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  fi
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
