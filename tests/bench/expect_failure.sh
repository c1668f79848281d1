#!/usr/bin/env bash
# Runs a command that must refuse its arguments: exit status 1, no crash
# (a signal or a sanitizer's report exits otherwise), and MESSAGE in what
# it writes to stderr.
#
# usage: expect_failure.sh MESSAGE COMMAND [ARGS...]
set -uo pipefail
if (($# < 2)); then
  echo "usage: expect_failure.sh MESSAGE COMMAND [ARGS...]" >&2
  exit 2
fi
message=$1
shift
err=$("$@" 2>&1 > /dev/null)
rc=$?
if ((rc != 1)); then
  echo "FAIL: '$*' exited $rc, not 1; stderr: $err" >&2
  exit 1
fi
if ! grep -qF -- "$message" <<< "$err"; then
  echo "FAIL: '$*': no '$message' in stderr: $err" >&2
  exit 1
fi
echo "'$*' refused: ${err%%$'\n'*}"
