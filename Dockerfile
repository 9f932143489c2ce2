# gonogo: a static binary on a minimal, non-root image. The image carries no
# agent CLI: to run steps with Claude Code, build FROM this image's binary
# onto an image that has `claude` installed, or use --runner command with an
# agent of your own.
#   docker build -t gonogo .
#   docker run --rm -it -v gonogo-data:/data gonogo demo --auto
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/gonogo ./cmd/gonogo \
 && mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/gonogo /usr/local/bin/gonogo
# The data directory belongs to the nonroot user (uid 65532) so the
# volume mounted there is writable.
COPY --from=build --chown=65532:65532 /out/data /data
ENV GONOGO_DATA_DIR=/data
VOLUME ["/data"]
USER nonroot:nonroot
ENTRYPOINT ["/usr/local/bin/gonogo"]
CMD ["serve"]
