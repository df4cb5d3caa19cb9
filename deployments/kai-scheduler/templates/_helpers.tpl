{{- define "kai-scheduler.name" -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "kai-scheduler.labels" -}}
app.kubernetes.io/name: kai-scheduler
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "kai-scheduler.selector" -}}
app.kubernetes.io/name: kai-scheduler
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* The scheduler configuration file, with minruntime's arguments from .Values.minRuntime. */}}
{{- define "kai-scheduler.config" -}}
actions: {{ .Values.scheduler.actions | quote }}
tiers:
- plugins:
{{- range .Values.scheduler.plugins }}
  - name: {{ .name }}
{{- if eq .name "minruntime" }}
    arguments:
      defaultPreemptMinRuntime: {{ $.Values.minRuntime.defaultPreemptMinRuntime | quote }}
      defaultReclaimMinRuntime: {{ $.Values.minRuntime.defaultReclaimMinRuntime | quote }}
      reclaimResolveMethod: {{ $.Values.minRuntime.reclaimResolveMethod | quote }}
{{- else if .arguments }}
    arguments:
{{- range $key, $value := .arguments }}
      {{ $key }}: {{ $value | quote }}
{{- end }}
{{- end }}
{{- end }}
{{- end -}}
