# Build: docker build --build-arg REVISION=$(git rev-parse HEAD) -t eventcal:0.30.0 .
#        (--build-arg VERSION=0.30.1-rc.1 links another version in; without
#        it the binary reports the release the source is, config.Version)
# Run:   docker run --read-only --tmpfs /tmp -p 8080:8080 -v eventcal-data:/data eventcal
#
# The binary is static (CGO_ENABLED=0: the embedded SQLite store and Bleve
# are pure Go; the time zone database is compiled in), so the final stage is
# distroless: no shell, no package manager, a non-root user. The container
# health check therefore uses the binary's own "healthcheck" command.
#
# Base images are pinned: the Go toolchain to the go.mod version, the
# runtime to Debian 12's distroless static image. Bump them deliberately.
#
# Only instructions the classic builder knows too: no "# syntax=" line, no
# RUN --mount, no heredocs, no COPY --chmod or --link (DOCKER_BUILDKIT=0
# docker build, and docker-compose 1.x with Debian's docker.io 20.10,
# build it as BuildKit does; config/deploy_test.go checks this file).

FROM golang:1.26.8-bookworm AS build
WORKDIR /src
ENV CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-mod=readonly
# The modules first, in a layer of their own: a change to the sources
# reuses it, and only a change to go.mod or go.sum downloads again. It
# holds every module of the graph, the test-only ones (FerretDB,
# kin-openapi) too: the build stage is discarded, only the binary is kept.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The build context has no .git (.dockerignore), so the toolchain cannot
# stamp the revision: it is linked in (-X), as is VERSION when given, and
# "eventcal --version", /healthz and the eventcal_build_info metric report
# them. Declared here, after the download: a RUN after an ARG is rebuilt
# when its value changes.
ARG VERSION=
ARG REVISION=unknown
RUN go build -trimpath -o /out/eventcal \
      -ldflags "-s -w ${VERSION:+-X github.com/calendar/eventcal/config.Version=${VERSION}} -X github.com/calendar/eventcal/app/api.buildRevision=${REVISION}" . \
 && mkdir -p /out/data /out/keys

FROM gcr.io/distroless/static-debian12:nonroot
ARG VERSION=
ARG REVISION=unknown
LABEL org.opencontainers.image.title="eventcal" \
      org.opencontainers.image.description="Event-calendar REST service (MongoDB or SQLite store, Meilisearch or Bleve index)" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.base.name="gcr.io/distroless/static-debian12:nonroot"
COPY --from=build /out/eventcal /usr/local/bin/eventcal
# An empty /data owned by the non-root user (65532): a named volume mounted
# there starts with this ownership, so the service can write to it. Nothing
# else is written: the image runs with a read-only root file system
# (docker run --read-only --tmpfs /tmp; docker-compose.yml sets read_only).
COPY --from=build --chown=65532:65532 /out/data /data
# /keys holds the scoped Meilisearch key that "eventcal meili-key" writes
# and the service reads (MEILI_API_KEY_FILE; docker-compose.yml mounts a
# volume here, which starts with this ownership).
COPY --from=build --chown=65532:65532 /out/keys /keys
ENV DATA_DIR=/data \
    LISTEN_ADDR=:8080 \
    TMPDIR=/tmp
VOLUME ["/data"]
EXPOSE 8080
USER 65532:65532
# SIGTERM starts the drain (/readyz 503, DRAIN_DELAY), then the shutdown
# (SHUTDOWN_TIMEOUT): give "docker stop -t" more than both together.
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["/usr/local/bin/eventcal", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/eventcal"]
CMD ["serve"]
