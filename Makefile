# The project's entry points. `make help` lists them.
#
# Every Go module (each go.mod outside hack/tools, plus the test summary
# tool there) is tidied, vetted and tested on its own, because `go test ./...`
# stops at module boundaries.

SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
export GOTOOLCHAIN := local

MODULES := $(patsubst ./%/go.mod,%,$(shell find . -name go.mod -not -path './hack/*' -not -path './.cache/*' -not -path './.dev/*' | sort)) hack/tools/charts hack/tools/release hack/tools/testsum
CACHE := .cache
REPORTS := $(CACHE)/reports

.PHONY: help
help: ## Show the targets.
	@grep -hE '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  %-12s %s\n", $$1, $$2}'

.PHONY: tools
tools: ## Install or build every tool into .cache/bin (etcd, kube-apiserver, controller-gen, helm, chainsaw).
	hack/tools.sh

.PHONY: generate
generate: ## Regenerate deep-copy code and CRD manifests.
	hack/generate.sh

.PHONY: verify
verify: ## Fail when a generated file is stale (regenerates in a copy of the tree).
	hack/verify.sh

.PHONY: lint
lint: ## gofmt, go vet and go mod tidy checks on every module; shell scripts with bash -n.
	@out=$$(gofmt -l $(MODULES)); if [[ -n "$$out" ]]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@for m in $(MODULES); do echo "==> vet $$m"; (cd $$m && GOWORK=off go vet ./...); done
	@for m in $(MODULES); do (cd $$m && GOWORK=off go mod tidy -diff) || { echo "$$m: run go mod tidy"; exit 1; }; done
	@for f in hack/*.sh; do bash -n $$f; done

.PHONY: unit
unit: tools ## Unit tests of every module (GOWORK=off: each module stands alone).
	@mkdir -p $(REPORTS)
	@status=0; for m in $(MODULES); do echo "==> test $$m"; \
	  (cd $$m && GOWORK=off go test -count=1 -json ./... > $(CURDIR)/$(REPORTS)/unit-$$(echo $$m | tr / _).json) || status=1; \
	  hack/testsum.sh brief $(REPORTS)/unit-$$(echo $$m | tr / _).json; done; exit $$status

.PHONY: e2e
e2e: tools ## The chainsaw suite on a freshly started local control plane, torn down afterwards.
	hack/e2e.sh

.PHONY: e2e-kind
e2e-kind: ## The same chainsaw suite on a kind cluster with the controllers' images installed by the umbrella chart (needs Docker; CI runs make e2e).
	hack/e2e-kind.sh

.PHONY: test
test: ## Everything CI runs: unit tests, generated-code verification, the e2e suite; ends with the counts.
	@mkdir -p $(REPORTS); rm -f $(REPORTS)/* $(CACHE)/chainsaw-report*.json $(CACHE)/chainsaw-report*.status
	@status=0; \
	$(MAKE) --no-print-directory unit || status=1; \
	$(MAKE) --no-print-directory verify && echo pass > $(REPORTS)/verify.status || { echo fail > $(REPORTS)/verify.status; status=1; }; \
	$(MAKE) --no-print-directory e2e || status=1; \
	hack/testsum.sh summary $(REPORTS) $(CACHE)/chainsaw-report*.json || status=1; \
	exit $$status

.PHONY: dev-up
dev-up: ## Start the local control plane and every controller in the background (kubeconfig: .dev/kubeconfig).
	hack/dev.sh up

.PHONY: dev-down
dev-down: ## Stop everything dev-up started.
	hack/dev.sh down

.PHONY: dev
dev: ## dev-up, follow the logs, dev-down on Ctrl-C.
	hack/dev.sh run

.PHONY: bench
bench: tools ## Measure the shapes of work against the performance budget (N=2000 instances; make bench SHAPE=fanout N=10000; docs/performance.md).
	BENCH_SHAPES="$(SHAPE)" hack/bench.sh $(or $(N),2000)

.PHONY: build
build: ## Build every controller into .cache/bin.
	hack/controllers.sh build

IMAGE_REPO ?= ghcr.io/cozyplane
IMAGE_TAG ?= $(shell sed -n 's/^appVersion: "\(.*\)"/\1/p' charts/cozyplane/Chart.yaml)

.PHONY: images
images: ## Build each controller's image from the Dockerfile with docker or podman (IMAGE_REPO, IMAGE_TAG; PUSH=1 pushes; not part of make test).
	@engine=$${CONTAINER_ENGINE:-$$(command -v docker || command -v podman || true)}; \
	if [[ -z "$$engine" ]]; then \
	  echo "make images needs a container engine: neither docker nor podman is installed (or set CONTAINER_ENGINE)."; \
	  echo "Build on a machine with one; docs/install.md, Images, has the commands."; exit 1; fi; \
	if ! "$$engine" info >/dev/null 2>&1; then \
	  echo "make images: $$engine is installed but cannot reach its engine (for docker: is the daemon running?)."; exit 1; fi; \
	for c in $$(hack/controllers.sh list); do \
	  echo "==> $(IMAGE_REPO)/$$c:$(IMAGE_TAG) ($$engine)"; \
	  "$$engine" build --build-arg CONTROLLER=$$c -t "$(IMAGE_REPO)/$$c:$(IMAGE_TAG)" . ; \
	  if [[ "$(PUSH)" == 1 ]]; then "$$engine" push "$(IMAGE_REPO)/$$c:$(IMAGE_TAG)"; fi; \
	done

.PHONY: release
release: ## Build a release into .cache/release/<version> without a container engine: OCI image archives per controller (linux amd64, arm64), the charts packaged with those images' tag and digest, CLI archives for linux and darwin, SHA256SUMS (VERSION=x.y.z; default from git; not part of make test).
	hack/tools.sh helm
	cd hack/tools/release && GOWORK=off go run . -root "$(CURDIR)" -out "$(CURDIR)/$(CACHE)/release" $(if $(VERSION),-version "$(VERSION)")
