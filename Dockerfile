# The operator image: a static binary on a distroless-style non-root base.
#   docker build -t llmkube/operator:dev .
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
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -ldflags="-s -w" -o /out/llmkube-operator ./cmd/operator

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/llmkube-operator /llmkube-operator
# 65532 is distroless's nonroot user; the chart's runAsNonRoot and runAsUser agree with it.
USER 65532:65532
ENTRYPOINT ["/llmkube-operator"]
