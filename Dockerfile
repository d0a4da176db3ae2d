# Build: docker build -t eventcal .
# Run:   docker run -p 8080:8080 -v eventcal-data:/data eventcal
#
# The binary is static (CGO_ENABLED=0: the embedded SQLite store and Bleve
# are pure Go; the time zone database is compiled in), so the final stage is
# distroless: no shell, no package manager, a non-root user. The container
# health check therefore uses the binary's own "healthcheck" command.

FROM golang:1.26 AS build
WORKDIR /src
ENV CGO_ENABLED=0 GOTOOLCHAIN=auto
# Dependencies first, so that source changes do not refetch modules.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN go build -trimpath -ldflags "-s -w" -o /out/eventcal . \
 && mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/eventcal /usr/local/bin/eventcal
# An empty /data owned by the non-root user (65532): a named volume mounted
# there starts with this ownership, so the service can write to it.
COPY --from=build --chown=65532:65532 /out/data /data
ENV DATA_DIR=/data \
    LISTEN_ADDR=:8080
VOLUME ["/data"]
EXPOSE 8080
USER 65532:65532
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["/usr/local/bin/eventcal", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/eventcal"]
CMD ["serve"]
