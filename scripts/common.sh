# Sourced by the scripts in this folder: paths and the MPI launch settings.
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_root=${MPIDHT_BUILD_ROOT:-$repo/build}
jobs=$(nproc)

# Open MPI refuses to run as root or with more ranks than cores unless told;
# MPICH ignores these.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1

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
