#!/usr/bin/env bash
# Every test: installs what is missing, then builds and runs the CTest
# suite three times: with Open MPI, with MPICH, and with Open MPI under
# AddressSanitizer and UndefinedBehaviorSanitizer; installs the Python
# package (`pip install .`) for each MPI and runs its pytest suite (the
# two 1-process runs side by side), checks the source distribution
# (scripts/check-sdist.sh), type-checks the Python code (mypy --strict)
# and builds the docs; the dump loader's fuzz target runs for a minute on
# one core beside those single-process steps.
# MPI tests run at 1, 2 and 4 processes (MPICH: see below). Where this
# machine can make network namespaces (root), the hot-key, batch, atomic
# update, dump/restore and window tests also run across 2 emulated hosts
# with Open MPI, plain and under the sanitizers (tests/hosts,
# scripts/emulated-hosts.sh), and so do the
# simulator's coupled runs; elsewhere they are skipped, saying why. Exits
# non-zero if anything fails.
set -uo pipefail
source "$(dirname "$0")/common.sh"
no_arguments "$@"

# say TEXT: a step's line, with the seconds since the command started;
# every one is printed again at the end (timeline), where a log cut to its
# last lines still shows them.
timeline=()
say() {
  local line
  line=$(printf '=== [%4d s] %s' "$SECONDS" "$*")
  timeline+=("$line")
  echo "$line"
}

bash "$repo/scripts/install-deps.sh" || exit 1
say "dependencies installed"
# The machine, to compare one run's times with another's.
say "machine: $jobs cores ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)), $(
  awk '/^MemTotal:/ { printf "%.0f", $2 / 1048576 }' /proc/meminfo) GiB, load average $(
  cut -d ' ' -f 1-3 /proc/loadavg)"

# Open MPI's pml cm loads the PSM and PSM2 libraries in every process it
# starts (0.2 s of the 0.3 s an empty job of 2 takes here) and declines
# without their devices, leaving ob1; the suites start about 700 jobs.
# Where neither device exists (/dev/ipath*, /dev/hfi1*) and the caller set
# no mtl list, both are added to the configured exclusions (Debian's:
# ^ofi), which changes no component a job uses.
skip_absent_psm() {
  local configured
  [[ -z ${OMPI_MCA_mtl:-} ]] || return 0
  if compgen -G '/dev/ipath*' > /dev/null || compgen -G '/dev/hfi1*' > /dev/null; then
    return 0
  fi
  configured=$(ompi_info --parsable --param mtl all --level 9 2> /dev/null |
    sed -n 's/^mca:mtl:base:param:mtl:value://p')
  case $configured in
    '') export OMPI_MCA_mtl='^psm,psm2' ;;
    ^*) export OMPI_MCA_mtl="$configured,psm,psm2" ;;
    *) return 0 ;;  # a list of the components to use: left as it is
  esac
  say "Open MPI: mtl $OMPI_MCA_mtl (no PSM or PSM2 device here)"
}
skip_absent_psm
mkdir -p "$build_root"

passed=0 failed=0 skipped=0 status=0

# The tests' emulated hosts (their own names, apart from a benchmark's) are
# removed however this script ends.
export MPIDHT_HOSTS_PREFIX=mpidht-t
hosts_down() { "$repo/scripts/emulated-hosts.sh" down > /dev/null 2>&1 || true; }
# Suites running in the background (start_suite), stopped if this ends first.
declare -A suite_pid=()
cleanup() {
  local pid
  for pid in "${suite_pid[@]}"; do
    pkill -P "$pid" 2> /dev/null
    kill "$pid" 2> /dev/null || true
  done
  hosts_down
}
trap cleanup EXIT
trap 'exit 130' INT TERM
hosts_ok=true
if hosts_reason=$("$repo/scripts/emulated-hosts.sh" check 2>&1); then
  echo "=== hosts: the tests across emulated hosts run in the Open MPI and sanitizer suites and for the simulator"
