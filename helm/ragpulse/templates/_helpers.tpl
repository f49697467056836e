{{- define "ragpulse.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "ragpulse.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "ragpulse.selectorLabels" -}}
app.kubernetes.io/name: {{ include "ragpulse.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "ragpulse.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "ragpulse.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "ragpulse.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "ragpulse.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- /* The claim holding the bad-case store: an existing one, the chart's own, or "" (an emptyDir). */}}
{{- define "ragpulse.dataClaim" -}}
{{- if .Values.persistence.existingClaim -}}
{{- .Values.persistence.existingClaim -}}
{{- else if .Values.persistence.enabled -}}
{{- include "ragpulse.fullname" . -}}
{{- end -}}
{{- end -}}

{{- /* SQLite takes one writer per file and a ReadWriteOnce claim one node: several replicas on one claim would
fight over the file (or never start), so refuse to render rather than fail in the cluster. values.schema.json says
the same (so `helm lint --strict`, where `fail` is only INFO, refuses it too); this check stands when the schema is
skipped (--skip-schema-validation), and says why. */}}
{{- define "ragpulse.checkPersistence" -}}
{{- $most := ternary .Values.autoscaling.maxReplicas .Values.replicaCount .Values.autoscaling.enabled -}}
{{- if and (include "ragpulse.dataClaim" .) (gt (int $most) 1) -}}
{{- fail (printf "persistence needs a single replica: the bad-case store is one SQLite file, which takes one writer, and this would run up to %d pods on its claim. Run one replica (replicaCount: 1, and autoscaling.enabled: false or autoscaling.maxReplicas: 1), or turn persistence off (persistence.enabled: false, persistence.existingClaim: \"\"; each replica then keeps its own store on an emptyDir)." (int $most)) -}}
{{- end -}}
{{- end -}}

{{- /* The Secret holding the API and review tokens: the user's, or the one the chart generates. */}}
{{- define "ragpulse.tokensSecret" -}}
{{- .Values.tokens.existingSecret | default (printf "%s-tokens" (include "ragpulse.fullname" .)) -}}
{{- end -}}
