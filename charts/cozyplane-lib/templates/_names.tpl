{{/*
Names and labels. Objects are named <release>-<chart>: release "cozystack"
gives cozystack-helm. A shard's objects add -shard-<shard>.
*/}}
{{- define "cozyplane-lib.name" -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels of every object of a controller chart: the chart's own, then commonLabels (the own ones win). */}}
{{- define "cozyplane-lib.labels" -}}
app.kubernetes.io/name: {{ include "cozyplane-lib.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/part-of: cozyplane
app.kubernetes.io/component: {{ .Chart.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- $own := list "app.kubernetes.io/name" "app.kubernetes.io/instance" "app.kubernetes.io/part-of" "app.kubernetes.io/component" "app.kubernetes.io/managed-by" "app.kubernetes.io/version" "helm.sh/chart" }}
{{- range $k, $v := (.Values.commonLabels | default dict) }}
{{- if not (has $k $own) }}
{{ $k }}: {{ $v | quote }}
{{- end }}
{{- end }}
{{- end -}}

{{/*
The controller's image: repository:tag (the tag defaults to the chart's
appVersion, which is also the app.kubernetes.io/version label `cozyplane
version` reads), then @digest when image.digest is set (make release sets it
to the image index it built), so the digest decides what runs.
*/}}
{{- define "cozyplane-lib.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- with .Values.image.digest }}{{ printf "@%s" . }}{{ end -}}
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
