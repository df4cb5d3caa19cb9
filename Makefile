# Every target works on a fresh clone with only Go installed: tools and the control-plane
# binaries used by the integration tests are built from pinned Go modules into ./bin and
# reused while their pins are unchanged.

SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
GO ?= go
BIN := $(CURDIR)/bin
export CONTROLLER_GEN := $(BIN)/controller-gen
export HELM := $(BIN)/helm

.PHONY: all build test unit-test verify generate tools control-plane workload-crds bench soak scale run-local image dist clean

all: build

## build: compile every package, and the three commands (kai-scheduler, kai-sim, kubectl-kai)
## into ./bin, stamped with this checkout's version (git describe's: X.Y.Z only on the commit
## tagged vX.Y.Z; VERSION=x.y.z names another), which --version prints.
build:
	$(GO) build ./...
	stamp="$$($(GO) run ./hack/version)"; $(GO) build -ldflags "$$stamp" -o $(BIN)/ ./cmd/...

## tools: build the pinned developer tools (controller-gen, benchstat, actionlint, crane,
## golangci-lint, helm, gotestsum, kwok) into ./bin.
tools:
	hack/install-tools.sh

## control-plane: build kube-apiserver and etcd for envtest into ./bin/k8s (slow only once).
control-plane:
	hack/build-control-plane.sh >/dev/null

## workload-crds: gather the pinned CRDs of the workload kinds the pod grouper groups (Kubeflow,
## Ray, Knative from the Go module cache; test/crds' hand-written ones) into ./bin/crds/workloads.
workload-crds:
	$(GO) run ./hack/workloadcrds >/dev/null

## generate: regenerate deepcopy functions and CRD manifests.
generate: tools
	hack/generate.sh

## verify: formatting, vet, golangci-lint (.golangci.yml; needs `make tools`) and the GitHub
## workflows (actionlint).
verify:
	@echo "make verify: gofmt, go vet (compiles every package: a few minutes on a cold cache), golangci-lint, actionlint"
	@unformatted="$$(find . -name '*.go' -not -path './bin/*' -print0 | xargs -0 gofmt -l)"; \
	if [[ -n "$$unformatted" ]]; then echo "gofmt needed on: $$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(BIN)/golangci-lint run ./...
	$(BIN)/actionlint -color=false

## test: verify, then run unit, code-generation and integration tests against a real API server.
## gotestsum prints a line as each test ends (a long package shows it is working) and, last,
## the failures again and go test's verdict; _output/test.json keeps every event, for
## `bin/gotestsum tool slowest --jsonfile _output/test.json`.
test: tools control-plane verify
	@echo "make test: compiling the test binaries, then running them; a line per test as it ends"
	mkdir -p _output
	KUBEBUILDER_ASSETS="$$(hack/build-control-plane.sh)" WORKLOAD_CRDS="$$($(GO) run ./hack/workloadcrds)" \
	  $(BIN)/gotestsum --format testname \
	  --format-hide-empty-pkg --jsonfile _output/test.json -- ./... -count=1

## unit-test: only the tests that need no tools or API server.
unit-test:
	$(GO) test ./pkg/... ./cmd/...

## bench: run the benchmarks recorded in docs/performance.md and summarise them with benchstat.
bench: tools
	mkdir -p _output
	$(GO) test ./pkg/... -run xxx -bench . -benchmem -count 5 | tee _output/bench.txt
	$(BIN)/benchstat _output/bench.txt | tee _output/benchstat.txt

## soak: the randomized property suite (test/property) on 10,000 seeds of the main family and
## of the quota family instead of make test's 300 and 150 (about 17 minutes on 2 cores).
## SEEDS=N changes the count.
SEEDS ?= 10000
soak:
	PROPERTY_SEEDS=$(SEEDS) $(GO) test ./test/property/ -count=1 -timeout 90m -v -run 'TestProperties|TestOwedQuotas' | grep -E '^(ok|FAIL)|--- FAIL|figures|failing|replay|go run'

## scale: the scale suite (test/scale) at NODES simulated 8-GPU nodes (default 500; 1000 and
## 5000 possible): upstream KAI's scale scenarios and the min-runtime ones, against a real
## API server with KWOK nodes, the scheduler run as its binary with the chart's defaults.
## Results: _output/scale/<label>-<nodes>/ (a JSON per scenario, table.txt). SCALE_SCHEDULER
## measures another binary (e.g. an older commit's), SCALE_LABEL names it. A fixed seed runs
## the scenarios in the same order every time, so that two runs compare.
NODES ?= 500
scale: tools control-plane
	SCALE_NODES=$(NODES) KUBEBUILDER_ASSETS="$$(hack/build-control-plane.sh)" $(GO) test ./test/scale/ -count=1 -timeout 240m -v -args -ginkgo.v -ginkgo.seed=1

## run-local: a local cluster without Docker (etcd, kube-apiserver and kubectl from ./bin, KWOK
## playing two 8-GPU nodes) running the scheduler, showing reclaim min-runtime at
## work. Ctrl-C stops every process. RUN_LOCAL_ARGS passes flags, e.g. --min-runtime=1m. The
## ports those flags choose are checked first, before the tools, kubectl, kube-apiserver and
## etcd are built (minutes the first time).
run-local:
	$(GO) build -o $(BIN)/runlocal ./hack/runlocal
	$(BIN)/runlocal --check-ports $(RUN_LOCAL_ARGS)
	$(MAKE) --no-print-directory tools
	KUBEBUILDER_ASSETS="$$(WITH_KUBECTL=1 hack/build-control-plane.sh)" $(BIN)/runlocal $(RUN_LOCAL_ARGS)

## image: the release's two images for linux/amd64 and linux/arm64, built from Go modules only (no
## Docker), into _output/image: the scheduler's (a static binary) and kai-resource-reservation's
## (the reservation pods' program, cgo for NVML, on Debian 12's glibc pinned in hack/debs.lock;
## arm64 with Debian's aarch64 cross gcc, fetched into bin/cross, or CC_LINUX_ARM64). Each is
## an OCI layout (oci/, kai-resource-reservation-oci/: crane push), an OCI archive (docker load
## 25+, podman load) and a docker archive per platform (any docker load, podman load, kind load
## image-archive, crane push FILE). VERSION defaults to git describe's; IMAGE_REPOSITORY to the
## chart's image.repository, the reservation's repository beside it.
IMAGE_REPOSITORY ?= ghcr.io/kai-minruntime/kai-scheduler
image:
	$(GO) run ./hack/image -repository $(IMAGE_REPOSITORY) $(if $(VERSION),-version $(VERSION))

## dist: kubectl-kai's release archives (linux and darwin, amd64 and arm64), their checksums and
## a krew manifest, into _output/dist.
dist:
	$(GO) run ./hack/dist $(if $(VERSION),-version $(VERSION))

clean:
	rm -rf $(BIN)
