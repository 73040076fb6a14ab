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
