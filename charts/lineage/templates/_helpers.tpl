{{/* The shared templates live in the library chart cozyplane-lib; these are the names clusterrole.yaml uses. */}}
{{- define "ctrl.name" -}}{{ include "cozyplane-lib.name" . }}{{- end -}}
{{- define "ctrl.labels" -}}{{ include "cozyplane-lib.labels" . }}{{- end -}}
{{- define "ctrl.selector" -}}{{ include "cozyplane-lib.selector" . }}{{- end -}}
{{- define "ctrl.serviceAccountName" -}}{{ include "cozyplane-lib.serviceAccountName" . }}{{- end -}}
