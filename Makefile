# memgate — the commands of the README. Each works on a fresh machine.
.PHONY: run test bench reliability eval build migrate neo4j-start neo4j-stop

run:            ## the service with embedded defaults: local Neo4j, offline extractor
	scripts/run

test:           ## the whole suite against a real local Neo4j
	scripts/test

bench:          ## every benchmark, side by side, then the reliability suite; rewrites BENCHMARKS.md and RELIABILITY.md
	scripts/bench

reliability:    ## the reliability suite alone (load, restarts, LLM faults, fuzzing, 30-minute soak); rewrites RELIABILITY.md
	scripts/reliability

eval:           ## extraction quality: the labelled corpus through the heuristic extractor and a local model; writes BENCHMARKS.md
	scripts/eval

build:
	go build -o memgate ./cmd/memgate

migrate: build
	./memgate migrate

neo4j-start:
	scripts/neo4j-local start

neo4j-stop:
	scripts/neo4j-local stop
