{{/*
Prometheus Operator objects (opt-in; their CRDs must be on the cluster).
Prometheus gives every target the label job=<metrics Service name>; the
alerts select the controller's series by it. With honorLabels false (the
default) the namespace label of cozystack_resource_ready, the object's
namespace, is stored as exported_namespace.
*/}}
{{- define "cozyplane-lib.servicemonitor" -}}
{{- if .Values.metrics.serviceMonitor.enabled }}
{{- if not .Values.metrics.service.enabled }}
{{- fail "metrics.serviceMonitor.enabled needs metrics.service.enabled: the ServiceMonitor scrapes that Service" }}
{{- end }}
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: {{ include "cozyplane-lib.name" . }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "cozyplane-lib.labels" . | nindent 4 }}
    {{- with .Values.metrics.serviceMonitor.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  selector:
    matchLabels:
      {{- include "cozyplane-lib.selector" . | nindent 6 }}
  namespaceSelector:
    matchNames: [{{ .Release.Namespace }}]
  endpoints:
  - port: metrics
    path: /metrics
    interval: {{ .Values.metrics.serviceMonitor.interval }}
    {{- with .Values.metrics.serviceMonitor.scrapeTimeout }}
    scrapeTimeout: {{ . }}
    {{- end }}
    honorLabels: {{ .Values.metrics.serviceMonitor.honorLabels }}
    {{- if .Values.metrics.secure }}
    # The secure endpoint takes Prometheus' own ServiceAccount token, which
    # needs the metrics-reader ClusterRole (metrics.readers).
    scheme: https
    bearerTokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token
    {{- with .Values.metrics.serviceMonitor.tlsConfig }}
    tlsConfig:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    {{- end }}
{{- end }}
{{- end -}}

{{- define "cozyplane-lib.prometheusrule" -}}
{{- $r := .Values.metrics.prometheusRule }}
{{- if $r.enabled }}
{{- $job := printf "job=%q" (include "cozyplane-lib.metricsServiceName" .) }}
{{- $target := printf "%s,namespace=%q" $job .Release.Namespace }}
{{- $ns := .Values.metrics.serviceMonitor.honorLabels | ternary "namespace" "exported_namespace" }}
{{- $component := .Chart.Name }}
{{- $skip := $r.disabledAlerts | default list }}
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: {{ include "cozyplane-lib.name" . }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "cozyplane-lib.labels" . | nindent 4 }}
    {{- with $r.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  groups:
  - name: {{ include "cozyplane-lib.name" . }}
    rules:
    {{- if not (has "CozyplaneControllerAbsent" $skip) }}
    - alert: CozyplaneControllerAbsent
      expr: absent(up{ {{- $target -}} } == 1)
      for: 5m
      labels:
        severity: critical
        component: {{ $component }}
        {{- with $r.additionalAlertLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        {{- if $r.runbookURL }}
        runbook_url: {{ printf "%s#%s" $r.runbookURL (lower "CozyplaneControllerAbsent") | quote }}
        {{- end }}
        summary: No {{ $component }} controller has been up for 5 minutes.
        description: >-
          Prometheus scrapes no running {{ $component }} controller in namespace {{ .Release.Namespace }}:
          nothing reconciles its objects. Check the Deployment {{ include "cozyplane-lib.name" . }} and its pods' events.
    {{- end }}
    {{- if not (has "CozyplaneControllerDown" $skip) }}
    - alert: CozyplaneControllerDown
      expr: up{ {{- $target -}} } == 0
      for: 10m
      labels:
        severity: warning
        component: {{ $component }}
        {{- with $r.additionalAlertLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        {{- if $r.runbookURL }}
        runbook_url: {{ printf "%s#%s" $r.runbookURL (lower "CozyplaneControllerDown") | quote }}
        {{- end }}
        summary: {{ printf "The %s controller pod {{ $labels.pod }} has not answered scrapes for 10 minutes." $component | quote }}
        description: >-
          {{ `The metrics endpoint of pod {{ $labels.pod }} in {{ $labels.namespace }} does not answer: the pod is
          crash-looping or not ready.` }}
    {{- end }}
    {{- if not (has "CozyplaneReconcileErrors" $skip) }}
    - alert: CozyplaneReconcileErrors
      expr: |-
        sum by (namespace, job, controller) (rate(controller_runtime_reconcile_errors_total{ {{- $target -}} }[10m]))
          / clamp_min(sum by (namespace, job, controller) (rate(controller_runtime_reconcile_total{ {{- $target -}} }[10m])), 1e-9)
          > {{ $r.reconcileErrorRatio }}
      for: 15m
      labels:
        severity: warning
        component: {{ $component }}
        {{- with $r.additionalAlertLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        {{- if $r.runbookURL }}
        runbook_url: {{ printf "%s#%s" $r.runbookURL (lower "CozyplaneReconcileErrors") | quote }}
        {{- end }}
        summary: {{ printf "{{ $labels.controller }}: more than %v%% of reconciles fail." (mulf $r.reconcileErrorRatio 100) | quote }}
        description: >-
          {{ printf "More than %v%% of the reconciles of {{ $labels.controller }} returned an error for 15 minutes. The controller's log and the objects' Ready conditions and events say why." (mulf $r.reconcileErrorRatio 100) }}
    {{- end }}
    {{- if not (has "CozyplaneWorkqueueGrowing" $skip) }}
    - alert: CozyplaneWorkqueueGrowing
      expr: |-
        sum by (namespace, job, name) (workqueue_depth{ {{- $target -}} }) > {{ $r.workqueueDepth }}
          and sum by (namespace, job, name) (deriv(workqueue_depth{ {{- $target -}} }[15m])) > 0
      for: 15m
      labels:
        severity: warning
        component: {{ $component }}
        {{- with $r.additionalAlertLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        {{- if $r.runbookURL }}
        runbook_url: {{ printf "%s#%s" $r.runbookURL (lower "CozyplaneWorkqueueGrowing") | quote }}
        {{- end }}
        summary: {{ printf "Work queue {{ $labels.name }} holds more than %v items and keeps growing." (toString $r.workqueueDepth) | quote }}
        description: >-
          {{ `The controller adds work faster than it finishes it for 15 minutes: check the API server's
          latency, client throttling (kubeAPI.qps) and the number of workers.` }}
    {{- end }}
    {{- if not (has "CozyplaneResourceNotReady" $skip) }}
    - alert: CozyplaneResourceNotReady
      expr: max by ({{ $ns }}, kind, name) (cozystack_resource_ready{ {{- $job -}} ,status!="True"}) == 1
      for: {{ $r.notReadyFor }}
      labels:
        severity: warning
        component: {{ $component }}
        {{- with $r.additionalAlertLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        {{- if $r.runbookURL }}
        runbook_url: {{ printf "%s#%s" $r.runbookURL (lower "CozyplaneResourceNotReady") | quote }}
        {{- end }}
        summary: {{ printf "{{ $labels.kind }} {{ $labels.%s }}/{{ $labels.name }} has not been Ready for %s." $ns $r.notReadyFor | quote }}
        description: >-
          {{ printf "Its Ready condition has been False or Unknown for %s. kubectl describe shows the reason and message; cozyplane trace follows it to its backing objects." $r.notReadyFor }}
    {{- end }}
{{- end }}
{{- end -}}
