# agentbridge — developer entry points. `make run` runs the bridge, `make test` runs every test.
CLAUDE_VERSION := 2.1.330
TOOLS          := $(CURDIR)/.tools
export PATH    := $(TOOLS)/node_modules/.bin:$(PATH)
export GOTOOLCHAIN := local
# The first cgo build of go-sqlite3 takes about 90 s; later builds are cached.
export CGO_ENABLED := 1

.PHONY: run test build claude sandbox bench image-test

build:
	go build -o bin/bridge ./cmd/bridge

# Runs the bridge with ./bridge.yaml; writes the commented example first when it is missing.
run: build claude sandbox
	@if [ ! -f bridge.yaml ]; then \
		./bin/bridge example-config > bridge.yaml; \
		echo "Wrote bridge.yaml from the example: set the tokens it references (see README.md), then run 'make run' again."; \
		exit 2; \
	fi
	./bin/bridge run -config bridge.yaml

# Installs the pinned Claude Code CLI into .tools (no root needed) unless that version is already there;
# .tools comes first on PATH, so tests always run the pinned CLI whatever else is installed.
claude:
	@if [ "$$("$(TOOLS)/node_modules/.bin/claude" --version 2>/dev/null | cut -d' ' -f1)" != "$(CLAUDE_VERSION)" ]; then \
		echo "installing @anthropic-ai/claude-code@$(CLAUDE_VERSION) into .tools"; \
		npm install --silent --no-fund --no-audit --prefix "$(TOOLS)" @anthropic-ai/claude-code@$(CLAUDE_VERSION); \
	fi
	@claude --version

# The agent sandbox needs bubblewrap (Linux). Installed with apt when run as root on Debian/Ubuntu;
# otherwise this says what to install (or set `sandbox: none`, see SECURITY.md).
sandbox:
	@if [ "$$(uname -s)" = Linux ] && ! command -v bwrap >/dev/null; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			echo "installing bubblewrap (the agent sandbox)"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap; \
		else \
			echo "bubblewrap (bwrap) is missing: install the package 'bubblewrap' (e.g. sudo apt-get install bubblewrap)" >&2; exit 1; \
		fi; \
	fi

test: claude sandbox
	go vet ./...
	go test -count=1 -timeout 60m ./...

# Builds the Dockerfile with podman from locally made bases (no registry) and checks the image:
# /healthz, non-root user, the pinned CLI, bwrap inside, SIGTERM. Needs root, podman, runc, mmdebstrap.
image-test:
	bash .ci/image-test

# The scale benchmarks run at their own sizes: 2,000 idle conversations, and one run of
# 100 (and 10) concurrent conversations with the real CLI, which takes minutes.
bench: claude
	go test -run '^$$' -bench . -skip 'IdleConversations|ConcurrentConversations' -benchtime 20x ./...
	go test -run '^$$' -bench IdleConversations -benchtime 2000x ./bridges
	go test -run '^$$' -bench ConcurrentConversations -benchtime 1x -timeout 60m ./cmd/bridge
