{{/* Objects are named <release>-<chart>: release "cozystack" gives cozystack-helm. */}}
{{- define "ctrl.name" -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "ctrl.labels" -}}
app.kubernetes.io/name: {{ include "ctrl.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/part-of: cozyplane
app.kubernetes.io/component: {{ .Chart.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "ctrl.selector" -}}
app.kubernetes.io/name: {{ include "ctrl.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "ctrl.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{ default (include "ctrl.name" .) .Values.serviceAccount.name }}
{{- else -}}
{{ required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end -}}
{{- end -}}
