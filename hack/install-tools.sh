#!/usr/bin/env bash
# Builds the pinned developer tools of hack/tools/go.mod into ./bin.
#
# Each tool is rebuilt only when hack/tools/go.mod or go.sum is newer than the binary, so a
# pin change takes effect on the next run and an unchanged pin costs nothing.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mkdir -p "${root}/bin"

install_tool() {
  local name="$1" package="$2" target="${root}/bin/$1"
  if [[ -x "${target}" && "${target}" -nt "${root}/hack/tools/go.mod" && "${target}" -nt "${root}/hack/tools/go.sum" ]]; then
    return
  fi
  echo "install-tools: building ${name}" >&2
  (cd "${root}/hack/tools" && go build -trimpath -o "${target}" "${package}")
}

install_tool controller-gen sigs.k8s.io/controller-tools/cmd/controller-gen
install_tool mockgen go.uber.org/mock/mockgen
install_tool benchstat golang.org/x/perf/cmd/benchstat
