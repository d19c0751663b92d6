# The two commands a newcomer needs: `make run` and `make test`. Both install what is missing first.
.PHONY: install generate build sdk run test lint eslint deps imports format bench clean

# The stamp's name carries a hash of package.json and package-lock.json, so packages are installed
# when node_modules is missing or was installed from other manifests, and never because a fresh
# clone or worktree gave the manifests newer modification times than the stamp (npm ci empties
# node_modules first, also one shared through a symlink).
MANIFEST_HASH := $(shell cat package.json package-lock.json | sha256sum | cut -c1-16)
NPM_STAMP := node_modules/.installed-$(MANIFEST_HASH)

install: $(NPM_STAMP)

$(NPM_STAMP):
	sh scripts/install/npm-ci.sh
	@touch $@

generate: install
	node scripts/generate/index.mjs

build: install
	rm -rf dist sdk/dist
	npx tsc -p .
	npx tsc -p sdk
	node scripts/build/console.mjs

# The SDK's package, @workflow-service/sdk (docs/sdk.md): workflow-service-sdk-<version>.tgz here.
sdk: build
	npm pack ./sdk

# The services' V8 flags, as `npm start` and the image run them (package.json `config.nodeOptions`, docs/production.md#the-young-generation).
SERVICE_NODE_OPTIONS = $(shell node -p "require('./package.json').config.nodeOptions")

run: build
	node $(SERVICE_NODE_OPTIONS) dist/services/all-in-one.js

test: build eslint deps imports
	node scripts/test/run.mjs

# ESLint: typescript-eslint's rules, lines of at most 140 characters.
eslint: install
	npx eslint .

# package.json declares what the code imports and nothing else, and what the services run on is a
# dependency (the image installs those only): knip, configured in knip.jsonc.
deps: install
	npx knip --dependencies
	npx knip --strict --dependencies

# The import directions and the cycles dependency-cruiser forbids (.dependency-cruiser.mjs): each
# violation names its rule, the importing file or folder and the imported one.
imports: install
	node scripts/lint/imports.mjs

# Lays out every source file the one way (prettier); `make eslint` then finds only what it cannot fix.
format: install
	npx prettier --write --log-level warn "**/*.{ts,tsx,mjs,js}"

lint: eslint deps imports
	node scripts/generate/index.mjs --check
	npx redocly lint --format=stylish openapi/engine.yaml openapi/gateway.yaml openapi/generated/engine.openapi.json openapi/generated/gateway.openapi.json
	npx tsc -p . --noEmit
	npx tsc -p console

bench: build
	node scripts/bench/run.mjs

clean:
	rm -rf dist sdk/dist .tap
