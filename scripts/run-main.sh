#!/usr/bin/env bash
# The main job: installs what is missing, builds mpidht with Open MPI, and
# runs the demo on 2 ranks with each consistency protocol: every rank fills
# a table with 20 000 keys (80-byte keys, 104-byte values, as in the
# paper's benchmark), reads keys back, and rank 0 prints the statistics
# summed over the job.
set -euo pipefail
source "$(dirname "$0")/common.sh"

bash "$repo/scripts/install-deps.sh"
mkdir -p "$build_root"
configure_and_build "$build_root/main" openmpi -DCMAKE_BUILD_TYPE=Release \
  -DMPIDHT_BUILD_TESTS=OFF > /dev/null

for protocol in coarse fine lockfree; do
  mpiexec.openmpi -n 2 "$build_root/main/mpidht_demo" --protocol "$protocol" --keys 20000
  echo
done
