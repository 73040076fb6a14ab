{{/*
The identities the policies name, as a JSON list of [default, configured]
pairs: policies/*.yaml write Cozystack's layout literally (the defaults on
the left), policies.yaml writes the configured ones in their place. Every
token is quoted as the policies' CEL writes it (a username, a group
system:serviceaccounts:<namespace>, a bare namespace, or the prefix
'system:serviceaccount:<namespace>:' of the tenant chart's cleanup Jobs,
which run in the operator's namespace), so a replacement never touches a
longer name. .Values.identities, overridden by
.Values.global.identities (the umbrella chart's).
*/}}
{{- define "policies.identityPairs" -}}
{{- $ids := deepCopy .Values.identities }}
{{- with (.Values.global | default dict).identities }}
{{- $ids = mergeOverwrite $ids (deepCopy .) }}
{{- end }}
{{- $f := $ids.flux }}
{{- $t := $ids.tofuController }}
{{- $cm := $ids.certManager }}
{{- $op := $ids.operator }}
{{- $c := $ids.controllers }}
{{- $b := $ids.backupStrategy }}
{{- range $what, $v := dict "flux.namespace" $f.namespace "tofuController.namespace" $t.namespace "certManager.namespace" $cm.namespace "operator.namespace" $op.namespace "controllers.namespace" $c.namespace "backupStrategy.namespace" $b.namespace }}
{{- if not (regexMatch "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$" (toString $v)) }}
{{- fail (printf "identities.%s %q is not a namespace name" $what (toString $v)) }}
{{- end }}
{{- end }}
{{- range $what, $v := dict "flux.allInOne" $f.allInOne "flux.helmController" $f.helmController "flux.kustomizeController" $f.kustomizeController "flux.shardOperator" $f.shardOperator "tofuController.serviceAccount" $t.serviceAccount "certManager.serviceAccount" $cm.serviceAccount "operator.serviceAccount" $op.serviceAccount "controllers.helm" $c.helm "controllers.terraform" $c.terraform "controllers.appdef" $c.appdef "controllers.gatewayListeners" $c.gatewayListeners "controllers.gatewayCerts" $c.gatewayCerts "controllers.nsLabels" $c.nsLabels "controllers.lineage" $c.lineage "controllers.routeConflicts" $c.routeConflicts "backupStrategy.serviceAccount" $b.serviceAccount }}
{{- if not (regexMatch "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$" (toString $v)) }}
{{- fail (printf "identities.%s %q is not a ServiceAccount name" $what (toString $v)) }}
{{- end }}
{{- end }}
{{- $u := "'system:serviceaccount:%s:%s'" }}
{{- list
  (list "'system:serviceaccount:cozy-fluxcd:flux'" (printf $u $f.namespace $f.allInOne))
  (list "'system:serviceaccount:cozy-fluxcd:helm-controller'" (printf $u $f.namespace $f.helmController))
  (list "'system:serviceaccount:cozy-fluxcd:kustomize-controller'" (printf $u $f.namespace $f.kustomizeController))
  (list "'system:serviceaccount:cozy-fluxcd:flux-shard-operator'" (printf $u $f.namespace $f.shardOperator))
  (list "'system:serviceaccount:cozy-fluxcd:tofu-controller'" (printf $u $t.namespace $t.serviceAccount))
  (list "'system:serviceaccount:cozy-cert-manager:cert-manager'" (printf $u $cm.namespace $cm.serviceAccount))
  (list "'system:serviceaccount:cozy-system:cozystack'" (printf $u $op.namespace $op.serviceAccount))
  (list "'system:serviceaccount:cozy-system:cozystack-helm'" (printf $u $c.namespace $c.helm))
  (list "'system:serviceaccount:cozy-system:cozystack-terraform'" (printf $u $c.namespace $c.terraform))
  (list "'system:serviceaccount:cozy-system:cozystack-appdef'" (printf $u $c.namespace $c.appdef))
  (list "'system:serviceaccount:cozy-system:cozystack-gateway-listeners'" (printf $u $c.namespace $c.gatewayListeners))
  (list "'system:serviceaccount:cozy-system:cozystack-gateway-certs'" (printf $u $c.namespace $c.gatewayCerts))
  (list "'system:serviceaccount:cozy-system:cozystack-ns-labels'" (printf $u $c.namespace $c.nsLabels))
  (list "'system:serviceaccount:cozy-system:cozystack-lineage'" (printf $u $c.namespace $c.lineage))
  (list "'system:serviceaccount:cozy-system:cozystack-route-conflicts'" (printf $u $c.namespace $c.routeConflicts))
  (list "'system:serviceaccount:cozy-backup-controller:backupstrategy-controller'" (printf $u $b.namespace $b.serviceAccount))
  (list "'system:serviceaccount:cozy-system:'" (printf "'system:serviceaccount:%s:'" $op.namespace))
  (list "'system:serviceaccounts:cozy-fluxcd'" (printf "'system:serviceaccounts:%s'" $f.namespace))
  (list "'system:serviceaccounts:cozy-cert-manager'" (printf "'system:serviceaccounts:%s'" $cm.namespace))
  (list "'cozy-fluxcd'" (printf "'%s'" $f.namespace))
  (list "'cozy-cert-manager'" (printf "'%s'" $cm.namespace))
  | toJson }}
{{- end -}}

{{/*
policies.withIdentities (dict "text" FILE-TEXT "pairs" PAIRS): the text with
every default token replaced by its configured one. In two passes, through
placeholders no policy holds, so a configured identity that equals another
default is never replaced again.
*/}}
{{- define "policies.withIdentities" -}}
{{- $text := .text }}
{{- range $i, $p := .pairs }}
{{- $text = replace (index $p 0) (printf "'@cozyplane-identity-%d@'" $i) $text }}
{{- end }}
{{- range $i, $p := .pairs }}
{{- $text = replace (printf "'@cozyplane-identity-%d@'" $i) (index $p 1) $text }}
{{- end }}
{{- $text }}
{{- end -}}
