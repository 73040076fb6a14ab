{{/* The controller's ServiceAccount. */}}
{{- define "cozyplane-lib.serviceaccount" -}}
{{- if .Values.serviceAccount.create }}
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ include "cozyplane-lib.serviceAccountName" . }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "cozyplane-lib.labels" . | nindent 4 }}
  {{- with .Values.serviceAccount.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
{{- end -}}

{{/*
Leader election: Leases in the release namespace only. The main Deployment
and every shard elect their leaders through their own Lease.
*/}}
{{- define "cozyplane-lib.leader-election" -}}
{{- if and .Values.rbac.create .Values.leaderElection.enabled }}
# Leader election: a Lease in the release namespace only.
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ include "cozyplane-lib.name" . }}-leader-election
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "cozyplane-lib.labels" . | nindent 4 }}
rules:
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  verbs: [get, create, update]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ include "cozyplane-lib.name" . }}-leader-election
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "cozyplane-lib.labels" . | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ include "cozyplane-lib.name" . }}-leader-election
subjects:
- kind: ServiceAccount
  name: {{ include "cozyplane-lib.serviceAccountName" . }}
  namespace: {{ .Release.Namespace }}
{{- end }}
{{- end -}}

{{/*
Metrics behind authentication (metrics.secure, the --metrics-secure flag):
the controller asks the API server whether a scraper's bearer token is valid
(TokenReview) and may get /metrics (SubjectAccessReview), so it may create
both; the metrics-reader ClusterRole is what a scraper needs, bound to it by
metrics.readers (or by hand, e.g. to Prometheus' ServiceAccount).
*/}}
{{- define "cozyplane-lib.metrics-auth" -}}
{{- if and .Values.rbac.create .Values.metrics.secure }}
# Checking the scrapers of the secure metrics endpoint: create-only reviews, which read nothing stored.
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ include "cozyplane-lib.name" . }}-metrics-auth
  labels:
    {{- include "cozyplane-lib.labels" . | nindent 4 }}
rules:
- apiGroups: [authentication.k8s.io]
  resources: [tokenreviews]
  verbs: [create]
- apiGroups: [authorization.k8s.io]
  resources: [subjectaccessreviews]
  verbs: [create]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {{ include "cozyplane-lib.name" . }}-metrics-auth
  labels:
    {{- include "cozyplane-lib.labels" . | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {{ include "cozyplane-lib.name" . }}-metrics-auth
subjects:
- kind: ServiceAccount
  name: {{ include "cozyplane-lib.serviceAccountName" . }}
  namespace: {{ .Release.Namespace }}
---
# What a scraper of the metrics needs.
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ include "cozyplane-lib.name" . }}-metrics-reader
  labels:
    {{- include "cozyplane-lib.labels" . | nindent 4 }}
rules:
- nonResourceURLs: [/metrics]
  verbs: [get]
{{- with .Values.metrics.readers }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {{ include "cozyplane-lib.name" $ }}-metrics-reader
  labels:
    {{- include "cozyplane-lib.labels" $ | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {{ include "cozyplane-lib.name" $ }}-metrics-reader
subjects:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}
{{- end -}}
