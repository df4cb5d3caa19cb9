#!/usr/bin/env bash
# Builds the pinned developer tools of hack/tools/go.mod (and golangci-lint, of
# hack/tools/lint/go.mod) into ./bin.
#
# Each tool is rebuilt only when its module's go.mod or go.sum is newer than the binary, so a
# pin change takes effect on the next run and an unchanged pin costs nothing.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mkdir -p "${root}/bin"

# install_tool NAME PACKAGE [MODULE_DIR]: MODULE_DIR (default hack/tools) holds the pin.
install_tool() {
  local name="$1" package="$2" module="${root}/${3:-hack/tools}" target="${root}/bin/$1"
  if [[ -x "${target}" && "${target}" -nt "${module}/go.mod" && "${target}" -nt "${module}/go.sum" ]]; then
    return
  fi
  echo "install-tools: building ${name}" >&2
  (cd "${module}" && go build -trimpath -o "${target}" "${package}")
}

install_tool controller-gen sigs.k8s.io/controller-tools/cmd/controller-gen
install_tool benchstat golang.org/x/perf/cmd/benchstat
# actionlint checks .github/workflows (make test); crane pushes the image a release builds.
install_tool actionlint github.com/rhysd/actionlint/cmd/actionlint
install_tool crane github.com/google/go-containerregistry/cmd/crane
# mockgen writes the gomock mocks of our narrow interfaces (go:generate, make generate).
install_tool mockgen go.uber.org/mock/mockgen
# golangci-lint checks the Go code against .golangci.yml (make verify). Its own module, so that
# its many dependencies do not move those of the tools above (a few minutes to build once).
install_tool golangci-lint github.com/golangci/golangci-lint/v2/cmd/golangci-lint hack/tools/lint

# Helm, for the chart's tests and for installing it. It carries no replace directives, so it
# installs from its module at a pinned version; the stamp file records which.
HELM_VERSION="${HELM_VERSION:-v3.22.0}"
if [[ ! -x "${root}/bin/helm" || "$(cat "${root}/bin/.helm-version" 2>/dev/null)" != "${HELM_VERSION}" ]]; then
  echo "install-tools: building helm ${HELM_VERSION}" >&2
  GOBIN="${root}/bin" go install "helm.sh/helm/v3/cmd/helm@${HELM_VERSION}"
  echo "${HELM_VERSION}" >"${root}/bin/.helm-version"
fi

# gotestsum runs make test: a line for each test as it ends, so that a long package shows it
# is working, and go test's own closing lines. Installed at a pinned version like helm.
GOTESTSUM_VERSION="${GOTESTSUM_VERSION:-v1.13.0}"
if [[ ! -x "${root}/bin/gotestsum" || "$(cat "${root}/bin/.gotestsum-version" 2>/dev/null)" != "${GOTESTSUM_VERSION}" ]]; then
  echo "install-tools: building gotestsum ${GOTESTSUM_VERSION}" >&2
  GOBIN="${root}/bin" go install "gotest.tools/gotestsum@${GOTESTSUM_VERSION}"
  echo "${GOTESTSUM_VERSION}" >"${root}/bin/.gotestsum-version"
fi

# KWOK plays the nodes of the test clusters (test/e2e, test/scale, make run-local): it marks
# nodes Ready and keeps their leases, runs bound pods and removes deleted ones, as kubelets
# would. Its module has no replace directives, so it installs at a pinned version. It needs
# Stages to act; those of its own kustomize/stage folder (node-initialize,
# node-heartbeat-with-lease, pod-ready, pod-delete) are taken from the same module version,
# so binary and stages always match.
KWOK_VERSION="${KWOK_VERSION:-v0.8.0}"
if [[ ! -x "${root}/bin/kwok" || ! -s "${root}/bin/kwok-stages.yaml" || "$(cat "${root}/bin/.kwok-version" 2>/dev/null)" != "${KWOK_VERSION}" ]]; then
  echo "install-tools: building kwok ${KWOK_VERSION}" >&2
  GOBIN="${root}/bin" go install "sigs.k8s.io/kwok/cmd/kwok@${KWOK_VERSION}"
  module="$(go mod download -json "sigs.k8s.io/kwok@${KWOK_VERSION}" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')"
  stages="${module}/kustomize/stage"
  {
    for stage in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
      pod/fast/pod-ready.yaml pod/fast/pod-delete.yaml; do
      echo "---"
      cat "${stages}/${stage}"
    done
  } >"${root}/bin/kwok-stages.yaml"
  echo "${KWOK_VERSION}" >"${root}/bin/.kwok-version"
fi
