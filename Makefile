# Cirrus — developer shortcuts. `make test` is what CI runs (via .ci/run).
SWIFT ?= swift

.PHONY: bench-fresh deps build test test-postgres test-postgres-shards release run fuzz clean bench bench-quick bench-real calibrate lint format docs

# System libraries the package links (Debian): GEOS for geometry, libedit for the REPL.
deps:
	@./scripts/install-deps.sh

build: deps
	$(SWIFT) build

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --parallel

# The PostgreSQL backend's tests (CirrusPostgresTests, and the model-based database tests of
# CirrusTests, which run on both engines) against a throwaway PostgreSQL 15 + PostGIS cluster on
# a free loopback port (scripts/postgres-cluster.sh; installs the Debian packages when missing),
# dropped on exit whatever happens. `make test` runs their embedded halves only (no
# CIRRUS_POSTGRES_URL).
test-postgres: deps
	$(SWIFT) build --build-tests
	@port=$$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'); \
	export CLUSTER=cirrus_test_$$port; \
	trap './scripts/postgres-cluster.sh down' EXIT; \
	url=$$(./scripts/postgres-cluster.sh up $$port | tail -1); \
	CIRRUS_POSTGRES_URL=$$url $(SWIFT) test --skip-build --filter 'CirrusPostgresTests|CirrusTests.ModelTests'

# The multi-node tests (PostgresShardTests): a coordinator and two workers on three free
# consecutive loopback ports (scripts/postgres-shards.sh: postgres_fdw servers shard0/shard1),
# tenants hash-partitioned over the workers; the tests stop and restart a worker (pg_ctlcluster)
# and hang one for a moment (SIGSTOP/SIGCONT of its postmaster: run as root, as CI does). Dropped on
# exit; 70–110 s here, build and cluster creation included.
test-postgres-shards: deps
	$(SWIFT) build --build-tests
	@base=$$(python3 -c 'exec("import socket\nfor _ in range(100):\n s = socket.socket(); s.bind((\"127.0.0.1\", 0)); p = s.getsockname()[1]\n try:\n  [socket.socket().bind((\"127.0.0.1\", p + i)) for i in (1, 2)]; print(p); break\n except OSError: pass")'); \
	trap "./scripts/postgres-shards.sh down $$base" EXIT; \
	urls=$$(./scripts/postgres-shards.sh up $$base | tail -1); \
	CIRRUS_POSTGRES_SHARDS="$$urls" $(SWIFT) test --skip-build --filter PostgresShardTests

release: deps
	$(SWIFT) build -c release

# Formatting (.swift-format: 4 spaces, 120 columns): `lint` fails on any difference (CI runs it),
# `format` rewrites the files in place.
SWIFT_SOURCES = Sources Tests Benchmarks/Sources Fuzz
lint:
	$(SWIFT) format lint --strict -r --configuration .swift-format $(SWIFT_SOURCES)

format:
	$(SWIFT) format -i -r --configuration .swift-format $(SWIFT_SOURCES)

# DocC archives of every library module (swift-docc-plugin, added to the package only when
# CIRRUS_DOCS is set); warnings are errors. Output: .build-docs/plugins/Swift-DocC/outputs/.
DOC_TARGETS = PredicateSyntax RecordModel CirrusIO QueryChecker Indexes RecordLog QueryPlanner QueryExecution \
	CirrusFacade CirrusEmbedded Cirrus CirrusServer \
	CoreDataMirror CirrusShell CirrusPostgres CirrusKit
docs: deps
	CIRRUS_DOCS=1 $(SWIFT) package --scratch-path .build-docs generate-documentation \
		$(foreach t,$(DOC_TARGETS),--target $(t)) --warnings-as-errors

# A fuzz run of the predicate front end (lexer, parser, checker); SECONDS=60 by default.
fuzz:
	@./scripts/fuzz.sh $${FUZZ_SECONDS:-60}

clean:
	rm -rf .build

