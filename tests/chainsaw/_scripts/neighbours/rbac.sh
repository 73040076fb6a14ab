#!/usr/bin/env bash
# Gives the simulated neighbours (lib.sh) the RBAC a real install gives them,
# once per control plane, before the suite runs (hack/e2e.sh; on another
# cluster run it with its KUBECONFIG): a status or Secret the real controller
# could not write is refused here too. Idempotent. The identities follow
# FLUX_NAMESPACE, FLUX_ALL_IN_ONE, TOFU_NAMESPACE and CERT_MANAGER_NAMESPACE
# (lib.sh); the namespaces and ServiceAccounts themselves are not created:
# impersonation needs neither.
#
#   Flux          helm-controller's ServiceAccount bound to cluster-admin, as
#                 Flux's own manifests bind it (cluster-reconciler) and
#                 Cozystack's all-in-one Flux binds flux
#   tofu-controller  its chart's ClusterRoles (flux-iac/tofu-controller
#                 v0.16.5, charts/tofu-controller/templates/rbac.yaml), the
#                 rules on what the suite plays: Terraform objects and their
#                 status, Secrets and ConfigMaps; and the runner's ClusterRole
#                 tf-runner-role, which the terraform controller binds to
#                 each platform namespace's runner ServiceAccount
#   cert-manager  its chart's controller ClusterRoles for Issuers and
#                 Certificates (cert-manager/cert-manager v1.21.1,
#                 deploy/charts/cert-manager/templates/rbac.yaml)
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

kubectl apply --server-side --field-manager=e2e-neighbours -f - >/dev/null <<EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: e2e-neighbours-flux
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}
subjects:
- {kind: ServiceAccount, name: ${NB_HELM_SA}, namespace: ${NB_FLUX_NS}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: e2e-neighbours-tofu-manager
rules:
- apiGroups: [infra.contrib.fluxcd.io]
  resources: [terraforms]
  verbs: [create, delete, get, list, patch, update, watch]
- apiGroups: [infra.contrib.fluxcd.io]
  resources: [terraforms/finalizers]
  verbs: [create, delete, get, patch, update]
- apiGroups: [infra.contrib.fluxcd.io]
  resources: [terraforms/status]
  verbs: [get, patch, update]
- apiGroups: [""]
  resources: [configmaps, secrets]
  verbs: [get, list, watch, create, update, patch, delete]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: e2e-neighbours-tofu-manager
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: e2e-neighbours-tofu-manager}
subjects:
- {kind: ServiceAccount, name: tofu-controller, namespace: ${NB_TOFU_NS}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: tf-runner-role
rules:
- apiGroups: [""]
  resources: [configmaps, secrets]
  verbs: [get, list, watch, create, update, patch, delete]
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  verbs: [get, list, watch, create, update, patch, delete]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: e2e-neighbours-cert-manager
rules:
- apiGroups: [cert-manager.io]
  resources: [issuers, issuers/status]
  verbs: [update, patch]
- apiGroups: [cert-manager.io]
  resources: [certificates, certificates/status, certificaterequests, certificaterequests/status]
  verbs: [update, patch]
- apiGroups: [cert-manager.io]
  resources: [certificates, certificaterequests, clusterissuers, issuers]
  verbs: [get, list, watch]
- apiGroups: [""]
  resources: [secrets]
  verbs: [get, list, watch, create, update, delete, patch]
- apiGroups: [""]
  resources: [events]
  verbs: [create, patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: e2e-neighbours-cert-manager
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: e2e-neighbours-cert-manager}
subjects:
- {kind: ServiceAccount, name: cert-manager, namespace: ${NB_CERT_MANAGER_NS}}
EOF
