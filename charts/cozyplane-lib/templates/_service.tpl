{{/* The metrics Service: every pod of the chart (main Deployment and shards). */}}
{{- define "cozyplane-lib.service" -}}
{{- if .Values.metrics.service.enabled }}
apiVersion: v1
kind: Service
metadata:
  name: {{ include "cozyplane-lib.metricsServiceName" . }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "cozyplane-lib.labels" . | nindent 4 }}
spec:
  selector:
    {{- include "cozyplane-lib.componentSelector" . | nindent 4 }}
  ports:
  - name: metrics
    port: {{ .Values.metrics.service.port }}
    targetPort: metrics
{{- end }}
{{- end -}}

{{/*
PodDisruptionBudgets: one per Deployment (main and each shard) when
replicas > 1 or podDisruptionBudget.enabled. A voluntary eviction (a node
drain) then never takes the last replica of a Deployment.
*/}}
{{- define "cozyplane-lib.pdb" -}}
{{- if or .Values.podDisruptionBudget.enabled (gt (int .Values.replicas) 1) }}
{{- $shards := (hasKey .Values "shards") | ternary (.Values.shards | default list) list }}
{{- range $shard := prepend $shards "" }}
{{- $name := include "cozyplane-lib.name" $ }}
{{- $selector := include "cozyplane-lib.selector" $ | fromYaml }}
{{- if $shard }}
{{- $name = printf "%s-shard-%s" $name $shard | trunc 63 | trimSuffix "-" }}
{{- $_ := set $selector "app.kubernetes.io/name" $name }}
{{- end }}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ $name }}
  namespace: {{ $.Release.Namespace }}
  labels:
    {{- include "cozyplane-lib.labels" $ | nindent 4 }}
spec:
  {{- if $.Values.podDisruptionBudget.minAvailable }}
  minAvailable: {{ $.Values.podDisruptionBudget.minAvailable }}
  {{- else }}
  maxUnavailable: {{ $.Values.podDisruptionBudget.maxUnavailable | default 1 }}
  {{- end }}
  selector:
    matchLabels:
      {{- toYaml $selector | nindent 6 }}
{{- end }}
{{- end }}
{{- end -}}

{{/*
NetworkPolicy (opt-in): the controller's pods may reach only the API server
(and what networkPolicy.extraEgress adds); they accept connections only on
the metrics and health ports, from networkPolicy.metricsFrom (default: any
source).
*/}}
{{- define "cozyplane-lib.networkpolicy" -}}
{{- if .Values.networkPolicy.enabled }}
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ include "cozyplane-lib.name" . }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "cozyplane-lib.labels" . | nindent 4 }}
spec:
  podSelector:
    matchLabels:
      {{- include "cozyplane-lib.componentSelector" . | nindent 6 }}
  policyTypes: [Ingress, Egress]
  ingress:
  - ports:
    - port: metrics
      protocol: TCP
    - port: health
      protocol: TCP
    {{- with .Values.networkPolicy.metricsFrom }}
    from:
      {{- toYaml . | nindent 6 }}
    {{- end }}
  egress:
  - ports:
    {{- range .Values.networkPolicy.apiServer.ports }}
    - port: {{ . }}
      protocol: TCP
    {{- end }}
    {{- with .Values.networkPolicy.apiServer.cidrs }}
    to:
    {{- range . }}
    - ipBlock:
        cidr: {{ . }}
    {{- end }}
    {{- end }}
  {{- with .Values.networkPolicy.extraEgress }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end }}
{{- end -}}
