# One image per controller:
#   docker build --build-arg CONTROLLER=helm -t ghcr.io/cozyplane/helm:0.1.0 .
# CONTROLLER is a folder under controllers/. The result is a static binary on
# distroless/static, running as a non-root user with no shell.
FROM golang:1.26 AS build
ARG CONTROLLER
WORKDIR /src
COPY . .
RUN test -n "${CONTROLLER}" && test -f "controllers/${CONTROLLER}/main.go" \
 && cd "controllers/${CONTROLLER}" \
 && CGO_ENABLED=0 GOWORK=off go build -trimpath -ldflags="-s -w" -o /out/manager .

FROM gcr.io/distroless/static:nonroot
COPY --from=build /out/manager /manager
USER 65532:65532
ENTRYPOINT ["/manager"]
