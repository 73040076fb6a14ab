{{/*
Names and labels. Objects are named <release>-<chart>: release "cozystack"
gives cozystack-helm. A shard's objects add -shard-<shard>.
*/}}
{{- define "cozyplane-lib.name" -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels of every object of a controller chart. */}}
{{- define "cozyplane-lib.labels" -}}
app.kubernetes.io/name: {{ include "cozyplane-lib.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/part-of: cozyplane
app.kubernetes.io/component: {{ .Chart.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* Selector of the main Deployment's pods (immutable: never change it). */}}
{{- define "cozyplane-lib.selector" -}}
app.kubernetes.io/name: {{ include "cozyplane-lib.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/*
Selector of every pod of the chart, the main Deployment's and each shard's:
the metrics Service, PodDisruptionBudgets and the NetworkPolicy use it.
*/}}
{{- define "cozyplane-lib.componentSelector" -}}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: {{ .Chart.Name }}
{{- end -}}

{{- define "cozyplane-lib.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{ default (include "cozyplane-lib.name" .) .Values.serviceAccount.name }}
{{- else -}}
{{ required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end -}}
{{- end -}}

{{/* The metrics Service's name: also the job label Prometheus gives the targets. */}}
{{- define "cozyplane-lib.metricsServiceName" -}}
{{- printf "%s-metrics" (include "cozyplane-lib.name" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
