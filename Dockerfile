# Multi-stage build: fetch the browser assets (Datastar from its Go module,
# ECharts from npm), build a static binary, ship it alone. The image serves
# everything itself; nothing is fetched at run time. Image names are fully
# qualified (podman refuses short names).
FROM docker.io/library/golang:1.26-bookworm AS build
RUN apt-get update && apt-get install -y --no-install-recommends nodejs npm make && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY go.mod go.sum package.json package-lock.json Makefile ./
COPY web/assets/ web/assets/
RUN go mod download
# The assets in their own layer, before the sources: a source change does
# not fetch ECharts again (only a change of the pins above does). The
# build context never has them (.dockerignore), so COPY . . keeps these.
RUN make assets
COPY . .
# The version the binary reports (outlierlab version, /metrics, the first
# log line): the build context has no .git, so it is passed in, as the
# README does: docker build --build-arg VERSION=$(git describe --tags
# --always --dirty) -t outlierlab . Without it: "(devel)".
ARG VERSION=
RUN make build VERSION="$VERSION"
# The data directory, owned by distroless's nonroot user (65532).
RUN mkdir -p /out/data && chown 65532:65532 /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /src/outlierlab /outlierlab
COPY --from=build --chown=65532:65532 /out/data /data
EXPOSE 8080
# serve listens on :$PORT when no -addr is given, so `docker run -e PORT=9090`
# moves it; the health check asks the same port.
ENV PORT=8080
# The workshops (rooms, answers, recordings) are kept in /data: mount a
# volume there and a restarted container finds them. It is the only place
# serve writes, so the root file system may be read-only (--read-only,
# readOnlyRootFilesystem) with no /tmp.
ENV OUTLIERLAB_DATA_DIR=/data
VOLUME /data
# Liveness: /healthz (the lab is served). Readiness, where the platform
# has it, is `healthcheck -ready` or GET /healthz?ready (the room bus is
# open too).
HEALTHCHECK --interval=30s --timeout=5s --start-period=5s CMD ["/outlierlab", "healthcheck"]
ENTRYPOINT ["/outlierlab", "serve"]
