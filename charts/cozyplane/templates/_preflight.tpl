{{/*
What each component's controller needs the cluster to serve before it can
start: (list COMPONENT API WHAT-INSTALLS-IT). `cozyplane check --pre` and
`cozyplane check` ask the same (cmd/cozyplane/internal/check).
*/}}
{{- define "cozyplane.needs" -}}
{{- $flux := "Flux 2.3 or later (helm-controller: HelmRelease v2)" }}
{{- $gw := "the Gateway API standard channel v1.5 or later (Gateway, HTTPRoute and TLSRoute v1) and a Gateway implementation" }}
{{- $cm := "cert-manager (Issuer and Certificate cert-manager.io/v1)" }}
{{- $needs := list
  (list "helm" "helm.toolkit.fluxcd.io/v2/HelmRelease" $flux)
  (list "lineage" "helm.toolkit.fluxcd.io/v2/HelmRelease" $flux)
  (list "terraform" "infra.contrib.fluxcd.io/v1alpha2/Terraform" "tofu-controller (Terraform infra.contrib.fluxcd.io/v1alpha2)")
  (list "gateway-listeners" "gateway.networking.k8s.io/v1/Gateway" $gw)
  (list "gateway-listeners" "gateway.networking.k8s.io/v1/HTTPRoute" $gw)
  (list "gateway-listeners" "gateway.networking.k8s.io/v1/TLSRoute" $gw)
  (list "gateway-certs" "gateway.networking.k8s.io/v1/Gateway" $gw)
  (list "gateway-certs" "gateway.networking.k8s.io/v1/HTTPRoute" $gw)
  (list "gateway-certs" "gateway.networking.k8s.io/v1/TLSRoute" $gw)
  (list "gateway-certs" "cert-manager.io/v1/Issuer" $cm)
  (list "gateway-certs" "cert-manager.io/v1/Certificate" $cm)
  (list "route-conflicts" "gateway.networking.k8s.io/v1/Gateway" $gw)
  (list "route-conflicts" "gateway.networking.k8s.io/v1/HTTPRoute" $gw)
  (list "route-conflicts" "gateway.networking.k8s.io/v1/TLSRoute" $gw)
}}
{{- toJson $needs }}
{{- end -}}
