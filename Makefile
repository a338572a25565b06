# The two commands that matter: `make run` (the operator, on an embedded control plane when no
# cluster is configured) and `make test` (the whole suite). Everything they need is built from the
# Go module proxy; nothing is downloaded from anywhere else.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

CONTROLLER_GEN := go tool controller-gen
# helm is pinned as a Go tool in its own module, so its dependencies never touch the operator's go.mod.
HELM := go tool -modfile=hack/tools/go.mod helm
CHART := charts/llmkube

# The control plane for tests and `make run`: kube-apiserver and etcd built from source, cached by
# version so a machine builds them once.
K8S_VERSION  := $(shell sed -n 's/^\tk8s.io\/kubernetes \(v[^ ]*\)$$/\1/p' test/envtest/tools/go.mod)
ETCD_VERSION := $(shell sed -n 's/^\tgo.etcd.io\/etcd\/server\/v3 \(v[^ ]*\)$$/\1/p' test/envtest/tools/go.mod)
ENVTEST_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/llmkube/envtest
ENVTEST_BIN := $(ENVTEST_CACHE)/k8s-$(K8S_VERSION)-etcd-$(ETCD_VERSION)
export KUBEBUILDER_ASSETS := $(ENVTEST_BIN)

.PHONY: all
all: build

##@ Generate

.PHONY: generate
generate: ## Deepcopy and apply configurations from the API types.
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./api/...
	rm -rf applyconfig
	$(CONTROLLER_GEN) applyconfiguration:headerFile=hack/boilerplate.go.txt paths=./api/...

