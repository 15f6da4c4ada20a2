# agentbridge — developer entry points. `make run` runs the bridge, `make test` runs every test.
CLAUDE_VERSION := 2.1.332
# Gemini CLI, the real ACP agent of the end-to-end tests (agents.*.kind: acp; docs/agents.md).
GEMINI_VERSION := 0.61.0
# codex-acp (Codex over ACP), the second real ACP agent of the end-to-end tests.
CODEX_ACP_VERSION := 0.16.0
# OpenCode (opencode acp), the third real ACP agent of the end-to-end tests.
OPENCODE_VERSION := 1.18.33
AXE_VERSION    := 4.14.1
TOOLS          := $(CURDIR)/.tools
export PATH    := $(TOOLS)/node_modules/.bin:$(PATH)
export GOTOOLCHAIN := local
# The first cgo build of go-sqlite3 takes about 90 s (`make build` says so); later builds are cached.
export CGO_ENABLED := 1

.PHONY: run test test-busy build claude gemini codex-acp opencode axe sandbox postgres bench bench-micro image-test mutants cli-check cli-capture

# Says what it builds before a build that has work to do (bin/bridge missing or older than a file it is built from),
# and that the first one compiles SQLite (go-sqlite3 not in Go's build cache yet: about 90 s of silence).
build:
	@if [ "$$(go list -f '{{.Stale}}' github.com/mattn/go-sqlite3 2>/dev/null)" = true ]; then \
		echo "building bin/bridge (the first build compiles SQLite: about 90 s)…"; \
	elif [ ! -x bin/bridge ] || [ -n "$$(find . \( -path ./.tools -o -path ./.git -o -path ./bin -o -path ./data -o -path ./workspace \) -prune \
		-o -type f ! -name '*_test.go' \( -name '*.go' -o -name go.mod -o -name go.sum -o -path '*/static/*' -o -path '*/templates/*' -o -name '*.sql' \) \
		-newer bin/bridge -print 2>/dev/null | head -n 1)" ]; then \
		echo "building bin/bridge…"; \
	fi
	@go build -o bin/bridge ./cmd/bridge

# Runs the bridge with ./bridge.yaml. A fresh checkout has none: the minimal config (`bridge example-config
# -minimal`: the web console only) is written first. Without ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN in
# the environment the bridge runs in demo mode (`bridge run -demo`: the built-in scripted model, no account,
# nothing leaves the machine); `make run DEMO=1` / `make run DEMO=0` force it either way.
DEMO := auto
run: build claude sandbox
	@if [ ! -f bridge.yaml ]; then \
		./bin/bridge example-config -minimal > bridge.yaml.tmp && mv bridge.yaml.tmp bridge.yaml; \
		echo "Wrote bridge.yaml: the web console only. Add Slack, Discord or WhatsApp bots from 'bin/bridge example-config'."; \
	fi
	@demo='$(DEMO)'; \
	if [ "$$demo" = auto ]; then \
		if [ -n "$${ANTHROPIC_API_KEY}$${CLAUDE_CODE_OAUTH_TOKEN}" ]; then demo=0; else demo=1; fi; \
	fi; \
	if [ "$$demo" = 1 ]; then \
		exec ./bin/bridge run -demo -config bridge.yaml; \
	fi; \
	exec ./bin/bridge run -config bridge.yaml

# Installs the pinned Claude Code CLI into .tools (no root needed) unless that version is already there;
# .tools comes first on PATH, so tests always run the pinned CLI whatever else is installed.
claude:
	@if [ "$$("$(TOOLS)/node_modules/.bin/claude" --version 2>/dev/null | cut -d' ' -f1)" != "$(CLAUDE_VERSION)" ]; then \
		echo "installing @anthropic-ai/claude-code@$(CLAUDE_VERSION) into .tools"; \
		npm install --silent --no-fund --no-audit --prefix "$(TOOLS)" @anthropic-ai/claude-code@$(CLAUDE_VERSION); \
	fi
	@claude --version

# Installs the pinned Gemini CLI into .tools unless that version is already there: TestSlackE2EGeminiACP
# drives it as an agent of kind acp (gemini --acp) against a fake Gemini API on loopback.
gemini:
	@if [ "$$("$(TOOLS)/node_modules/.bin/gemini" --version 2>/dev/null)" != "$(GEMINI_VERSION)" ]; then \
		echo "installing @google/gemini-cli@$(GEMINI_VERSION) into .tools"; \
		npm install --silent --no-fund --no-audit --prefix "$(TOOLS)" @google/gemini-cli@$(GEMINI_VERSION); \
	fi
	@gemini --version

