# One image per controller (docs/install.md, Images; `make images` builds them all):
#   docker build --build-arg CONTROLLER=helm -t ghcr.io/cozyplane/helm:0.1.0 .
# CONTROLLER is a folder under controllers/. The result is a static binary on
# distroless/static, running as a non-root user with no shell.
ARG GO_VERSION=1.26
FROM golang:${GO_VERSION} AS build
ARG CONTROLLER
WORKDIR /src
COPY . .
RUN if [ -z "${CONTROLLER}" ] || [ ! -f "controllers/${CONTROLLER}/main.go" ]; then \
      echo "set --build-arg CONTROLLER to one of: $(ls controllers | tr '\n' ' ')" >&2; exit 1; fi \
 && cd "controllers/${CONTROLLER}" \
 && CGO_ENABLED=0 GOWORK=off GOTOOLCHAIN=local go build -trimpath -ldflags="-s -w" -o /out/manager .

FROM gcr.io/distroless/static:nonroot
ARG CONTROLLER
LABEL org.opencontainers.image.title="cozyplane-${CONTROLLER}" \
      org.opencontainers.image.description="The ${CONTROLLER} controller of cozyplane"
COPY --from=build /out/manager /manager
USER 65532:65532
ENTRYPOINT ["/manager"]
