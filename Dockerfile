# syntax=docker/dockerfile:1
# The scheduler's image for those who build with Docker; `make image` builds the same image
# from Go modules only (hack/image), and its test keeps what this file says about the
# entrypoint and the user in step with it.
#
#   docker buildx build --platform linux/amd64,linux/arm64 \
#     --build-arg VERSION=0.1.0 --build-arg COMMIT=$(git rev-parse HEAD) -t kai-scheduler:0.1.0 .
FROM --platform=$BUILDPLATFORM golang:1.26 AS build
ARG TARGETOS TARGETARCH VERSION COMMIT
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath -buildvcs=false \
      -ldflags "-s -w -buildid= \
        -X github.com/kai-minruntime/kai-scheduler/pkg/version.Version=${VERSION} \
        -X github.com/kai-minruntime/kai-scheduler/pkg/version.Commit=${COMMIT}" \
      -o /out/kai-scheduler ./cmd/kai-scheduler

FROM gcr.io/distroless/static:nonroot
ARG VERSION COMMIT
LABEL org.opencontainers.image.title="kai-scheduler" \
      org.opencontainers.image.source="https://github.com/kai-minruntime/kai-scheduler" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${COMMIT}" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY LICENSE /licenses/kai-scheduler/LICENSE
COPY --from=build /out/kai-scheduler /usr/local/bin/kai-scheduler
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/kai-scheduler"]
