# The two commands a newcomer needs: `make run` and `make test`. Both install what is missing first.
.PHONY: install generate build run test lint bench clean

NPM_STAMP := node_modules/.install-stamp

install: $(NPM_STAMP)

$(NPM_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

generate: install
	node scripts/generate/index.mjs

build: install
	rm -rf dist
	npx tsc -p .

run: build
	node dist/services/all-in-one.js

test: build
	node scripts/test/run.mjs

lint: install
	node scripts/generate/index.mjs --check
	npx redocly lint --format=stylish openapi/engine.yaml openapi/gateway.yaml openapi/generated/engine.openapi.json openapi/generated/gateway.openapi.json
	npx tsc -p . --noEmit

bench: build
	node scripts/bench/run.mjs

clean:
	rm -rf dist .tap
