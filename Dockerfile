# Multi-stage build: fetch the browser assets (Datastar from its Go module,
# ECharts from npm), build a static binary, ship it alone. The image serves
# everything itself; nothing is fetched at run time.
FROM golang:1.26-bookworm AS build
RUN apt-get update && apt-get install -y --no-install-recommends nodejs npm make && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY go.mod go.sum package.json package-lock.json ./
RUN go mod download
COPY . .
RUN make build

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /src/outlierlab /outlierlab
EXPOSE 8080
# serve listens on :$PORT when no -addr is given, so `docker run -e PORT=9090`
# moves it; the health check asks the same port.
ENV PORT=8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=5s CMD ["/outlierlab", "healthcheck"]
ENTRYPOINT ["/outlierlab", "serve"]
