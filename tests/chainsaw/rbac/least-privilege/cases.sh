#!/usr/bin/env bash
# The RBAC of each controller's ServiceAccount, as its chart grants it, one
# controller per chainsaw step: cases.sh CONTROLLER. First the verbs the
# controller uses, then what lies outside its concern; each line is one
# SubjectAccessReview (check.sh).
set -euo pipefail
cd "$(dirname "$0")"

case "$1" in
appdef)
  # may
  ./check.sh true create apiextensions.k8s.io customresourcedefinitions "" "" cozystack-appdef
  ./check.sh true patch cozystack.io applicationdefinitions status "" cozystack-appdef
  ./check.sh true list apps.cozystack.io postgreses "" "" cozystack-appdef
  ./check.sh true watch apiregistration.k8s.io apiservices "" "" cozystack-appdef v1alpha1.apps.cozystack.io
  ./check.sh true list apiregistration.k8s.io apiservices "" "" cozystack-appdef v1alpha1.apps.cozystack.io
  # may not
  ./check.sh false get "" secrets "" tenant-x cozystack-appdef
  ./check.sh false patch "" namespaces "" "" cozystack-appdef
  ./check.sh false delete cozystack.io applicationdefinitions "" "" cozystack-appdef
  ./check.sh false list apiregistration.k8s.io apiservices "" "" cozystack-appdef
  ./check.sh false get apiregistration.k8s.io apiservices "" "" cozystack-appdef v1beta1.metrics.k8s.io
  ./check.sh false delete apiregistration.k8s.io apiservices "" "" cozystack-appdef v1alpha1.apps.cozystack.io
  ./check.sh false patch apiregistration.k8s.io apiservices "" "" cozystack-appdef v1alpha1.apps.cozystack.io
  ;;
helm)
  # may
  ./check.sh true create helm.toolkit.fluxcd.io helmreleases "" tenant-x cozystack-helm
  ./check.sh true patch apps.cozystack.io postgreses status tenant-x cozystack-helm
  # may not
  ./check.sh false create gateway.networking.k8s.io gateways "" tenant-x cozystack-helm
  ./check.sh false create infra.contrib.fluxcd.io terraforms "" tenant-x cozystack-helm
  ./check.sh false get "" secrets "" tenant-x cozystack-helm
  ./check.sh false update apiextensions.k8s.io customresourcedefinitions "" "" cozystack-helm
  ./check.sh false get apiregistration.k8s.io apiservices "" "" cozystack-helm v1alpha1.apps.cozystack.io
  ./check.sh false create apps.cozystack.io postgreses "" tenant-x cozystack-helm
  ./check.sh false update apps.cozystack.io postgreses "" tenant-x cozystack-helm
  ./check.sh false update "" namespaces "" "" cozystack-helm
  ;;
terraform)
  # may
  ./check.sh true delete infra.contrib.fluxcd.io terraforms "" tenant-x cozystack-terraform
  ./check.sh true patch apps.cozystack.io vpcs "" tenant-x cozystack-terraform
  # bind on the outputs ClusterRoles, which it binds to itself one namespace
  # at a time for the outputs copies (internal/tfbackend/access.go)
  ./check.sh true bind rbac.authorization.k8s.io clusterroles "" "" cozystack-terraform cozystack-terraform-outputs-reader
  ./check.sh true bind rbac.authorization.k8s.io clusterroles "" "" cozystack-terraform cozystack-terraform-outputs-writer
  # may not: no right on Secrets anywhere until it binds itself there
  ./check.sh false create helm.toolkit.fluxcd.io helmreleases "" tenant-x cozystack-terraform
  ./check.sh false get "" secrets "" tenant-x cozystack-terraform
  ./check.sh false get "" secrets "" kube-system cozystack-terraform
  ./check.sh false list "" secrets "" tenant-x cozystack-terraform
  ./check.sh false watch "" secrets "" tenant-x cozystack-terraform
  ./check.sh false patch "" secrets "" tenant-x cozystack-terraform
  ./check.sh false bind rbac.authorization.k8s.io clusterroles "" "" cozystack-terraform cluster-admin
  ;;
gateway-listeners)
  # may
  ./check.sh true patch gateway.networking.k8s.io gateways "" tenant-x cozystack-gateway-listeners
  ./check.sh true create gateway.networking.k8s.io httproutes "" tenant-x cozystack-gateway-listeners
  ./check.sh true patch gateway.cozystack.io tenantgateways status tenant-x cozystack-gateway-listeners
  ./check.sh true list "" namespaces "" "" cozystack-gateway-listeners
  ./check.sh true watch gateway.networking.k8s.io gatewayclasses "" "" cozystack-gateway-listeners
  # may not
  ./check.sh false delete gateway.networking.k8s.io gateways "" tenant-x cozystack-gateway-listeners
  ./check.sh false patch "" namespaces "" "" cozystack-gateway-listeners
  ./check.sh false patch gateway.networking.k8s.io gatewayclasses "" "" cozystack-gateway-listeners
  ./check.sh false create cert-manager.io certificates "" tenant-x cozystack-gateway-listeners
  ;;
gateway-certs)
  # may
  ./check.sh true patch cert-manager.io issuers "" tenant-x cozystack-gateway-certs
  ./check.sh true delete cert-manager.io certificates "" tenant-x cozystack-gateway-certs
  ./check.sh true patch gateway.cozystack.io tenantgateways status tenant-x cozystack-gateway-certs
  # may not
  ./check.sh false get "" secrets "" tenant-x cozystack-gateway-certs
  ./check.sh false list "" secrets "" tenant-x cozystack-gateway-certs
  ./check.sh false watch "" secrets "" tenant-x cozystack-gateway-certs
  ./check.sh false patch gateway.networking.k8s.io gateways "" tenant-x cozystack-gateway-certs
  ./check.sh false patch "" namespaces "" "" cozystack-gateway-certs
  ;;
ns-labels)
  # may
  ./check.sh true patch "" namespaces "" "" cozystack-ns-labels
  ./check.sh true patch gateway.cozystack.io tenantgateways status tenant-x cozystack-ns-labels
  # may not
  ./check.sh false delete "" namespaces "" "" cozystack-ns-labels
  ./check.sh false create gateway.networking.k8s.io gateways "" tenant-x cozystack-ns-labels
  ./check.sh false get "" secrets "" tenant-x cozystack-ns-labels
  ;;
route-conflicts)
  # may
  ./check.sh true update gateway.networking.k8s.io httproutes status tenant-x cozystack-route-conflicts
  ./check.sh true update gateway.networking.k8s.io tlsroutes status tenant-x cozystack-route-conflicts
  # may not
  ./check.sh false patch "" namespaces "" "" cozystack-route-conflicts
  ./check.sh false update gateway.networking.k8s.io httproutes "" tenant-x cozystack-route-conflicts
  ./check.sh false patch gateway.cozystack.io tenantgateways status tenant-x cozystack-route-conflicts
  ;;
*) echo "unknown controller: $1"; exit 2 ;;
esac
