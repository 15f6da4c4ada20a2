# syntax=docker/dockerfile:1
# agentbridge image: the bridge, the pinned Claude Code CLI (its native binary, no Node.js at run time),
# bubblewrap for the agent sandbox, git; runs as the unprivileged user "bridge" with its data in /data.
#
#   docker build -t agentbridge .
#   docker run -v $PWD/bridge.yaml:/etc/bridge.yaml -v bridge-data:/data -p 127.0.0.1:9464:9464 agentbridge
#
# Base images are build arguments, so the image can be built from local bases without a registry
# (see `make image-test`).
ARG GO_IMAGE=golang:1.26-bookworm
ARG DEBIAN_IMAGE=debian:bookworm-slim

# The bridge: cgo is needed for github.com/mattn/go-sqlite3.
FROM ${GO_IMAGE} AS build
# A CA bundle to trust besides the system's (a TLS-inspecting proxy); a path inside the build.
ARG EXTRA_CA_BUNDLE=
WORKDIR /src
COPY go.mod go.sum ./
RUN if [ -n "$EXTRA_CA_BUNDLE" ]; then \
      cat /etc/ssl/certs/ca-certificates.crt "$EXTRA_CA_BUNDLE" > /tmp/ca.pem && export SSL_CERT_FILE=/tmp/ca.pem; \
    fi \
 && GOTOOLCHAIN=local go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=1 GOTOOLCHAIN=local go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" \
      -o /out/bridge ./cmd/bridge

# The Claude Code CLI: its native binary, from the npm registry's platform package (no Node.js needed).
FROM ${DEBIAN_IMAGE} AS cli
ARG CLAUDE_VERSION=2.1.332
ARG TARGETARCH
# A CA bundle to trust besides the system's (a TLS-inspecting proxy); a path inside the build.
ARG EXTRA_CA_BUNDLE=
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates curl \
 && rm -rf /var/lib/apt/lists/*
RUN case "${TARGETARCH:-amd64}" in amd64) arch=x64 ;; arm64) arch=arm64 ;; *) echo "unsupported architecture ${TARGETARCH}" >&2; exit 1 ;; esac \
 && curl -fsSL ${EXTRA_CA_BUNDLE:+--cacert "$EXTRA_CA_BUNDLE"} -o /tmp/cli.tgz \
      "https://registry.npmjs.org/@anthropic-ai/claude-code-linux-${arch}/-/claude-code-linux-${arch}-${CLAUDE_VERSION}.tgz" \
 && tar -xzf /tmp/cli.tgz -C /tmp \
 && install -m 0755 /tmp/package/claude /opt/claude \
 && /opt/claude --version | grep -q "^${CLAUDE_VERSION} "

FROM ${DEBIAN_IMAGE}
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates git bubblewrap \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --create-home --uid 10001 bridge \
 && mkdir -p /data /workspace && chown bridge:bridge /data /workspace
COPY --from=cli /opt/claude /usr/local/bin/claude
COPY --from=build /out/bridge /usr/local/bin/bridge
USER bridge
ENV HOME=/home/bridge
WORKDIR /data
VOLUME ["/data"]
EXPOSE 9464
# The config must listen where this looks (http.listen: 0.0.0.0:9464, the image's example does).
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/9464 && printf 'GET /healthz HTTP/1.0\\r\\n\\r\\n' >&3 && head -n1 <&3 | grep -q ' 200 '"]
# SIGTERM stops the bridge gracefully; agents get up to 30 s to finish: give the container 40 s
# (docker stop -t 40, compose stop_grace_period: 40s).
STOPSIGNAL SIGTERM
ENTRYPOINT ["bridge"]
CMD ["run", "-config", "/etc/bridge.yaml"]
