#!/usr/bin/env bash
# Installs the built library into a scratch prefix and builds the examples
# against it the two ways a user would: CMake's find_package(mpidht) (shared
# and static) and pkg-config with the MPI compiler wrapper. Runs each
# program under mpiexec.
#
# usage: test_install.sh BUILD_DIR SOURCE_DIR MPICC MPIEXEC [MPIEXEC_FLAGS...]
set -euo pipefail
build=$1 source=$2 mpicc=$3 mpiexec=$4
shift 4
prefix=$(mktemp -d "${TMPDIR:-/tmp}/mpidht-install.XXXXXX")
trap 'rm -rf "$prefix"' EXIT

cmake --install "$build" --prefix "$prefix/usr" > /dev/null
test -f "$prefix/usr/include/mpidht.h"
libdir=$(dirname "$(find "$prefix/usr" -name 'libmpidht.so' | head -n 1)")

# The version everywhere is the one the installed header defines.
version=$(for part in MAJOR MINOR PATCH; do
            sed -n -E "s/^#define MPIDHT_VERSION_$part +([0-9]+) *$/\1/p" "$prefix/usr/include/mpidht.h"
          done | paste -s -d .)
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "no version in mpidht.h: '$version'"; exit 1; }
check_version() {  # WHAT FOUND
  [[ $2 == "$version" ]] || { echo "$1 says version '$2', mpidht.h says $version"; exit 1; }
}
check_version pkg-config "$(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --modversion mpidht)"
check_version mpidhtConfigVersion.cmake "$(sed -n -E 's/^set\(PACKAGE_VERSION "(.*)"\)$/\1/p' \
  "$libdir/cmake/mpidht/mpidhtConfigVersion.cmake")"
test -f "$libdir/libmpidht.so.$version" || { echo "no libmpidht.so.$version"; exit 1; }
# The soname: the major version, or 0.MINOR before 1.0 (the CMake package
# takes 0.2 and 0.3 as incompatible; a program built against one must not
# load the other).
major=${version%%.*} minor=${version#*.}
minor=${minor%%.*}
soversion=$major
((major > 0)) || soversion=0.$minor
for lib in mpidht mpidht_poet; do
  soname=$(readelf -d "$libdir/lib$lib.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
  [[ $soname == "lib$lib.so.$soversion" ]] ||
    { echo "lib$lib.so's soname is '$soname', not lib$lib.so.$soversion"; exit 1; }
done

# The examples name no MPI: find_package(mpidht) starts FindMPI from the
# compiler wrapper mpidht was built with (with MPICH's, FindMPI alone found
# Open MPI's here, and the program crashed in mpidht_create).
cmake -S "$source/examples" -B "$prefix/examples" -DCMAKE_PREFIX_PATH="$prefix/usr" > /dev/null
cmake --build "$prefix/examples" > /dev/null
[[ $(sed -n 's/^MPI_C_COMPILER:[A-Z]*=//p' "$prefix/examples/CMakeCache.txt") == "$(command -v "$mpicc")" ]] ||
  { echo "the examples found another MPI than $mpicc"; exit 1; }

# A project that found the other MPI first gets a clear refusal, not a
# program that mixes the two.
case $mpicc in
  *mpich*) other=mpicc.openmpi ;;
  *) other=mpicc.mpich ;;
esac
if command -v "$other" > /dev/null; then
  mkdir -p "$prefix/mixed"
  printf '%s\n' 'cmake_minimum_required(VERSION 3.18)' 'project(mixed LANGUAGES C)' \
    'find_package(MPI REQUIRED COMPONENTS C)' 'find_package(mpidht REQUIRED)' \
    > "$prefix/mixed/CMakeLists.txt"
  if cmake -S "$prefix/mixed" -B "$prefix/mixed/build" -DCMAKE_PREFIX_PATH="$prefix/usr" \
       -DMPI_C_COMPILER="$(command -v "$other")" > "$prefix/mixed.log" 2>&1; then
    echo "find_package(mpidht) took the MPI of $other"; exit 1
  fi
  tr -s ' \n' ' ' < "$prefix/mixed.log" | grep -q "does not mix with it" ||
    { cat "$prefix/mixed.log"; exit 1; }
fi
# A C++ project: find_package(mpidht) says to enable C rather than failing
# inside FindMPI.
mkdir -p "$prefix/cxx"
printf '%s\n' 'cmake_minimum_required(VERSION 3.18)' 'project(cxx LANGUAGES CXX)' \
  'find_package(mpidht REQUIRED)' > "$prefix/cxx/CMakeLists.txt"
if cmake -S "$prefix/cxx" -B "$prefix/cxx/build" -DCMAKE_PREFIX_PATH="$prefix/usr" \
     > "$prefix/cxx.log" 2>&1; then
  echo "find_package(mpidht) in a project without C succeeded"; exit 1
fi
tr -s ' \n' ' ' < "$prefix/cxx.log" | grep -q "call enable_language(C)" ||
  { cat "$prefix/cxx.log"; exit 1; }
# No LD_LIBRARY_PATH where the program has a run path: it must find
# everything from there.
"$mpiexec" "$@" -n 2 "$prefix/examples/mpidht_demo" --keys 500
"$mpiexec" "$@" -n 2 "$prefix/examples/mpidht_demo_static" --keys 500 --protocol fine

PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --exists mpidht
# Its directories are where the files are, and it names the wrapper.
pc() { PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config "$@" mpidht; }
[[ $(realpath "$(pc --variable=libdir)") == "$(realpath "$libdir")" ]] || { echo "pkg-config's libdir is not $libdir"; exit 1; }
test -f "$(pc --variable=includedir)/mpidht.h" || { echo "no mpidht.h in pkg-config's includedir"; exit 1; }
[[ $(pc --variable=mpicc) == "$(command -v "$mpicc")" ]] || { echo "pkg-config names another wrapper than $mpicc"; exit 1; }
# A prefix the dynamic loader does not search: the program finds the
# library with LD_LIBRARY_PATH, or with a run path to pkg-config's libdir
# and nothing else (docs/c-guide.md).
# shellcheck disable=SC2046  # pkg-config output is a list of flags
"$mpicc" -o "$prefix/demo_pkgconfig" "$source/examples/demo.c" $(pc --cflags --libs)
LD_LIBRARY_PATH="$libdir" "$mpiexec" "$@" -n 2 "$prefix/demo_pkgconfig" --keys 500 --protocol coarse
# shellcheck disable=SC2046
"$mpicc" -o "$prefix/demo_pkgconfig_rpath" "$source/examples/demo.c" $(pc --cflags --libs) \
    -Wl,-rpath,"$(pc --variable=libdir)"
"$mpiexec" "$@" -n 2 "$prefix/demo_pkgconfig_rpath" --keys 500 --protocol lockfree
"$prefix/examples/mpidht_demo" --help | grep -q -- --protocol

# Code written against POET's DHT API links libmpidht_poet unchanged.
test -f "$prefix/usr/include/mpidht_poet.h"
# With a run path to the prefix only, libmpidht_poet finds libmpidht.
"$mpicc" -o "$prefix/poet_api" "$source/tests/c/test_poet_api.c" -I"$prefix/usr/include" \
    -L"$libdir" -Wl,-rpath,"$libdir" -lmpidht_poet
(cd "$prefix" && "$mpiexec" "$@" -n 2 ./poet_api > /dev/null)
echo "install test: version $version agrees; find_package (shared, static), pkg-config and POET API builds ran"