else
  echo "=== hosts: SKIPPING the tests across emulated hosts: ${hosts_reason#emulated hosts unavailable: }"
  hosts_ok=false
fi
# build_suite NAME MPI [cmake options...]: configures and builds
# build/NAME; on failure shows the log, counts a failure and returns 1.
build_suite() {
  local name=$1 mpi=$2 dir=$build_root/$1
  shift 2
  say "$name: build"
  if ! configure_and_build "$dir" "$mpi" "$@" > "$dir.build.log" 2>&1; then
    cat "$dir.build.log"
    say "$name: BUILD FAILED"
    failed=$((failed + 1)) status=1
    return 1
  fi
}

# run_suite NAME MPI [cmake options...]: builds build/NAME and runs its
# CTest suite, $ctest_jobs tests at a time (default: one per core; a test
# of N processes counts N).
run_suite() {
  build_suite "$@" || return
  local dir=$build_root/$1
  say "$1: test"
  ctest --test-dir "$dir" -j "${ctest_jobs:-$jobs}" --output-on-failure --no-tests=error 2>&1 |
    tee "$dir.test.log"
  count_suite "$1" "${PIPESTATUS[0]}"
}

# start_suite NAME MPI [cmake options...]: builds build/NAME and starts
# its CTest suite (on one core) in the background, for single-process
# steps to run beside it; finish_suite NAME waits for it and counts it.
start_suite() {
  build_suite "$@" || return
  local dir=$build_root/$1
  say "$1: test, beside the steps that follow"
  (ctest --test-dir "$dir" -j 1 --output-on-failure --no-tests=error > "$dir.test.log" 2>&1
   echo $? > "$dir.test.rc") &
  suite_pid[$1]=$!
}
finish_suite() {
  local dir=$build_root/$1
  [[ -n ${suite_pid[$1]:-} ]] || return 0  # its build failed (counted)
  wait "${suite_pid[$1]}"
  unset "suite_pid[$1]"
  say "$1: test finished"
  cat "$dir.test.log"
  count_suite "$1" "$(cat "$dir.test.rc" 2> /dev/null || echo 1)"
}