# Installs the pinned codex-acp into .tools unless that version is there: TestSlackE2ECodexACP drives it
# against a fake Responses API on loopback. Its npm package carries the platform's binary.
codex-acp:
	@if [ "$$(node -p 'require("$(TOOLS)/node_modules/@zed-industries/codex-acp/package.json").version' 2>/dev/null)" != "$(CODEX_ACP_VERSION)" ]; then \
		echo "installing @zed-industries/codex-acp@$(CODEX_ACP_VERSION) into .tools"; \
		npm install --silent --no-fund --no-audit --prefix "$(TOOLS)" @zed-industries/codex-acp@$(CODEX_ACP_VERSION); \
	fi

# Installs the pinned OpenCode into .tools unless that version is there: TestSlackE2EOpenCodeACP drives it
# (opencode acp) against a fake Responses API on loopback. Its npm package carries the platform's binary.
opencode:
	@if [ "$$("$(TOOLS)/node_modules/.bin/opencode" --version 2>/dev/null)" != "$(OPENCODE_VERSION)" ]; then \
		echo "installing opencode-ai@$(OPENCODE_VERSION) into .tools"; \
		npm install --silent --no-fund --no-audit --prefix "$(TOOLS)" opencode-ai@$(OPENCODE_VERSION); \
	fi
	@opencode --version

# Installs axe-core into .tools for the web console's accessibility test (TestWebConsoleUI injects
# .tools/node_modules/axe-core/axe.min.js into the pages through chromedp).
axe:
	@if [ "$$(node -p 'require("$(TOOLS)/node_modules/axe-core/package.json").version' 2>/dev/null)" != "$(AXE_VERSION)" ]; then \
		echo "installing axe-core@$(AXE_VERSION) into .tools"; \
		npm install --silent --no-fund --no-audit --prefix "$(TOOLS)" axe-core@$(AXE_VERSION); \
	fi

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

# The store's tests run every case on PostgreSQL as well as SQLite: store/pgtest starts a throwaway
# server (Unix socket only) from Debian's postgresql package. Installed with apt when run as root on
# Debian/Ubuntu; otherwise this says what to install, and those tests skip meanwhile (under CI they fail).
postgres:
	@if [ "$$(uname -s)" = Linux ] && [ -z "$$PG_BIN" ] && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			echo "installing postgresql (the store's PostgreSQL tests)"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql; \
		else \
			echo "PostgreSQL is missing: install the package 'postgresql' (e.g. sudo apt-get install postgresql), or set PG_BIN" \
				"to the directory of its initdb; the PostgreSQL tests skip until then" >&2; \
		fi; \
	fi

# Most end-to-end tests wait on CLIs, fakes and outages rather than compute: three packages and four
# parallel tests at a time on two cores (the default is one each per core) roughly halve the run.
GO_TEST_FLAGS := -count=1 -p 3 -parallel 4
test: claude gemini codex-acp opencode axe sandbox postgres
	go vet ./...
	go test $(GO_TEST_FLAGS) -timeout 60m ./...

# `make test` with one busy loop per core beside it the whole time (stopped however the run ends): a test
# that waits on timing instead of an event fails here before it fails CI on a loaded machine.
# `make test-busy TEST_ARGS='-count=3 ./agent/pool ./store/coord'` runs only those packages.
TEST_ARGS := ./...
test-busy: claude gemini codex-acp opencode axe sandbox postgres
	@n=$$(nproc); pids=""; for i in $$(seq $$n); do (while :; do :; done) & pids="$$pids $$!"; done; \
	trap 'kill $$pids 2>/dev/null' EXIT INT TERM; \
	echo "$$n busy loops running beside the tests"; \
	go test $(GO_TEST_FLAGS) -timeout 90m $(TEST_ARGS)

# Builds the Dockerfile with podman from locally made bases (no registry) and checks the image:
# /healthz, non-root user, the pinned CLI, bwrap inside, SIGTERM. Needs root, podman, runc, mmdebstrap.
image-test:
	bash .ci/image-test

# One table (BENCHMARKS.md "Speed"): first reply, follow-up, the CLI's own figures in the same run, Slack
# calls per quick and per 30 s streamed turn, bridge CPU and RSS, new threads back to back and 2 s apart,
# resume after a restart (warm resume) and after eviction, decode throughput. Takes a few minutes.
bench: claude
	@out=$$(mktemp); BENCH_TABLE=1 go test ./cmd/bridge -run '^TestBenchTable$$' -count=1 -v -timeout 30m > $$out 2>&1; rc=$$?; \
	if [ $$rc -eq 0 ]; then sed -n '/^## agentbridge bench/,/^[^|#]/p' $$out | grep -E '^(\||## )'; else cat $$out; fi; rm -f $$out; exit $$rc

