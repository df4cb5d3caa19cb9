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

{{/*
Checks what the schema cannot say well: each mistake named by its key, with an example of a
right value, instead of the raw pattern a schema error shows. Every mistake is reported at
once, not the first alone.
*/}}
{{- define "kai-scheduler.validate" -}}
{{- $mistakes := list -}}
{{- $duration := "^(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h|d|w))+)$" -}}
{{- range $key := list "defaultPreemptMinRuntime" "defaultReclaimMinRuntime" -}}
{{- $value := toString (index $.Values.minRuntime $key) -}}
{{- if not (regexMatch $duration $value) -}}
{{- $mistakes = append $mistakes (printf "minRuntime.%s: %q is not a duration; use a non-negative Go duration such as 0s, 90s, 10m, 1h30m or 1d" $key $value) -}}
{{- end -}}
{{- end -}}
{{- $period := toString .Values.schedulePeriod -}}
{{- if or (not (regexMatch "^(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+$" $period)) (regexMatch "^([0.]+(ns|us|µs|μs|ms|s|m|h))+$" $period) -}}
{{- $mistakes = append $mistakes (printf "schedulePeriod: %q must be a positive Go duration such as 1s or 500ms (no d or w)" $period) -}}
{{- end -}}
{{- range .Values.scheduler.plugins -}}
{{- if and (eq .name "minruntime") .arguments -}}
{{- $mistakes = append $mistakes "scheduler.plugins: minruntime's arguments come from minRuntime.* (defaultPreemptMinRuntime, defaultReclaimMinRuntime, reclaimResolveMethod); set them there, not under the plugin list" -}}
{{- end -}}
{{- end -}}
{{- if $mistakes -}}
{{- fail (printf "\n  %s" (join "\n  " $mistakes)) -}}
{{- end -}}
{{- end -}}

{{/* The scheduler configuration file, with minruntime's arguments from .Values.minRuntime. */}}
{{- define "kai-scheduler.config" -}}
{{- include "kai-scheduler.validate" . -}}
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
