# Run `make` (or `make help`) to see what is here.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-builtin-rules --warn-undefined-variables

GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT := bin/golangci-lint
FUZZTIME ?= 1m
# ONLY limits `make record` to some recorders: make record ONLY=codex,claude
ONLY ?=
# ARGS are more flags for `make up`: make up ARGS='--nats-listen 127.0.0.1:4223'
ARGS ?=

# Exports a working DATABASE_URL for the rest of the recipe line. The
# assignment is separate from `export` because `export X="$(cmd)"` would
# hide cmd's failure. A DATABASE_URL already set (in the environment or on
# the make command line) is checked and used by the script, not replaced.
ENSURE_DB = url="$$(scripts/ensure-postgres)"; export DATABASE_URL="$$url"
# Spelled out rather than run through $(MAKE): make -n executes any recipe
# line that mentions $(MAKE), and this one runs the tests.
VET = go vet ./...
LINT = $(GOLANGCI_LINT) run ./...

.PHONY: help generate verify fmt vet lint test test/race test/short bench fuzz db/reset up record

help: ## Show this help
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_\/.-]+:.*## / {printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

generate: ## Regenerate the JSON Schemas and docs/mapping
	go generate ./...
	go test ./pkg/adapters -run TestMappingDocs -update

verify: generate ## Fail if generated files are out of date
	git diff --exit-code

fmt: $(GOLANGCI_LINT) ## Format the code (gofmt, goimports)
	$(GOLANGCI_LINT) fmt ./...

vet: ## Run go vet
	$(VET)

lint: $(GOLANGCI_LINT) ## Run golangci-lint
	$(LINT)

test: $(GOLANGCI_LINT) ## Full suite, as CI runs it: vet, lint, race tests against Postgres
	$(ENSURE_DB); \
	scripts/ensure-postgres --binaries; \
	$(VET); \
	$(LINT); \
	go test -race -count=1 ./...

test/race: ## Tests with the race detector against Postgres
	$(ENSURE_DB); go test -race ./...

test/short: ## Tests without the race detector
	$(ENSURE_DB); go test ./...

bench: ## Benchmarks
	$(ENSURE_DB); go test -run='^$$' -bench=. -benchmem ./...

fuzz: ## Run every fuzz target for FUZZTIME (default 1m) each, then list those that failed
	scripts/fuzz '$(FUZZTIME)'

db/reset: ## Stop and delete the private Postgres cluster (.cache/postgres)
	scripts/ensure-postgres --stop
	rm -rf .cache/postgres

up: ## Run agentwire on the embedded default: NATS on 127.0.0.1:4222 (store in ./.agentwire), projections into DATABASE_URL or a local Postgres
	$(ENSURE_DB); go run ./cmd/agentwire up $(ARGS)

record: ## Re-record the conformance recordings with the pinned agent CLIs (needs npm; not part of CI)
	go run ./tools/record $(if $(ONLY),-only $(ONLY))

$(GOLANGCI_LINT): ## Install golangci-lint into bin/
	GOBIN=$(CURDIR)/bin go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