# Every go benchmark of the repository, 20 iterations each.
bench-micro: claude
	go test -run '^$$' -bench . -benchtime 20x ./...

# The scale benchmarks at their own sizes: 2,000 idle conversations (light scripted agent), and one run of
# 100 (and 10) concurrent conversations through the binary with the real CLI, which takes minutes.
bench-scale: claude
	go test -run '^$$' -bench IdleConversations -benchtime 2000x ./bridges
	go test -run '^$$' -bench ConcurrentConversations -benchtime 1x -timeout 60m ./cmd/bridge

# Applies each single-point break of the mutants.txt files (next to the code they break) to a temporary
# copy of the checkout and runs the tests named for it: every break must make a test fail (KILLED).
# Not part of `make test`. `make mutants ARGS='-only store'` runs the breaks of one package.
mutants:
	go run ./cmd/mutants $(ARGS)

# Adopting another Claude Code CLI: `make cli-check VERSION=x.y.z` installs that version into
# .cli-check/x.y.z (the pinned one in .tools stays), captures the scripted scenarios of cmd/clicheck with
# it against the fake model, runs the protocol tests and a representative set of end-to-end tests with it
# first on PATH, then prints the wire differences against the pinned version's captures
# (agent/streamjson/testdata/wire/<pinned>): frame kinds and field paths seen only on one side, both ways,
# and fields whose value types changed. The diff is printed also when tests fail; the exit status is the
# tests'. `make cli-capture` (re)writes the pinned version's captures.
CLI_CHECK_DIR   := $(CURDIR)/.cli-check
WIRE_DIR        := agent/streamjson/testdata/wire
CLI_CHECK_AGENT := ^(TestSession(HelloAndFollowUp|MessageMidTurn|PermissionAllow|PermissionDeny|AlwaysAllow|AskUserQuestion|Interrupt|BackgroundTask|KillAndResume|ControlRequests|ResumeUnknown)|TestCLI.*)$$
CLI_CHECK_E2E   := ^(TestSlackE2E(Conversation|Approvals|QuestionCard|Stop|WarmResumeAfterRestart|LongAnswerSplit)|TestDiscordE2EConversation)$$
cli-check: claude
	@test -n "$(VERSION)" || { echo "usage: make cli-check VERSION=x.y.z" >&2; exit 2; }
	@bin="$(CLI_CHECK_DIR)/$(VERSION)/node_modules/.bin"; \
	if [ "$$("$$bin/claude" --version 2>/dev/null | cut -d' ' -f1)" != "$(VERSION)" ]; then \
		echo "installing @anthropic-ai/claude-code@$(VERSION) into .cli-check/$(VERSION)"; \
		npm install --silent --no-fund --no-audit --prefix "$(CLI_CHECK_DIR)/$(VERSION)" @anthropic-ai/claude-code@$(VERSION) || exit 1; \
	fi; \
	[ -d "$(WIRE_DIR)/$(CLAUDE_VERSION)" ] || $(MAKE) --no-print-directory cli-capture || exit 1; \
	rm -rf "$(CLI_CHECK_DIR)/$(VERSION)/wire"; rc=0; \
	go run ./cmd/clicheck capture -claude "$$bin/claude" -out "$(CLI_CHECK_DIR)/$(VERSION)/wire" || rc=1; \
	log="$(CLI_CHECK_DIR)/$(VERSION)/tests.log"; \
	PATH="$$bin:$$PATH" sh -c 'claude --version && go test -count=1 ./agent/streamjson ./agent/fakemodel && \
		go test -count=1 -v -timeout 20m ./agent -run "$(CLI_CHECK_AGENT)" && \
		go test -count=1 -v -timeout 30m -parallel 4 ./cmd/bridge -run "$(CLI_CHECK_E2E)"' > "$$log" 2>&1 || rc=1; \
	grep -E '^(--- |ok |FAIL|[0-9.]+ \(Claude Code\))' "$$log"; [ $$rc -eq 0 ] || echo "(full output: $$log)"; \
	echo; echo "## wire: pinned $(CLAUDE_VERSION) against $(VERSION)"; \
	go run ./cmd/clicheck diff "$(WIRE_DIR)/$(CLAUDE_VERSION)" ".cli-check/$(VERSION)/wire"; \
	if [ $$rc -ne 0 ]; then echo "cli-check $(VERSION): FAILED (see above)"; else echo "cli-check $(VERSION): tests passed"; fi; exit $$rc

cli-capture: claude
	rm -rf "$(WIRE_DIR)/$(CLAUDE_VERSION)"
	go run ./cmd/clicheck capture -claude "$(TOOLS)/node_modules/.bin/claude" -out "$(WIRE_DIR)/$(CLAUDE_VERSION)"
