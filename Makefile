# psdlearn: the README's two commands are `make demo` and `make test`.
GO ?= go
# Test budget: the suite runs well inside CI's limit on 2 cores.
TEST_TIMEOUT ?= 30m
FUZZTIME ?= 20000x

.PHONY: deps demo test test-mpi test-perturbed test-race test-acceptance fuzz bench bench-smoke build lint adversarial

# STATICCHECK is pinned: the same checks on every machine.
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2

deps:
	bash third_party/install-deps.sh

build: deps
	$(GO) build ./...

demo: deps
	$(GO) run ./cmd/psdlearn demo

# test runs the whole suite with the native backend (cgo), the generator of
# hostile inputs on its own so that its counts are printed (adversarial),
# the pure-Go build (CGO_ENABLED=0: only the "go" backend exists), the race
# detector on the packages with concurrency guarantees, the numerical suites
# on a backend whose every dense result is moved at the level of rounding
# (test-perturbed), the program embedding the library from its own module
# (test-acceptance), every benchmark once (bench-smoke), and the MPI
# binding (test-mpi).
test: deps
	PSDLEARN_ADVERSARIAL=off $(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...
	$(MAKE) adversarial
	CGO_ENABLED=0 $(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./engine/... ./lapack/... ./sparse/... ./mpi/... ./parpack/...
	$(GO) test -count=1 -race -timeout $(TEST_TIMEOUT) -run 'Race|Concurren|Reentrant' ./...
	$(MAKE) test-perturbed
	$(MAKE) test-acceptance
	$(MAKE) bench-smoke
	$(MAKE) test-mpi

# adversarial runs the generator of hostile inputs (cmd/psdlearn's
# TestAdversarial): the built binaries under a memory ulimit, a seeded
# sample of its cases (about a minute on 2 cores), printing the case count
# and the properties checked. PSDLEARN_ADVERSARIAL=full runs every case
# (about ten minutes), =N a sample of N; PSDLEARN_ADVERSARIAL_SEED picks
# another sample.
adversarial: deps
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) -run '^TestAdversarial$$' -v ./cmd/psdlearn

# test-perturbed runs the numerical suites on the "perturbed" backend
# (package engine/perturbed): the native backend with every BLAS, LAPACK and
# ARPACK result moved by up to 4ε relative and the inner sums of dot
# products, GEMM and SYRK added in another order, as another build of those
# libraries would round. A test that fails here and passes on native asserts
# the rounding of one build, not mathematics.
PERTURBED_PKGS ?= ./engine/... ./algos/... ./distributed/... ./parpack/...
test-perturbed: deps
	PSDLEARN_BACKEND=perturbed $(GO) test -tags perturbed -count=1 -timeout $(TEST_TIMEOUT) $(PERTURBED_PKGS)

# test-acceptance runs the program in acceptance/, a module of its own that
# uses this one through a replace directive, as an embedding program would.
test-acceptance: deps
	cd acceptance && $(GO) test -count=1 -timeout 10m ./...

# lint fails on any file gofmt would change and on any staticcheck finding.
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '^third_party/')); \
	  if [ -n "$$out" ]; then echo "gofmt -l:"; echo "$$out"; exit 1; fi
	$(STATICCHECK) ./...
	cd acceptance && $(STATICCHECK) ./...

# bench-smoke runs every benchmark once (-benchtime 1x), so that the
# benchmarks beside the code keep running; their figures mean nothing here.
# -short skips the few that are measurements of full size (minutes each).
bench-smoke:
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) -short -run '^$$' -bench . -benchtime 1x ./...

# test-mpi runs the mpi package built with Open MPI (-tags mpi): the
# conformance suite in one process and under mpirun -np 2 and -np 3, and a
# job whose rank dies mid-collective (about 5 s); and package distributed, whose
# distributed BoostMetric and FrobMetric run under mpirun -np 2 and -np 3
# on 2,000 rows of letters against one-process runs (with the fake-comm
# tests, about 25 s), and `mpirun -np 2 psdlearn train` with boostmetric
# and frobmetric (about 10 s; docs/mpi.md); package parpack, PARPACK and
# the replicated Go eigensolver under mpirun -np 2 and -np 3 on the path
# Laplacian (about 3 s), and distributed's SimpleNPKL on them against npkl.Learn
# on iris and wine (about 1 s); `mpirun -np 2 psdlearn cluster` on iris
# against one-process run 1 (about 5 s); and `mpirun -np 2` and `-np 3
# psdlearn embed` (MVU's negative parts on PARPACK) against one process,
# both certified (about 35 s).
test-mpi: deps
	$(GO) test -tags mpi -count=1 -timeout 5m ./mpi/... ./distributed/... ./parpack/...
	$(GO) test -tags mpi -count=1 -timeout 5m -run 'TestTrainMPI|TestClusterMPI|TestEmbedMPI' ./cmd/psdlearn

# fuzz runs every fuzz target (the data loaders, reading data by parts
# over in-process ranks, the model file and the constraint files) for
# FUZZTIME each (an execution count such as 20000x, or
# a duration; counts avoid a race of go1.26's fuzz coordinator at its deadline).
# The targets of ./distributed run every input on in-process ranks, about
# ten times slower per execution: FUZZTIME_RANKS is their budget.
FUZZ_PKGS ?= ./data ./distributed ./model ./constraints
FUZZTIME_RANKS ?= $(FUZZTIME)
fuzz:
	@for p in $(FUZZ_PKGS); do \
	  t=$(FUZZTIME); [ "$$p" = ./distributed ] && t=$(FUZZTIME_RANKS); \
	  for f in $$($(GO) test -list '^Fuzz' $$p | grep '^Fuzz'); do \
	    echo "fuzz $$p $$f ($$t)"; \
	    $(GO) test -run XXX -fuzz "^$$f$$" -fuzztime $$t $$p || exit 1; \
	  done; \
	done

bench:
	$(GO) run ./cmd/psdlearn bench --suite kernels
