# The operator image (the default target) and the router-proxy image (target router-proxy): static
# binaries on a distroless non-root base.
#   docker build -t llmkube/operator:dev .
#   docker build --target router-proxy -t llmkube/router-proxy:dev .
FROM golang:1.26 AS build
WORKDIR /src
# Dependencies first, so source edits reuse the module cache layer.
COPY go.mod go.sum ./
RUN go mod download
COPY api/ api/
COPY applyconfig/ applyconfig/
COPY cmd/ cmd/
COPY controllers/ controllers/
COPY internal/ internal/
ARG TARGETOS=linux
ARG TARGETARCH=amd64
# VERSION tags the default router-proxy image the operator writes; it must match the chart's appVersion.
ARG VERSION=0.1.0
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -ldflags="-s -w -X github.com/llmkube/operator/internal/version.Version=$VERSION" -o /out/llmkube-operator ./cmd/operator
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -ldflags="-s -w -X github.com/llmkube/operator/internal/version.Version=$VERSION" -o /out/router-proxy ./cmd/router-proxy

# The data plane of a ModelRouter. The operator's Deployment runs it with its args, on a read-only
# root filesystem with /tmp as the only writable path, as a non-root user.
FROM gcr.io/distroless/static-debian12:nonroot AS router-proxy
COPY --from=build /out/router-proxy /router-proxy
USER 65532:65532
ENTRYPOINT ["/router-proxy"]

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/llmkube-operator /llmkube-operator
# 65532 is distroless's nonroot user; the chart's runAsNonRoot and runAsUser agree with it.
USER 65532:65532
ENTRYPOINT ["/llmkube-operator"]
