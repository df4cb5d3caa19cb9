#!/usr/bin/env bash
# Regenerates deepcopy functions and CRD manifests from the API types, and the gomock mocks of
# the narrow interfaces (their //go:generate directives, which run bin/mockgen).
#
# Usage: hack/generate.sh [TREE]
# TREE defaults to the repository. The staleness test runs this on a copy of the tree and
# compares the result with the committed files, so this script is the one place that says
# how generated files are made.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tree="$(cd "${1:-${root}}" && pwd)"
controller_gen="${CONTROLLER_GEN:-${root}/bin/controller-gen}"

cd "${tree}"
"${controller_gen}" object:headerFile="${tree}/hack/boilerplate.go.txt" paths=./pkg/apis/...
# Queue resources are float64 for compatibility with existing KAI manifests, hence
# allowDangerousTypes.
"${controller_gen}" crd:allowDangerousTypes=true paths=./pkg/apis/... \
  output:crd:artifacts:config=deployments/kai-scheduler/crds
# The mocks: each directive names its generator, so that `go generate` in a package redoes
# just that one. The staleness test's copy holds only pkg/apis, which has none.
go generate ./pkg/...
