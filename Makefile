# The two commands that matter: `make run` (the operator, on an embedded control plane when no
# cluster is configured) and `make test` (the whole suite). Everything they need is built from the
# Go module proxy; nothing is downloaded from anywhere else.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

CONTROLLER_GEN := go tool controller-gen
# helm is pinned as a Go tool in its own module, so its dependencies never touch the operator's go.mod.
HELM := go tool -modfile=hack/tools/go.mod helm
CHART := charts/llmkube

# The control plane for tests and `make run`: kube-apiserver and etcd, and for `make run`'s fuller
# cluster kube-controller-manager, kube-scheduler and KWOK, built from source, cached by version so a
# machine builds them once.
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
manifests: ## CRDs into config/crd/bases and RBAC into config/rbac, from markers; both copied into the chart's files/.
	$(CONTROLLER_GEN) crd:allowDangerousTypes=true paths=./api/... output:crd:dir=config/crd/bases
	$(CONTROLLER_GEN) rbac:roleName=llmkube-operator paths=./controllers/... output:rbac:dir=config/rbac
	@if [ -d $(CHART) ]; then \
		rm -rf $(CHART)/files/crds && mkdir -p $(CHART)/files/crds && \
		cp config/crd/bases/*.yaml $(CHART)/files/crds/ && cp config/rbac/role.yaml $(CHART)/files/role.yaml; fi

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

.PHONY: helm-install
helm-install: ## Install the chart on a running `make run`'s cluster (real node): adopts its CRDs, uses the images its node holds, and hands the cluster over from make run's operator (HELM_INSTALL_ARGS: more helm flags).
	hack/helm-install-dev.sh $(HELM_INSTALL_ARGS)

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
envtest-bin: control-plane $(ENVTEST_BIN)/kubectl ## Build the control plane (kube-apiserver, etcd, kube-controller-manager, kube-scheduler, KWOK) from source once per version; kubectl too when the machine has none.

# The script builds only what the cache lacks and returns at once when it lacks nothing.
.PHONY: control-plane
control-plane:
	@bash hack/build-control-plane.sh "$(ENVTEST_BIN)"

# The real node (docs/real-node.md): kubelet and kube-proxy at the control plane's version,
# containerd and the CNI plugins, built from source into the same cache directory. runc, iptables
# and conntrack are Debian's.
.PHONY: node-bin
node-bin: envtest-bin ## Build the real node (kubelet, kube-proxy, containerd, CNI plugins) from source once per version.
	@bash hack/build-node.sh "$(ENVTEST_BIN)"

# The GitOps tests run the real kubectl: the machine's own, else one built from the same sources.
$(ENVTEST_BIN)/kubectl: | control-plane
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

# Which nodes `make run`'s embedded cluster has: auto (a real node where this machine can run
# containers, else KWOK's fake GPU nodes) or kwok.
DEV_NODE ?= auto
RUN_ARGS = --dev-control-plane=auto --dev-node=$(DEV_NODE) --zap-encoder=console

.PHONY: run
run: envtest-bin ## Run the operator: on $$KUBECONFIG's cluster if there is one, else on an embedded cluster (a real node where this machine can run containers, else KWOK's fake GPU nodes) whose state is in memory and gone at exit; apply the samples yourself.
	@# Built, then run: under `go run`, Ctrl-C made go itself exit 1 after the operator had shut
	@# down cleanly, and make reported "Error 1". Logs in the console format, for a terminal.
	go build -o bin/llmkube-operator-dev ./cmd/operator
	@# The operator decides whether its cluster gets a real node; when it would, the node's
	@# binaries and the images are built first (each only when missing or stale). A build that
	@# fails leaves them missing, and the operator then says so on one line and starts KWOK's nodes.
	@if bin/llmkube-operator-dev $(RUN_ARGS) --dev-node-preflight; then \
		$(MAKE) --no-print-directory node-bin local-images || echo "building the real node failed (above): the cluster gets KWOK's fake nodes"; fi
	bin/llmkube-operator-dev $(RUN_ARGS)

##@ Test

.PHONY: test
test: envtest-bin ## The whole suite: unit tests and the integration suite against a real kube-apiserver.
	@# The client-limits tests run a real Redis: Debian's redis-server, installed when missing.
	bash hack/debian-packages.sh redis-server:redis-server
	go test ./... -count=1 -timeout 45m
	$(MAKE) test-monitoring

# The end-to-end suite on a real node (docs/real-node.md): needs root and Debian's runc, iptables
# and conntrack (.ci/run installs them); builds the node and the linux/amd64 images first.
.PHONY: test-node
test-node: node-bin local-images ## End-to-end on a real node: helm install, the samples on simulator pods, the OpenAI client through the router, make run with its real node.
	cd test/node/js && npm ci --ignore-scripts --no-audit --no-fund
	LLMKUBE_NODE_E2E=1 go test ./test/node/ -count=1 -v -timeout 20m

# A module of its own (test/monitoring/go.mod): the Prometheus rule loader and PromQL parser it
# checks the chart's alerts and dashboards with never enter the operator's go.mod.
.PHONY: test-monitoring
test-monitoring: ## Parse the chart's alerts and dashboards with Prometheus' own parsers; every metric they use must be registered.
	@# promtool is built first, as the tests run it, outside any test's timeout (cold: about 3
	@# minutes on a loaded 2-core machine, its modules' download included; the tests' `go tool
	@# promtool` then runs the cached binary).
	cd test/monitoring/promtool && GOFLAGS="$(GOFLAGS) -tags=remove_all_sd" go tool promtool --version >/dev/null
	cd test/monitoring && go vet ./... && go test ./... -count=1 -timeout 20m

##@ Benchmark

# About 10 minutes on 2 cores. N=5000 is a run of its own (about 15 minutes):
#   make bench BENCH_ARGS='-n 5000 -r 2 -upgrade-n 0 -routers-n 0 -sweep-n 0 -profile-n 0 -out docs/benchmarks/n5000'
BENCH_ARGS ?= -n 100,1000 -r 3 -m 50 -out docs/benchmarks

.PHONY: bench
bench: envtest-bin ## Operator against in-run floors: convergence, CPU (operator, API server), restart, upgrade, routers, knobs; writes docs/benchmarks (the router-proxy has its own: bench-proxy, bench-balancing).
	go build -o bin/llmkube-operator ./cmd/operator
	go run ./cmd/bench -operator-binary bin/llmkube-operator $(BENCH_ARGS)

# Each phase (floor, floor+watches, operator) of each N and repeat on a fresh control plane, the
# order alternating per repeat, the API server profiled in each. Its own folder: its profiles would
# overwrite those of `make bench`. N=1000 takes 5 minutes; docs/benchmarks/README.md gives the
# commands of the larger N (each fair.md starts with the command that wrote it).
BENCH_FAIR_ARGS ?= -n 1000 -repeat 2 -profile-n 0 -apiserver-profile -out docs/benchmarks/fair/n1000

.PHONY: bench-fair
bench-fair: envtest-bin ## Operator process against the unthrottled floor and the floor beside its idle informers, each phase on a fresh control plane, order alternating; writes fair.md and fair.json.
	go build -o bin/llmkube-operator ./cmd/operator
	go run ./cmd/bench -fair -operator-binary bin/llmkube-operator $(BENCH_FAIR_ARGS)

# This operator beside LLMKube v0.9.19's real operator (../shared/peers/llmkube/build.sh builds
# it, cached) on the same Model and InferenceService pairs, each on a fresh control plane with its
# own CRDs, the order alternating; requests from the API server's audit log of the operator's user.
# docs/benchmarks/README.md says how to read peer.md.
BENCH_PEER_ARGS ?= -n 100,1000 -repeat 1 -apiserver-profile -out docs/benchmarks/peer

.PHONY: bench-peer
bench-peer: envtest-bin ## This operator and LLMKube's real one on the same N Model+InferenceService pairs, each on a fresh control plane, order alternating: requests, writes, API server CPU per pair, steady window, restart; writes docs/benchmarks/peer.
	go build -o bin/llmkube-operator ./cmd/operator
	go run ./cmd/bench -peer -operator-binary bin/llmkube-operator -peer-dir "$$(bash ../shared/peers/llmkube/build.sh | tail -n 1)" $(BENCH_PEER_ARGS)

# make run with its real node (docs/real-node.md, what it costs): cold, from a cache without the
# node's binaries and with no images, then warm. Root; holds the machine's real-node lock.
.PHONY: bench-run
bench-run: envtest-bin ## make run with the real node, cold then warm: seconds to the node and to the first Ready pod of the quick start, the node's memory.
	flock /tmp/llmkube-node.lock bash hack/measure-run.sh cold
	flock /tmp/llmkube-node.lock bash hack/measure-run.sh warm

.PHONY: bench-fresh
bench-fresh: ## make run on a machine that has built nothing (empty control-plane cache, empty Go build cache; modules stay): when each step of the cold path ends, to the first Ready pod, and make run's CPU seconds.
	flock /tmp/llmkube-node.lock bash hack/measure-run.sh fresh

PROXY_BENCH_ARGS ?= -c 64 -d 5s -r 3 -ttfb 500 -streams 1000 -out docs/benchmarks

.PHONY: bench-proxy
bench-proxy: ## The router-proxy against direct and a plain httputil.ReverseProxy hop, and client limits in Redis against limits off (needs redis-server; -limits=false skips it), in one run; writes docs/benchmarks/proxy.md.
	go build -o bin/router-proxy ./cmd/router-proxy
	go run ./cmd/bench-proxy -proxy-binary bin/router-proxy $(PROXY_BENCH_ARGS)

BALANCING_BENCH_ARGS ?=

.PHONY: bench-balancing
bench-balancing: ## Round robin (ClusterIP), least request, prefix affinity's former ring and its prefix scorer on simulated pods with prefix caches, in one run; writes docs/benchmarks/balancing.md.
	go run ./cmd/bench-balancing $(BALANCING_BENCH_ARGS)

# Fuzz targets of the pure pieces (the seed corpora in testdata/fuzz run with every `go test` too),
# each with a budget of executions sized to about 10 s on a 2-core machine: eight targets keep CI's
# fuzzing under a minute and a half. A count, not a duration: with `-fuzztime=10s` Go 1.26's fuzz
# coordinator can report its own deadline as a failure ("context deadline exceeded", no crasher
# written) when a loaded machine's worker answers late (golang/go#75804, fixed in Go 1.27); a count
# stops the workers without that deadline. FUZZTIME=2m (or 1000000x) overrides every budget.
FUZZTIME ?=
FUZZ_TARGETS := \
	./controllers/podmeta:FuzzMerge:30000x \
	./controllers/inferenceservice:FuzzDeployment:4000x \
	./controllers/ownership:FuzzParseRecord:8000x \
	./controllers/ownership:FuzzLegacyPlan:3000x \
	./api/routing/v1:FuzzParseAndRoute:200000x \
	./internal/routerproxy:FuzzScanBody:10000x \
	./internal/routerproxy:FuzzScanForm:25000x \
	./internal/routerproxy/prefix:FuzzChatBlocks:150000x

.PHONY: fuzz
fuzz: ## Run every fuzz target for its budget of executions (about 10 s each), or for FUZZTIME.
	@for t in $(FUZZ_TARGETS); do pkg=$${t%%:*}; rest=$${t#*:}; name=$${rest%%:*}; \
		budget=$${FUZZTIME:-$${rest#*:}}; \
		echo "go test $$pkg -fuzz=^$$name\$$ -fuzztime=$$budget"; \
		go test $$pkg -run='^$$' -fuzz="^$$name\$$" -fuzztime=$$budget || exit 1; done

##@ Release

# The release's version is version's: the images' tags, the chart's version and appVersion,
# and the router-proxy image the operator defaults to, all from one line.
VERSION := $(shell sed -n 's/^var Version = "\(.*\)"$$/\1/p' version/version.go)
# Where `make images` and `make chart` push (e.g. ghcr.io/llmkube): images REGISTRY/operator and
# REGISTRY/router-proxy, the chart oci://REGISTRY/charts/llmkube. Empty: OCI layouts under BUILD_DIR.
REGISTRY ?=
BUILD_DIR ?= build
PLATFORMS ?= linux/amd64 linux/arm64
# The base of both images, named here only. A release uses distroless/static (nonroot), pinned by
# digest: CA certificates, tzdata, a 65532 user, nothing else, rebuilt and scanned upstream.
# BASE_IMAGE=local builds on `make base` instead (CA bundle + passwd from this machine), for
# machines that cannot pull from a public registry.
BASE_IMAGE ?= gcr.io/distroless/static-debian12:nonroot@sha256:d093aa3e30dbadd3efe1310db061a14da60299baff8450a17fe0ccc514a16639
# One timestamp for every file, config and archive: the commit's, so a rebuild is byte-identical.
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null)
SOURCE_URL ?= https://github.com/llmkube/operator
RELEASE_TOOL := go run ./hack/release
# Static, path-free binaries; the operator without the embedded development control plane.
RELEASE_GOFLAGS := -trimpath -ldflags='-s -w -buildid= -X github.com/llmkube/operator/version.Version=$(VERSION)'
IMAGE_LABELS := -label org.opencontainers.image.source=$(SOURCE_URL) -label org.opencontainers.image.revision=$(REVISION) \
	-label org.opencontainers.image.version=$(VERSION) -label org.opencontainers.image.licenses=Apache-2.0 \
	-label org.opencontainers.image.created=$$(date -u -d @$(SOURCE_DATE_EPOCH) +%Y-%m-%dT%H:%M:%SZ 2>/dev/null || date -u -r $(SOURCE_DATE_EPOCH) +%Y-%m-%dT%H:%M:%SZ)

.PHONY: base
base: ## A local base image (CA bundle + passwd/group, user 65532) as an OCI layout in BUILD_DIR/base.
	$(RELEASE_TOOL) base -created $(SOURCE_DATE_EPOCH) -platforms $(subst $(space),$(comma),$(strip $(PLATFORMS))) -out $(BUILD_DIR)/base

# Images for tests and the local cluster only, never pushed (left out when REGISTRY is set): the
# model-server simulator and the real node's sandbox (pause). Built beside the release's so that
# they run on the same base.
TEST_IMAGES := model-simulator:model-simulator pause:pause

space := $(subst ,, )
comma := ,
IMAGE_BASE = $(if $(filter local,$(BASE_IMAGE)),oci:$(BUILD_DIR)/base,$(BASE_IMAGE))

.PHONY: images
images: $(if $(filter local,$(BASE_IMAGE)),base) ## operator, router-proxy, model-simulator and pause images for PLATFORMS; pushed to REGISTRY, else OCI layouts in BUILD_DIR/images.
	@rm -f $(LOCAL_IMAGES_STAMP)
	@for p in $(PLATFORMS); do d=$(BUILD_DIR)/bin/$${p/\//_}; echo "go build $$p"; \
		CGO_ENABLED=0 GOOS=$${p%/*} GOARCH=$${p#*/} go build $(RELEASE_GOFLAGS) -tags nodevplane -o $$d/llmkube-operator ./cmd/operator; \
		CGO_ENABLED=0 GOOS=$${p%/*} GOARCH=$${p#*/} go build $(RELEASE_GOFLAGS) -o $$d/router-proxy ./cmd/router-proxy; \
		CGO_ENABLED=0 GOOS=$${p%/*} GOARCH=$${p#*/} go build $(RELEASE_GOFLAGS) -o $$d/model-simulator ./cmd/model-simulator; \
		CGO_ENABLED=0 GOOS=$${p%/*} GOARCH=$${p#*/} go build $(RELEASE_GOFLAGS) -o $$d/pause ./cmd/pause; done
	@for img in operator:llmkube-operator router-proxy:router-proxy $(if $(REGISTRY),,$(TEST_IMAGES)); do repo=$${img%%:*}; bin=$${img#*:}; \
		bins=$$(for p in $(PLATFORMS); do printf -- '-bin %s=%s ' $$p $(BUILD_DIR)/bin/$${p/\//_}/$$bin; done); \
		if [ -n "$(REGISTRY)" ]; then dest="-push $(REGISTRY)/$$repo:$(VERSION)"; else dest="-out $(BUILD_DIR)/images/$$repo -tag $(VERSION)"; fi; \
		$(RELEASE_TOOL) image -base $(IMAGE_BASE) -binary $$bin $$bins $(IMAGE_LABELS) -created $(SOURCE_DATE_EPOCH) \
			$$dest -digest-file $(BUILD_DIR)/images/$$repo.digest; done

# The linux/amd64 images on the local base that a real node loads (make run, make test-node),
# rebuilt when a Go file, go.mod or the Makefile changed since the last build; `make images` of any
# other kind removes the stamp.
LOCAL_IMAGES_STAMP := $(BUILD_DIR)/images/.local-linux-amd64
.PHONY: local-images
local-images: $(LOCAL_IMAGES_STAMP)
$(LOCAL_IMAGES_STAMP): $(shell git ls-files '*.go' go.mod go.sum Makefile 2>/dev/null)
	$(MAKE) --no-print-directory images BASE_IMAGE=local PLATFORMS=linux/amd64
	@touch $@

.PHONY: chart
chart: ## Package the chart (version and appVersion from version) into BUILD_DIR/chart; push it to oci://REGISTRY/charts when REGISTRY is set.
	@mkdir -p $(BUILD_DIR)/chart
	$(HELM) package $(CHART) --version $(VERSION) --app-version $(VERSION) -d $(BUILD_DIR)/chart
	@# helm stamps every entry with the time of packaging: one timestamp, the commit's, instead.
	$(RELEASE_TOOL) chart -created $(SOURCE_DATE_EPOCH) $(BUILD_DIR)/chart/llmkube-$(VERSION).tgz
	@if [ -n "$(REGISTRY)" ]; then $(HELM) push $(BUILD_DIR)/chart/llmkube-$(VERSION).tgz oci://$(REGISTRY)/charts $(HELM_PUSH_FLAGS); fi

# The platforms plugins/llmkube.yaml (the krew manifest) names.
PLUGIN_PLATFORMS ?= linux/amd64 linux/arm64 darwin/arm64

.PHONY: plugin-archives
plugin-archives: ## kubectl-llmkube archives for krew (binary + LICENSE), checksums.txt and the filled-in krew manifest in BUILD_DIR/plugin.
	@for p in $(PLUGIN_PLATFORMS); do echo "go build kubectl-llmkube $$p"; \
		CGO_ENABLED=0 GOOS=$${p%/*} GOARCH=$${p#*/} go build $(RELEASE_GOFLAGS) -o $(BUILD_DIR)/bin/$${p/\//_}/kubectl-llmkube ./cmd/kubectl-llmkube; done
	$(RELEASE_TOOL) plugin $$(for p in $(PLUGIN_PLATFORMS); do printf -- '-bin %s=%s ' $$p $(BUILD_DIR)/bin/$${p/\//_}/kubectl-llmkube; done) \
		-license LICENSE -manifest plugins/llmkube.yaml -tag v$(VERSION) -created $(SOURCE_DATE_EPOCH) -out $(BUILD_DIR)/plugin

.PHONY: help
help:
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_-]+:.*?##/ { printf "  %-14s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)
