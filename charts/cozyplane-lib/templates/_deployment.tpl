{{/*
Sharding. shardKey and shards are values of the backend charts only (helm,
terraform). Each shard runs its own Deployment reconciling the instances whose
label <shardKey> is in (<shard>); the main Deployment reconciles every other
instance (<shardKey> notin (<shards>), which includes instances without the
label), so each instance has exactly one owner.
*/}}
{{/* The controller's Deployment, then one Deployment per shard. */}}
{{- define "cozyplane-lib.deployment" -}}
{{- $shards := (hasKey .Values "shards") | ternary (.Values.shards | default list) list }}
{{- if ne (len $shards) (len (uniq $shards)) }}
{{- fail (printf "shards must not repeat a name: %v" $shards) }}
{{- end }}
{{- if and (gt (int .Values.replicas) 1) (not .Values.leaderElection.enabled) }}
{{- fail "replicas > 1 needs leaderElection.enabled: true (only the leader may reconcile)" }}
{{- end }}
{{- include "cozyplane-lib.deploymentOne" (dict "root" . "shard" "" "shards" $shards) }}
{{- range $shards }}
---
{{- include "cozyplane-lib.deploymentOne" (dict "root" $ "shard" . "shards" $shards) }}
{{- end }}
{{- end -}}

{{/* One Deployment: (dict "root" $ "shard" NAME-or-empty "shards" LIST). */}}
{{- define "cozyplane-lib.deploymentOne" -}}
{{- $ := .root }}
{{- $shard := .shard }}
{{- $name := include "cozyplane-lib.name" $ }}
{{- $labels := include "cozyplane-lib.labels" $ | fromYaml }}
{{- $selector := include "cozyplane-lib.selector" $ | fromYaml }}
{{- if $shard }}
{{- $name = printf "%s-shard-%s" $name $shard | trunc 63 | trimSuffix "-" }}
{{- $_ := set $labels "app.kubernetes.io/name" $name }}
{{- $_ := set $labels "cozystack.io/shard" $shard }}
{{- $_ := set $selector "app.kubernetes.io/name" $name }}
{{- end }}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ $name }}
  namespace: {{ $.Release.Namespace }}
  labels:
    {{- toYaml $labels | nindent 4 }}
spec:
  replicas: {{ $.Values.replicas }}
  revisionHistoryLimit: 3
  selector:
    matchLabels:
      {{- toYaml $selector | nindent 6 }}
  template:
    metadata:
      labels:
        {{- /* The chart's own labels win over podLabels: the selectors depend on them. */}}
        {{- toYaml (merge (deepCopy $labels) ($.Values.podLabels | default dict)) | nindent 8 }}
      {{- with $.Values.podAnnotations }}
      annotations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    spec:
      serviceAccountName: {{ include "cozyplane-lib.serviceAccountName" $ }}
      automountServiceAccountToken: true
      {{- with $.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      securityContext:
        {{- toYaml $.Values.podSecurityContext | nindent 8 }}
      {{- with $.Values.priorityClassName }}
      priorityClassName: {{ . }}
      {{- end }}
      containers:
      - name: manager
        image: {{ include "cozyplane-lib.image" $ | quote }}
        imagePullPolicy: {{ $.Values.image.pullPolicy }}
        args:
        - --leader-elect={{ $.Values.leaderElection.enabled }}
        - --leader-election-namespace={{ $.Release.Namespace }}
        {{- if $shard }}
        - --leader-election-id=cozystack-{{ $.Chart.Name }}-shard-{{ $shard }}.cozystack.io
        - {{ printf "--watch-label-selector=%s in (%s)" $.Values.shardKey $shard | quote }}
        {{- else if .shards }}
        - --leader-election-id=cozystack-{{ $.Chart.Name }}.cozystack.io
        - {{ printf "--watch-label-selector=%s notin (%s)" $.Values.shardKey (join "," .shards) | quote }}
        {{- end }}
        - --metrics-bind-address=:8080
        {{- if $.Values.metrics.secure }}
        - --metrics-secure
        {{- end }}
        - --health-probe-bind-address=:8081
        - --workers={{ $.Values.workers }}
        - --resync-period={{ $.Values.resyncPeriod }}
        - --kube-api-qps={{ $.Values.kubeAPI.qps }}
        - --kube-api-burst={{ $.Values.kubeAPI.burst }}
        - --zap-log-level={{ $.Values.logLevel }}
        {{- with $.Values.leaderElection.leaseDuration }}
        - --leader-election-lease-duration={{ . }}
        {{- end }}
        {{- with $.Values.leaderElection.renewDeadline }}
        - --leader-election-renew-deadline={{ . }}
        {{- end }}
        {{- with $.Values.leaderElection.retryPeriod }}
        - --leader-election-retry-period={{ . }}
        {{- end }}
        {{- range $.Values.extraArgs }}
        - {{ . | quote }}
        {{- end }}
        {{- with $.Values.extraEnv }}
        env:
          {{- toYaml . | nindent 10 }}
        {{- end }}
        {{- with $.Values.extraVolumeMounts }}
        volumeMounts:
          {{- toYaml . | nindent 10 }}
        {{- end }}
        ports:
        - name: metrics
          containerPort: 8080
        - name: health
          containerPort: 8081
        livenessProbe:
          httpGet:
            path: /healthz
            port: health
          initialDelaySeconds: 10
          periodSeconds: 20
        readinessProbe:
          httpGet:
            path: /readyz
            port: health
          periodSeconds: 10
        resources:
          {{- toYaml $.Values.resources | nindent 10 }}
        securityContext:
          {{- toYaml $.Values.securityContext | nindent 10 }}
      {{- with $.Values.extraVolumes }}
      volumes:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $.Values.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $.Values.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $.Values.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $.Values.topologySpreadConstraints }}
      topologySpreadConstraints:
        {{- range . }}
        - {{- toYaml (omit . "labelSelector") | nindent 10 }}
          labelSelector:
            {{- if .labelSelector }}
            {{- toYaml .labelSelector | nindent 12 }}
            {{- else }}
            matchLabels:
              {{- toYaml $selector | nindent 14 }}
            {{- end }}
        {{- end }}
      {{- end }}
{{- end -}}
