# Settings and helpers for the tests: MPI programs run under mpiexec at each
# of MPIDHT_TEST_NPROCS process counts (oversubscribed where needed).
set(MPIDHT_TEST_NPROCS "1;2;4" CACHE STRING "Process counts for the MPI tests")
set(MPIDHT_TEST_NPROCS_CONCURRENT "1;2;4" CACHE STRING
    "Process counts for the tests of concurrent operations (hot keys, races, read order)")
set(MPIDHT_TEST_TIMEOUT 300 CACHE STRING "Seconds before a hung test is killed")
# MPICH's one-sided operations here need the target process to be running,
# so oversubscribed runs are far slower than Open MPI's; its CI run uses
# fewer operations per rank.
set(MPIDHT_TEST_CONCURRENCY_OPS 10000 CACHE STRING "Operations per rank in the hot-key tests")
set(MPIDHT_TEST_CONCURRENCY_BATCH_OPS ${MPIDHT_TEST_CONCURRENCY_OPS} CACHE STRING
    "Operations per rank in the batched hot-key tests")
set(MPIDHT_TEST_BATCH_WRITES 600 CACHE STRING "Writes per rank in the batch equivalence tests")
# The large-value race (test_present_rewritten with values of 256 KiB):
# 4000 rewrites per rank catch a fine read that lets go of its
# registration before its copy ends at 4 processes in every run here and
# at 2 in most; under the sanitizers every copy is slower, and 1000 catch
# it at 4 processes in every run (10 of 10, at -O0 and at -O1), at 2 in 2
# of 5 at -O0 one day, 5 of 6 the next, and 6 of 6 at -O1 (the test
# command's sanitizer build).
set(MPIDHT_TEST_LARGE_VALUE_OPS 4000 CACHE STRING
    "Rewrites per rank in the tests of values of 256 KiB")
set(MPIDHT_TEST_NPROCS_MPI_ACCESS "1;2;4" CACHE STRING
    "Process counts for the worst-case tests run again with MPIDHT_SHARED_ACCESS=mpi")
option(MPIDHT_TEST_HOSTS
  "Register the tests across emulated hosts (tests/hosts; skipped where namespaces cannot be made)" ON)
set(MPIDHT_TEST_SCALE 1 CACHE STRING
    "Factor on the counts of the local iteration and dump tests (MPIDHT_TEST_SCALE in their environment)")

# What every test that starts MPI runs under: a TMPDIR of its own, where
# Open MPI makes its session directory (jobs making the same one at the
# same instant failed now and then: tests/own-tmpdir.sh).
set(MPIDHT_TEST_LAUNCH ${PROJECT_SOURCE_DIR}/tests/own-tmpdir.sh)

# Harmless for MPICH; lets Open MPI run as root and oversubscribe, and makes
# waiting processes yield so that 4 ranks on 2 cores still progress.
set(MPIDHT_TEST_ENV
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
  MPIDHT_TEST_SCALE=${MPIDHT_TEST_SCALE}
  # Open MPI's own allocations are freed at exit, not at MPI_Finalize.
  ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1)

# mpidht_add_mpi_test(TARGET [CONCURRENT] [SUFFIX s] [NPROCS n...] [ARGS a...]
#                     [ENV VAR=value...])
# registers TARGET<s>_np<n> for each process count n (default
# MPIDHT_TEST_NPROCS, or MPIDHT_TEST_NPROCS_CONCURRENT for a test of
# concurrent operations), with ENV added to MPIDHT_TEST_ENV. Each test
# runs in a folder of its own (run/<name> under the calling folder's build
# folder), so that the files it writes by relative names meet no other
# test's under `ctest -j N`; files tests share are named by absolute path.
function(mpidht_add_mpi_test target)
  cmake_parse_arguments(T "CONCURRENT" "SUFFIX" "NPROCS;ARGS;ENV" ${ARGN})
  if(NOT T_NPROCS AND T_CONCURRENT)
    set(T_NPROCS ${MPIDHT_TEST_NPROCS_CONCURRENT})
  elseif(NOT T_NPROCS)
    set(T_NPROCS ${MPIDHT_TEST_NPROCS})
  endif()
  set(env ${MPIDHT_TEST_ENV} ${T_ENV})
  foreach(np IN LISTS T_NPROCS)
    set(name ${target}${T_SUFFIX}_np${np})
    add_test(NAME ${name}
      COMMAND ${MPIDHT_TEST_LAUNCH} ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np}
              ${MPIEXEC_PREFLAGS}
              $<TARGET_FILE:${target}> ${MPIEXEC_POSTFLAGS} ${T_ARGS})
    set(dir ${CMAKE_CURRENT_BINARY_DIR}/run/${name})
    file(MAKE_DIRECTORY ${dir})
    set_tests_properties(${name} PROPERTIES
      ENVIRONMENT "${env}" TIMEOUT ${MPIDHT_TEST_TIMEOUT} PROCESSORS ${np}
      WORKING_DIRECTORY ${dir})
  endforeach()
endfunction()
