#!/usr/bin/env bash
# lint.sh's second half: every script's combinations of choice
# parameters, with -d where it names relations, and its integer
# parameters at their bounds, on one leg per build (the bpftraces taken
# in turn), linted and compiled as lint.sh says.
# tests/run timeout: 1500
LINT_PART=combos
source "$(dirname "$0")/lint.sh"