.PHONY: manifests
manifests: ## CRDs into config/crd/bases and RBAC into config/rbac, from markers; both copied into the chart.
	$(CONTROLLER_GEN) crd paths=./api/... output:crd:dir=config/crd/bases
	$(CONTROLLER_GEN) rbac:roleName=llmkube-operator paths=./controllers/... output:rbac:dir=config/rbac
	@if [ -d $(CHART) ]; then \
		rm -rf $(CHART)/crds && mkdir -p $(CHART)/crds $(CHART)/files && \
		cp config/crd/bases/*.yaml $(CHART)/crds/ && cp config/rbac/role.yaml $(CHART)/files/role.yaml; fi

.PHONY: verify
verify: ## Fail when generated output is stale, code is unformatted, or vet complains.
	$(MAKE) generate manifests
	@git diff --exit-code -- api applyconfig config charts || { echo "generated files are stale: run 'make generate manifests' and commit"; exit 1; }
	@test -z "$$(git status --porcelain -- api applyconfig config charts)" || { git status --porcelain -- api applyconfig config charts; echo "generated files are untracked: commit them"; exit 1; }
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	go vet ./...
	$(MAKE) helm-lint

##@ Helm chart

.PHONY: helm-lint
helm-lint: ## helm lint the chart with each example values file in charts/llmkube/ci.
	@for f in $(CHART)/ci/*.yaml; do echo "helm lint -f $$f"; $(HELM) lint $(CHART) --strict -f $$f >/dev/null || { $(HELM) lint $(CHART) --strict -f $$f; exit 1; }; done

.PHONY: helm-template
helm-template: ## Render the chart with each example values file into bin/chart/.
	@mkdir -p bin/chart
	@for f in $(CHART)/ci/*.yaml; do out=bin/chart/$$(basename $$f .yaml).yaml; $(HELM) template llmkube $(CHART) --namespace llmkube-system -f $$f > $$out; echo "$$out"; done

##@ Build and run

.PHONY: build
build:
	go build -o bin/llmkube-operator ./cmd/operator
	go build -o bin/router-proxy ./cmd/router-proxy

.PHONY: envtest-bin
envtest-bin: $(ENVTEST_BIN)/kube-apiserver $(ENVTEST_BIN)/kubectl ## Build kube-apiserver and etcd from source once per version; kubectl too when the machine has none.

$(ENVTEST_BIN)/kube-apiserver: test/envtest/tools/go.mod
	@bash hack/build-control-plane.sh "$(ENVTEST_BIN)"

# The GitOps tests run the real kubectl: the machine's own, else one built from the same sources.
$(ENVTEST_BIN)/kubectl: $(ENVTEST_BIN)/kube-apiserver
	@if command -v kubectl >/dev/null 2>&1; then ln -sf "$$(command -v kubectl)" $@; \
	else echo "building kubectl from source (once)"; cd test/envtest/tools && CGO_ENABLED=0 go build -o $@ k8s.io/kubernetes/cmd/kubectl; fi

# The kubectl plugin: kubectl finds kubectl-llmkube on PATH as `kubectl llmkube`, and asks
# kubectl_complete-llmkube for completions.
PLUGIN_BIN ?= $(shell go env GOPATH)/bin

.PHONY: plugin
plugin: ## Install the kubectl plugin (kubectl llmkube) and its completion helper into $(go env GOPATH)/bin.
	go build -o $(PLUGIN_BIN)/kubectl-llmkube ./cmd/kubectl-llmkube
	install -m 0755 plugins/kubectl_complete-llmkube $(PLUGIN_BIN)/kubectl_complete-llmkube
	@echo "installed $(PLUGIN_BIN)/kubectl-llmkube; try: kubectl llmkube --help"

.PHONY: run
run: envtest-bin ## Run the operator: on $$KUBECONFIG's cluster if there is one, else on an embedded control plane.
	go run ./cmd/operator --dev-control-plane=auto --apply-samples=config/samples

##@ Test

.PHONY: test
test: envtest-bin ## The whole suite: unit tests and the integration suite against a real kube-apiserver.
	go test ./... -count=1 -timeout 45m
	$(MAKE) test-monitoring

# A module of its own (test/monitoring/go.mod): the Prometheus rule loader and PromQL parser it
# checks the chart's alerts and dashboards with never enter the operator's go.mod.
.PHONY: test-monitoring
test-monitoring: ## Parse the chart's alerts and dashboards with Prometheus' own parsers; every metric they use must be registered.
	cd test/monitoring && go vet ./... && go test ./... -count=1

##@ Benchmark

# About 10 minutes on 2 cores. N=5000 is a run of its own (about 15 minutes):
#   make bench BENCH_ARGS='-n 5000 -r 2 -upgrade-n 0 -routers-n 0 -sweep-n 0 -profile-n 0 -out docs/benchmarks/n5000'
BENCH_ARGS ?= -n 100,1000 -r 3 -m 50 -out docs/benchmarks

.PHONY: bench
bench: envtest-bin ## Operator against in-run floors: convergence, CPU (operator, API server), restart, upgrade, routers, knobs; writes docs/benchmarks (the router-proxy has its own: bench-proxy, bench-balancing).
	go build -o bin/llmkube-operator ./cmd/operator
	go run ./cmd/bench -operator-binary bin/llmkube-operator $(BENCH_ARGS)

PROXY_BENCH_ARGS ?= -c 64 -d 5s -r 3 -ttfb 500 -streams 1000 -out docs/benchmarks

.PHONY: bench-proxy
bench-proxy: ## The router-proxy against direct and a plain httputil.ReverseProxy hop, in one run; writes docs/benchmarks/proxy.md.
	go build -o bin/router-proxy ./cmd/router-proxy
	go run ./cmd/bench-proxy -proxy-binary bin/router-proxy $(PROXY_BENCH_ARGS)

BALANCING_BENCH_ARGS ?=

.PHONY: bench-balancing
bench-balancing: ## Round robin (ClusterIP), least request and prefix affinity on simulated pods, in one run; writes docs/benchmarks/balancing.md.
	go run ./cmd/bench-balancing $(BALANCING_BENCH_ARGS)

# Fuzz targets of the pure pieces, each run for FUZZTIME (the seed corpora in testdata/fuzz run
# with every `go test` too). Six targets at 10s keep CI's fuzzing around a minute.
FUZZTIME ?= 10s
FUZZ_TARGETS := \
	./controllers/podmeta:FuzzMerge \
	./controllers/inferenceservice:FuzzDeployment \
	./controllers/ownership:FuzzParseRecord \
	./controllers/ownership:FuzzLegacyPlan \
	./internal/routingdoc:FuzzParseAndRoute \
	./internal/routerproxy:FuzzScanBody

.PHONY: fuzz
fuzz: ## Run every fuzz target for FUZZTIME (default 10s) each.
	@for t in $(FUZZ_TARGETS); do pkg=$${t%%:*}; name=$${t##*:}; \
		echo "go test $$pkg -fuzz=^$$name\$$ -fuzztime=$(FUZZTIME)"; \
		go test $$pkg -run='^$$' -fuzz="^$$name\$$" -fuzztime=$(FUZZTIME) || exit 1; done

.PHONY: help
help:
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_-]+:.*?##/ { printf "  %-14s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)
