#!/usr/bin/env bash
# The main job: installs what is missing of what it uses (compilers, CMake,
# Open MPI, xxHash, Python's venv; not MPICH, clang, Redis or memcached),
# builds mpidht with Open MPI, runs
# the C demo on 2 ranks with each consistency protocol, then installs the
# Python package with the simulator (`pip install .` into build/), checks
# the simulator against PHREEQC's own TRANSPORT on a 1-D column, and runs
# the SimDol2D reactive-transport benchmark on 2 processes: 50 x 50 cells,
# 300 coupling iterations, PHREEQC chemistry behind the DHT, saving the DHT
# with the fields. It prints the waters PHREEQC computed, the runtime
# split, the hit rate and where the fields and plots are; then it repeats
# the first 50 iterations starting from the saved DHT (a warm start: nearly
# every cell reaction should hit). Outputs of an earlier main job are
# replaced.
set -euo pipefail
source "$(dirname "$0")/common.sh"
no_arguments "$@"

bash "$repo/scripts/install-deps.sh" main  # only what this job uses
mkdir -p "$build_root"
configure_and_build "$build_root/main" openmpi -DCMAKE_BUILD_TYPE=Release \
  -DMPIDHT_BUILD_TESTS=OFF -DMPIDHT_BUILD_BENCH=OFF > /dev/null

for protocol in coarse fine lockfree; do
  mpiexec.openmpi -n 2 "$build_root/main/mpidht_demo" --protocol "$protocol" --keys 20000
  echo
done

venv=$build_root/python-openmpi-venv
echo "installing the Python package into $venv"
python_env "$venv" openmpi > "$build_root/python-openmpi.install.log" 2>&1 ||
  { cat "$build_root/python-openmpi.install.log"; exit 1; }
echo "the simulator against PHREEQC's TRANSPORT: 50 cells, 100 steps at Courant number 1"
mpiexec.openmpi -n 2 "$venv/bin/python" -m mpidht_sim.column --out "$build_root/column"
echo
mpiexec.openmpi -n 2 "$venv/bin/python" -m mpidht_sim --output "$build_root/simdol2d" \
  --overwrite --save-dht
echo
echo "warm start: the first 50 iterations again, from the DHT that run saved"
mpiexec.openmpi -n 2 "$venv/bin/python" -m mpidht_sim --output "$build_root/simdol2d-warm" \
  --overwrite --iterations 50 --warm-start "$build_root/simdol2d/dht.mpidht"
