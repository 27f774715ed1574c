{{- define "verifier.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "verifier.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "verifier.selectorLabels" -}}
app.kubernetes.io/name: {{ include "verifier.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "verifier.labels" -}}
{{ include "verifier.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "verifier.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end -}}

{{- define "verifier.tokensSecret" -}}
{{- .Values.tokens.existingSecret | default (printf "%s-tokens" (include "verifier.fullname" .)) -}}
{{- end -}}

{{- define "verifier.admissionSecret" -}}
{{- printf "%s-admission-tls" (include "verifier.fullname" .) -}}
{{- end -}}

{{- define "verifier.admissionHosts" -}}
{{- $svc := include "verifier.fullname" . -}}
{{- list $svc (printf "%s.%s" $svc .Release.Namespace) (printf "%s.%s.svc" $svc .Release.Namespace) | toJson -}}
{{- end -}}