# Cirrus vs SQLite on the same generated places (docs/benchmarks.md). BENCH_SIZE=1M by default;
# writes bench.json and bench.svg. `bench-quick`: 10k records, short timings, agreement included.
# The Benchmarks package's cached build description lists the Cirrus sources it saw last: a file
# added to Sources since is "not found" until the description is rebuilt. Dropping it first costs
# a few seconds.
bench-fresh:
	rm -f Benchmarks/.build/release.yaml Benchmarks/.build/*/release/description.json

bench: deps bench-fresh
	$(SWIFT) run -c release --package-path Benchmarks qbench --size $${BENCH_SIZE:-1M} --json bench.json --svg bench.svg

bench-quick: deps bench-fresh
	$(SWIFT) run -c release --package-path Benchmarks qbench --quick --size 10k

# Cirrus vs SQLite on real data and generated places in one run (docs/benchmarks.md, "Real data
# and generated places in one run"): GeoNames' 235k cities and Debian's 63k packages, fetched
# and converted by scripts/real-data.sh into .build/real-data (kept for later runs), with their
# committed queries, after BENCH_SIZE generated places (100k). Writes bench-real.json and .svg.
bench-real: deps bench-fresh
	./scripts/real-data.sh .build/real-data
	$(SWIFT) run -c release --package-path Benchmarks qbench --size $${BENCH_SIZE:-100k} \
		--data .build/real-data/cities.jsonl --queries Benchmarks/queries/cities.jsonl \
		--data .build/real-data/packages.jsonl --queries Benchmarks/queries/debian.jsonl \
		--json bench-real.json --svg bench-real.svg

# The planner's cost constants, measured on this machine (docs/benchmarks.md, "Planner
# calibration"): times each operator the planner costs and rewrites
# Sources/QueryPlanner/CalibratedCosts.swift. CALIBRATE_SIZE=100000 base records by default.
CALIBRATE_ARGS = calibrate --size $${CALIBRATE_SIZE:-100000} --out Sources/QueryPlanner/CalibratedCosts.swift
calibrate: deps bench-fresh
	$(SWIFT) build -c release --package-path Benchmarks
	$$($(SWIFT) build -c release --package-path Benchmarks --show-bin-path)/qbench $(CALIBRATE_ARGS) \
		--generated-by "make calibrate"

# A first taste: check a sample predicate.
run: deps
	$(SWIFT) build --product cirrus
	$$($(SWIFT) build --show-bin-path)/cirrus check "kind == %@ AND distanceToLocation:fromLocation:(location, %@) < 5" \
		--arg '"cafe"' --arg '{"type": "LOCATION", "value": {"latitude": 48.8584, "longitude": 2.2945}}'

# The REPL on the demo database (CloudKit's Artwork/Artist/Note examples + 100,000 places),
# generated on first use into $XDG_CACHE_HOME/cirrus (or ~/.cache/cirrus). Release build: opening
# and querying 100 k records is several times faster than in debug.
.PHONY: repl
repl: deps
	$(SWIFT) build -c release --product cirrus
	$$($(SWIFT) build -c release --show-bin-path)/cirrus repl

# Cirrus vs SQLite vs Cirrus-on-PostgreSQL (docs/benchmarks.md, "Cirrus on PostgreSQL"): a throwaway
# PostgreSQL 15 + PostGIS cluster on a free loopback port (scripts/postgres-cluster.sh), qbench
# --postgres on it, the cluster dropped on exit whatever happens. SIZE=100k by default;
# QBENCH_ARGS adds flags, e.g. `make bench-postgres SIZE=10k QBENCH_ARGS=--verify` or
# `QBENCH_ARGS="--seconds 1 --markdown pg.md --json pg.json"`.
.PHONY: bench-postgres
bench-postgres: deps bench-fresh
	$(SWIFT) build -c release --package-path Benchmarks
	@port=$$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'); \
	export CLUSTER=cirrus_bench_$$port; \
	trap './scripts/postgres-cluster.sh down' EXIT; \
	url=$$(./scripts/postgres-cluster.sh up $$port | tail -1); \
	case "$$url" in postgres://*) ;; *) echo "bench-postgres: the cluster did not come up" >&2; exit 1;; esac; \
	$$($(SWIFT) build -c release --package-path Benchmarks --show-bin-path)/qbench --size $(or $(SIZE),100k) \
		--postgres $$url $(QBENCH_ARGS)
