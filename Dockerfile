# syntax=docker/dockerfile:1
# Build: cgo is needed for github.com/mattn/go-sqlite3.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=1 go build -trimpath -ldflags "-s -w" -o /out/bridge ./cmd/bridge

# Runtime: Debian slim with Node.js for the Claude Code CLI, non-root user, /data volume.
FROM node:22-bookworm-slim
ARG CLAUDE_VERSION=2.1.330
RUN npm install -g --no-fund --no-audit @anthropic-ai/claude-code@${CLAUDE_VERSION} \
 && apt-get update && apt-get install -y --no-install-recommends ca-certificates git bubblewrap \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --create-home --uid 10001 bridge \
 && mkdir -p /data /workspace && chown bridge:bridge /data /workspace
COPY --from=build /out/bridge /usr/local/bin/bridge
USER bridge
WORKDIR /data
VOLUME ["/data"]
ENTRYPOINT ["bridge"]
CMD ["run", "-config", "/etc/bridge.yaml"]
