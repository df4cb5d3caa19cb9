{{- define "kai-scheduler.name" -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "kai-scheduler.labels" -}}
app.kubernetes.io/name: kai-scheduler
app.kubernetes.io/instance: {{ .Instance | default .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "kai-scheduler.selector" -}}
app.kubernetes.io/name: kai-scheduler
app.kubernetes.io/instance: {{ .Instance | default .Release.Name }}
{{- end -}}

{{/*
The schedulers to render, as a JSON list: the one of the unnamed pool (the objects without
the pool label; the release's name, as before pools existed) unless defaultPool.enabled is
false, then one per nodePools entry, named <release>-<pool>, with the entry's values laid
over the top-level ones. Each template of a scheduler ranges over it and builds its context
with "kai-scheduler.context".
*/}}
{{- define "kai-scheduler.instances" -}}
{{- $top := omit .Values "nodePools" "defaultPool" -}}
{{- $instances := list -}}
{{- if .Values.defaultPool.enabled -}}
{{- $instances = append $instances (dict "instance" (include "kai-scheduler.name" .) "pool" "" "prefix" "" "values" $top) -}}
{{- end -}}
{{- range $pool, $override := .Values.nodePools -}}
{{- $values := mergeOverwrite (deepCopy $top) (deepCopy ($override | default dict)) -}}
{{- $name := printf "%s-%s" (include "kai-scheduler.name" $) $pool | trunc 63 | trimSuffix "-" -}}
{{- $instances = append $instances (dict "instance" $name "pool" $pool "prefix" (printf "nodePools.%s." $pool) "values" $values) -}}
{{- end -}}
{{- toJson $instances -}}
{{- end -}}

{{/*
Checks what the schema cannot say well: each mistake named by its key, with an example of a
right value, instead of the raw pattern a schema error shows. Every mistake is reported at
once, not the first alone.
*/}}
{{- define "kai-scheduler.mistakes" -}}
{{- $mistakes := list -}}
{{- $duration := "^(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h|d|w))+)$" -}}
{{- range $key := list "defaultPreemptMinRuntime" "defaultReclaimMinRuntime" -}}
{{- $value := toString (index $.Values.minRuntime $key) -}}
{{- if not (regexMatch $duration $value) -}}
{{- $mistakes = append $mistakes (printf "%sminRuntime.%s: %q is not a duration; use a non-negative Go duration such as 0s, 90s, 10m, 1h30m or 1d" ($.Prefix | default "") $key $value) -}}
{{- end -}}
{{- end -}}
{{- $period := toString .Values.schedulePeriod -}}
{{- if or (not (regexMatch "^(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+$" $period)) (regexMatch "^([0.]+(ns|us|µs|μs|ms|s|m|h))+$" $period) -}}
{{- $mistakes = append $mistakes (printf "%sschedulePeriod: %q must be a positive Go duration such as 1s or 500ms (no d or w)" (.Prefix | default "") $period) -}}
{{- end -}}
{{- range .Values.scheduler.plugins -}}
{{- if and (eq .name "minruntime") .arguments -}}
{{- $mistakes = append $mistakes (printf "%sscheduler.plugins: minruntime's arguments come from minRuntime.* (defaultPreemptMinRuntime, defaultReclaimMinRuntime, reclaimResolveMethod); set them there, not under the plugin list" ($.Prefix | default "")) -}}
{{- end -}}
{{- end -}}
{{- join "\n" $mistakes -}}
{{- end -}}

{{/*
Fails with the mistakes of every scheduler to render, all at once. A pool inherits the
top-level values: a mistake there is named once, under its top-level key.
*/}}
{{- define "kai-scheduler.validate" -}}
{{- $top := include "kai-scheduler.mistakes" . -}}
{{- $mistakes := list -}}
{{- if $top -}}
{{- $mistakes = splitList "\n" $top -}}
{{- end -}}
{{- if not (include "kai-scheduler.instances" . | fromJsonArray) -}}
{{- $mistakes = append $mistakes "defaultPool.enabled: false and no nodePools: no scheduler would run; enable the default pool or add a pool" -}}
{{- end -}}
{{- if and .Values.nodePools (not .Values.nodePoolLabelKey) -}}
{{- $mistakes = append $mistakes "nodePools: needs nodePoolLabelKey, the label that puts objects in pools; it is empty" -}}
{{- end -}}
{{- range $instance := include "kai-scheduler.instances" . | fromJsonArray -}}
{{- if $instance.pool -}}
{{- if not (regexMatch "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$" $instance.pool) -}}
{{- $mistakes = append $mistakes (printf "nodePools: %q is not a pool name this chart can use: lower-case letters, digits and '-' (it names the pool's Deployment)" $instance.pool) -}}
{{- end -}}
{{- $found := include "kai-scheduler.mistakes" (include "kai-scheduler.context" (dict "root" $ "instance" $instance) | fromJson) -}}
{{- range $line := splitList "\n" $found -}}
{{- if and $line (not (has (trimPrefix $instance.prefix $line) $mistakes)) -}}
{{- $mistakes = append $mistakes $line -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if $mistakes -}}
{{- fail (printf "\n  %s" (join "\n  " $mistakes)) -}}
{{- end -}}
{{- end -}}

{{/*
The context one scheduler's templates render with: its merged Values, its Instance name
(its objects' names and its Lease), its Pool (empty for the unnamed pool), the Prefix that
names its values in messages, and the release's Release and Chart.
*/}}
{{- define "kai-scheduler.context" -}}
{{- toJson (dict "Values" .instance.values "Instance" .instance.instance "Pool" .instance.pool "Prefix" .instance.prefix
  "Release" (dict "Name" .root.Release.Name "Namespace" .root.Release.Namespace "Service" .root.Release.Service)
  "Chart" (dict "Name" .root.Chart.Name "Version" .root.Chart.Version "AppVersion" .root.Chart.AppVersion)) -}}
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
