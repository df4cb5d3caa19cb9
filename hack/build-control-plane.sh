#!/usr/bin/env bash
# Builds kube-apiserver and etcd from their Go modules into bin/k8s/<versions>/ for envtest.
#
# Neither binary can be downloaded on our machines, but the Go module proxy works. Both
# modules carry `replace` directives in their own go.mod, which `go install pkg@version`
# refuses, so each is built from a throw-away wrapper module that repeats those replaces
# with the published twins of the staging modules. The result is cached: a second run
# with the same pins returns at once. Prints the assets directory on stdout.
set -euo pipefail

# v1.37.2 is not served whole by the module proxy (only its go.mod), so the pin is v1.37.1.
KUBERNETES_VERSION="${KUBERNETES_VERSION:-v1.37.1}"
ETCD_VERSION="${ETCD_VERSION:-v3.7.3}"

# WITH_KUBECTL=1 also builds kubectl (for make run-local), from the same wrapper module.
WITH_KUBECTL="${WITH_KUBECTL:-0}"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
assets="${root}/bin/k8s/${KUBERNETES_VERSION}-etcd-${ETCD_VERSION}"
if [[ -x "${assets}/kube-apiserver" && -x "${assets}/etcd" && ("${WITH_KUBECTL}" != 1 || -x "${assets}/kubectl") ]]; then
  echo "${assets}"
  exit 0
fi
mkdir -p "${assets}"
log() { echo "build-control-plane: $*" >&2; }

# timed LABEL COMMAND...: runs COMMAND, saying each minute that LABEL is still going and at the
# end how long it took, so that a first compile of several minutes never looks like a hang.
timed() {
  local label="$1" start="${SECONDS}" status=0
  shift
  (while sleep 60 && kill -0 "$$" 2>/dev/null; do log "${label}: still compiling, $(((SECONDS - start) / 60)) min so far"; done) &
  local ticker=$!
  "$@" || status=$?
  kill "${ticker}" 2>/dev/null || true
  wait "${ticker}" 2>/dev/null || true
  log "${label}: took $((SECONDS - start))s"
  return "${status}"
}

work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT

# Staging modules are published as k8s.io/NAME v0.<minor>.<patch> for kubernetes v1.<minor>.<patch>.
staging_version="v0.${KUBERNETES_VERSION#v1.}"

build_apiserver() {
  local dir="${work}/apiserver"
  mkdir -p "${dir}"
  (
    cd "${dir}"
    go mod init example.invalid/apiserver-wrapper >/dev/null 2>&1
    local download upstream_mod
    download="$(go mod download -json "k8s.io/kubernetes@${KUBERNETES_VERSION}" || true)"
    if grep -q '"Error"' <<<"${download}"; then
      log "cannot download k8s.io/kubernetes@${KUBERNETES_VERSION}:"
      grep '"Error"' <<<"${download}" >&2
      exit 1
    fi
    upstream_mod="$(sed -n 's/.*"GoMod": "\(.*\)".*/\1/p' <<<"${download}")"
    {
      echo "require k8s.io/kubernetes ${KUBERNETES_VERSION}"
      echo "replace ("
      # Every staging module the kubernetes module requires, mapped to its published twin.
      sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/src/.*#\1#p' "${upstream_mod}" |
        while read -r module; do
          if grep -qE "^[[:space:]]+${module} v0.0.0" "${upstream_mod}"; then
            echo "  ${module} => ${module} ${staging_version}"
          fi
        done
      echo ")"
    } >>go.mod
    cat >tools.go <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
GO
    log "resolving kube-apiserver ${KUBERNETES_VERSION} dependencies"
    go mod tidy -e >/dev/null 2>&1 || go mod tidy
    if [[ ! -x "${assets}/kube-apiserver" ]]; then
      log "compiling kube-apiserver (several minutes the first time)"
      CGO_ENABLED=0 timed kube-apiserver go build -trimpath -o "${assets}/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
    fi
    if [[ "${WITH_KUBECTL}" == 1 ]]; then
      log "compiling kubectl"
      CGO_ENABLED=0 timed kubectl go build -trimpath -o "${assets}/kubectl" k8s.io/kubernetes/cmd/kubectl
    fi
  )
}

build_etcd() {
  local dir="${work}/etcd"
  mkdir -p "${dir}"
  (
    cd "${dir}"
    go mod init example.invalid/etcd-wrapper >/dev/null 2>&1
    cat >>go.mod <<MOD
require go.etcd.io/etcd/server/v3 ${ETCD_VERSION}
replace (
  go.etcd.io/etcd/api/v3 => go.etcd.io/etcd/api/v3 ${ETCD_VERSION}
  go.etcd.io/etcd/client/pkg/v3 => go.etcd.io/etcd/client/pkg/v3 ${ETCD_VERSION}
  go.etcd.io/etcd/client/v3 => go.etcd.io/etcd/client/v3 ${ETCD_VERSION}
  go.etcd.io/etcd/pkg/v3 => go.etcd.io/etcd/pkg/v3 ${ETCD_VERSION}
)
MOD
    cat >tools.go <<'GO'
//go:build tools

package tools

import _ "go.etcd.io/etcd/server/v3"
GO
    log "resolving etcd ${ETCD_VERSION} dependencies"
    go mod tidy >/dev/null
    log "compiling etcd"
    CGO_ENABLED=0 timed etcd go build -trimpath -o "${assets}/etcd" go.etcd.io/etcd/server/v3
  )
}

[[ -x "${assets}/etcd" ]] || build_etcd
build_apiserver
echo "${assets}"