# count_suite NAME RC: adds build/NAME.test.log's counts to the totals.
count_suite() {
  local dir=$build_root/$1 rc=$2
  local line
  line=$(grep -E "tests passed, [0-9]+ tests failed out of [0-9]+" "$dir.test.log" | tail -n 1)
  local total=${line##* out of } bad skip
  bad=$(sed -E 's/.*tests passed, ([0-9]+) tests failed.*/\1/' <<< "$line")
  if [[ -z $line ]]; then total=1 bad=1; fi  # no summary: count as a failure
  # CTest counts a skipped test (exit 77: no emulated hosts here) as passed.
  skip=$(grep -cE '^[[:space:]]+[0-9]+ - .* \(Skipped\)$' "$dir.test.log")
  passed=$((passed + total - bad - skip)) failed=$((failed + bad)) skipped=$((skipped + skip))
  if ((rc != 0 || bad != 0)); then status=1; fi
}

# install_pythons: the Python package for each MPI, into
# build/python-MPI-venv: their dependencies side by side (pip is mostly
# one core, and the two need the same files), then mpidht into each in
# turn (python_deps, python_package in common.sh). A failure shows its
# log and counts; python_ok[MPI] says which environments are ready.
declare -A python_ok=()
install_pythons() {
  local mpi log
  declare -A pids=()
  say "python: pip install . for Open MPI and for MPICH"
  for mpi in openmpi mpich; do
    python_deps "$build_root/python-$mpi-venv" "$mpi" > "$build_root/python-$mpi.install.log" 2>&1 &
    pids[$mpi]=$!
  done
  for mpi in openmpi mpich; do
    log=$build_root/python-$mpi.install.log
    if wait "${pids[$mpi]}" && python_package "$build_root/python-$mpi-venv" "$mpi" >> "$log" 2>&1
    then
      python_ok[$mpi]=true
    else
      cat "$log"
      say "python-$mpi: INSTALL FAILED"
      failed=$((failed + 1)) status=1
      python_ok[$mpi]=false
    fi
  done
}

# pytest_at MPI NP: pytest on every rank of mpiexec.MPI -n NP
# (pytest-rank.sh: rank 0's output on stdout; every rank's log and JUnit
# report in build/python-MPI/npNP). Under MPICH, as in its C suite, fewer
# operations in the heavy tests, and at 4 processes the library's tests
# only: the simulator's (python/tests/test_sim_*.py) run there at 1 and 2
# processes, and at 4 under Open MPI; at 4 on 2 cores they took 100 of
# the run's 171 s. A test that fails on some ranks while the others wait
# in it ends the job (python/tests/rank_failures.py). Returns mpiexec's
# status, after the other ranks' logs where it failed.
pytest_at() {
  local mpi=$1 np=$2 venv=$build_root/python-$1-venv out=$build_root/python-$1/np$2 env
  local args=("$repo/python/tests")
  mapfile -t env < <(mpi_env "$venv" "$mpi")
  if [[ $mpi == mpich ]]; then
    env+=(MPIDHT_TEST_SCALE=0.1)
    ((np < 4)) || args+=("--ignore-glob=$repo/python/tests/test_sim_*.py")
  fi
  rm -rf "$out"
  # pytest keeps the test modules whose asserts it rewrites (python/tests/
  # __pycache__) unless Python may write no bytecode: rewriting them took
  # 1.8 s of each process's 3.9 s collection, in every run.
  env -u PYTHONDONTWRITEBYTECODE "${env[@]}" timeout 900 "mpiexec.$mpi" -n "$np" \
    "$repo/python/tests/pytest-rank.sh" "$venv/bin/python" "$out" "${args[@]}" && return
  local rc=$?
  other_ranks_logs "$out"
  return "$rc"
}

# count_pytest MPI NP RC: adds the passed, failed and skipped tests of
# rank 0's JUnit report (skipped: the one_process tests at 2 and 4) of
# pytest_at MPI NP, which returned RC: every rank must have exited 0.
count_pytest() {
  local mpi=$1 np=$2 rc=$3 counts good bad skip
  counts=$("$build_root/python-$mpi-venv/bin/python" "$repo/python/tests/junit_counts.py" \
    "$build_root/python-$mpi/np$np/rank0.xml")
  read -r good bad skip <<< "$counts"
  if ((rc != 0 && bad == 0)); then bad=1; fi  # another rank failed
  passed=$((passed + good)) failed=$((failed + bad)) skipped=$((skipped + skip))
  if ((rc != 0 || bad != 0)); then status=1; fi
}

# run_pytest MPI NP: pytest_at MPI NP, counted.
run_pytest() {
  local which=""
  [[ $1 == mpich ]] && (($2 >= 4)) && which=" (the library's tests; the simulator's at 1 and 2)"
  say "python-$1: pytest at $2 processes$which"
  pytest_at "$1" "$2"
  count_pytest "$1" "$2" $?
}

# pytest_singles: both 1-process runs side by side, each mostly on one
# core (MPICH's output after Open MPI's); either alone where the other's
# environment failed.
pytest_singles() {
  if ! ${python_ok[mpich]}; then
    ${python_ok[openmpi]} && run_pytest openmpi 1
    return
  fi
  if ! ${python_ok[openmpi]}; then
    run_pytest mpich 1
    return
  fi
  local log=$build_root/python-mpich.np1.log rc
  say "python-openmpi and python-mpich: pytest at 1 process, side by side"
  pytest_at mpich 1 > "$log" 2>&1 &
  suite_pid[pytest-mpich]=$!
  pytest_at openmpi 1
  count_pytest openmpi 1 $?
  wait "${suite_pid[pytest-mpich]}"
  rc=$?
  unset "suite_pid[pytest-mpich]"
  say "python-mpich: pytest at 1 process (beside Open MPI's)"
  cat "$log"
  count_pytest mpich 1 "$rc"
}

# run_step NAME TITLE COMMAND...: one test; COMMAND's output goes to
# build/NAME.log, its last line is shown on success, all of it on failure.
run_step() {
  local name=$1 title=$2 log=$build_root/$1.log
  shift 2
  say "$name: $title"
  if "$@" > "$log" 2>&1; then
    tail -n 1 "$log"
    passed=$((passed + 1))
  else
    cat "$log"
    say "$name: FAILED"
    failed=$((failed + 1)) status=1
  fi
}

# The sdist built, its contents checked, installed into a fresh venv and
# imported under mpiexec (Open MPI; uses the venv of the python-openmpi
# suite, and pip's cache for mpi4py and NumPy).
check_sdist() {
  bash "$repo/scripts/check-sdist.sh" "$build_root/python-openmpi-venv" "$build_root/sdist"
}

# mypy --strict over the Python packages and tests (the configuration in
# pyproject.toml), then PEP 8 (pycodestyle, lines up to 100) over every
# Python file, in the python-openmpi suite's venv.
typecheck() {
  local python=$build_root/python-openmpi-venv/bin/python tool
  for tool in mypy pycodestyle; do
    "$python" -m "$tool" --version > /dev/null 2>&1 ||
      "$python" -m pip install -q --disable-pip-version-check "$tool" || return 1
  done
  (cd "$repo" && "$python" -m mypy &&
    "$python" -m pycodestyle --max-line-length=100 python examples bench docs scripts setup.py &&
    echo "pycodestyle: PEP 8 clean")
}

# The HTML documentation into build/docs/html (scripts/build-docs.sh:
# Sphinx and MyST, strict, installed into the python-openmpi suite's venv
# like mypy), every link of README.md and docs/ checked offline, and the
# README's C and Python examples compiled and run.
build_docs() {
  bash "$repo/scripts/build-docs.sh" "$build_root/python-openmpi-venv/bin/python" "$build_root/docs"
}

# Most of a test's time is the start of its MPI job, and Open MPI's waiting
# processes yield (mpi_yield_when_idle in the tests' environment), so the
# Open MPI suites run twice as many tests as cores at once (each test in a
# folder of its own): 166 s against 206 s, and under the sanitizers 192 s
# against 224 s, on 2 cores.
ctest_jobs=$((2 * jobs)) run_suite openmpi openmpi -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DMPIDHT_BUILD_TESTS=ON
# MPICH's one-sided operations wait for the target process to run, which
# oversubscribed ranks rarely do (at 4 processes on 2 cores an operation
# waits about 10 ms for its target to be scheduled): the tests of
# concurrent operations run at 1, 2 and 4 processes with fewer operations,
# the others at 1 and 2 (and placement at 3). On one node the table does
# not use one-sided calls (direct access), so their waits fall only on the
# allocate-window hot-key tests (test_concurrency_*_allocate_*, at 1, 2
# and 4) and on the worst-case tests run again with
# MPIDHT_SHARED_ACCESS=mpi, which run at 1 and 2 here. One test per core
# at a time: at two, those waits grew (252 of its 294 tests in 6 minutes,
# against 169 s for all of them).
# Not across emulated hosts: MPICH 4.0.2 over UCX's TCP transport now and
# then hangs in MPI_Finalize there, one process closing its endpoints while
# its peer waits in the launcher's barrier (docs/hosts.md).
run_suite mpich mpich -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMPIDHT_BUILD_TESTS=ON \
  -DMPIDHT_TEST_NPROCS="1;2" -DMPIDHT_TEST_NPROCS_CONCURRENT="1;2;4" \
  -DMPIDHT_TEST_NPROCS_MPI_ACCESS="1;2" \
  -DMPIDHT_TEST_CONCURRENCY_OPS=400 -DMPIDHT_TEST_CONCURRENCY_BATCH_OPS=150 \
  -DMPIDHT_TEST_BATCH_WRITES=80 -DMPIDHT_TEST_SCALE=0.05 -DMPIDHT_TEST_HOSTS=OFF
# Under ASan and UBSan every test at 1 and 2 processes, the hot-key tests
# (test_concurrency_*) at 4 as well: the Open MPI suite above runs the
# others at 4. The tests across hosts too: only there do operations go to
# another node, queued and gathered per target (src/queue.c). The 256 KiB
# race with a quarter of the rewrites: the sanitizers' slower copies widen
# its window (cmake/MpidhtTesting.cmake), and at 4000 its three runs at 4
# processes took 50 of the suite's 265 s. A debug build (assertions on) at
# -O1, as AddressSanitizer's authors advise for speed: the suite's tests
# took 187 s against 220 s at -O0, one after the other (its build 25 s
# against 14 s in the test command's runs), and with the fine read's bug
# that race test is there to catch put back, failed as often (4 processes:
# 10 of 10 runs at -O1 and at -O0; 2 processes: 6 of 6, and 5 of 6).
ctest_jobs=$((2 * jobs)) run_suite sanitizers openmpi -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_C_FLAGS_DEBUG="-g -O1" -DMPIDHT_BUILD_TESTS=ON \
  -DMPIDHT_SANITIZE=address,undefined \
  -DMPIDHT_TEST_NPROCS="1;2" -DMPIDHT_TEST_NPROCS_CONCURRENT="1;2;4" \
  -DMPIDHT_TEST_NPROCS_MPI_ACCESS="1;2" -DMPIDHT_TEST_LARGE_VALUE_OPS=1000

install_pythons
pytest_singles
if ${python_ok[openmpi]}; then
  run_pytest openmpi 2
  run_pytest openmpi 4
fi
if $hosts_ok; then
  run_step hosts-simulator "the simulator on workers spread over 2 emulated hosts" \
    bash "$repo/tests/hosts/simulator-across.sh" "$build_root/python-openmpi-venv/bin/python" \
    "$build_root/hosts-simulator"
else
  echo "=== hosts-simulator: SKIPPED: no emulated hosts here (see above)"
  skipped=$((skipped + 1))
fi
# The dump loader under libFuzzer (clang), ASan and UBSan, for a bounded
# time (a minute, on one core) from a generated seed corpus, beside the
# single-process steps that follow.
start_suite fuzz openmpi -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug \
  -DMPIDHT_BUILD_FUZZ=ON -DMPIDHT_SANITIZE=address,undefined -DMPIDHT_BUILD_TESTS=OFF \
  -DMPIDHT_BUILD_EXAMPLES=OFF -DMPIDHT_BUILD_BENCH=OFF
run_step sdist "build, inspect and install the sdist" check_sdist
run_step mypy "mypy --strict and pycodestyle" typecheck
run_step docs "build the HTML docs and check links" build_docs
finish_suite fuzz
if ${python_ok[mpich]}; then
  run_pytest mpich 2
  run_pytest mpich 4
fi

echo
echo "the steps, again:"
printf '%s\n' "${timeline[@]}"
# Runs across hosts stopped at their limit and run once more (on-hosts.sh,
# simulator-across.sh: Open MPI's osc pt2pt crawls on a busy machine), named
# here, since a test that passed on its second run shows no output above.
for log in "$build_root"/*/Testing/Temporary/LastTest.log "$build_root/hosts-simulator.log"; do
  [[ -f $log ]] || continue
  retried=$(grep -c "$retried_mark" "$log" || true)
  ((retried == 0)) ||
    echo "retried: $retried run(s) across hosts stopped and run once more; their stacks: $log"
done
echo "total: $passed passed, $failed failed, $skipped skipped, in $SECONDS s"
exit "$status"
