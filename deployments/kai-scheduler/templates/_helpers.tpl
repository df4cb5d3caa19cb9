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
Where values are checked, and why here. Helm checks values.schema.json before it renders a
template, and stops there when the schema fails: a mistake the schema catches would hide
every mistake a template catches, and an operator would fix one only to be told of the next.
JSON Schema cannot say the rest well either: a duration, a positive period or "minruntime's
arguments belong under minRuntime" are a raw pattern or "'not' failed" there, and it has no
messages of its own. So every check of a value is here, and "kai-scheduler.validate" fails
once with all of them, each named by its key with what a right value is. The schema keeps
what must hold before a template can run at all: the shape the templates walk (a mapping
where they read fields, a list where they range); a values file of the wrong shape cannot be
checked any further, and the schema names every such mistake at once.
*/}}

{{/*
One mistake of a value, or nothing. .key names the value, .value is it (nil when absent:
only .required values must be there) and .rule what it must be: "name" (a non-empty
string), "text" (a string), "bool", "whole" (a whole number from .min, to .max when set) or
"oneOf" (one of .allowed). Numbers are float64 from a values file, int64 from --set.
*/}}
{{- define "kai-scheduler.check" -}}
{{- $v := .value -}}
{{- $shown := toJson $v -}}
{{- if and (kindIs "invalid" $v) (not .required) -}}
{{- else if eq .rule "name" -}}
{{- if or (not (kindIs "string" $v)) (eq $v "") -}}
{{- printf "%s: %s must be a non-empty string" .key $shown -}}
{{- end -}}
{{- else if eq .rule "text" -}}
{{- if not (kindIs "string" $v) -}}
{{- printf "%s: %s must be a string; quote it" .key $shown -}}
{{- end -}}
{{- else if eq .rule "bool" -}}
{{- if not (kindIs "bool" $v) -}}
{{- printf "%s: %s must be true or false, unquoted" .key $shown -}}
{{- end -}}
{{- else if eq .rule "oneOf" -}}
{{- if not (has $v .allowed) -}}
{{- printf "%s: %s must be %s" .key $shown (include "kai-scheduler.words" (dict "list" .allowed "and" "or")) -}}
{{- end -}}
{{- else if eq .rule "whole" -}}
{{- $whole := or (kindIs "int" $v) (kindIs "int64" $v) (and (kindIs "float64" $v) (eq (float64 (int64 $v)) $v)) -}}
{{- if or (not $whole) (lt (int64 $v) (int64 .min)) (and (hasKey . "max") (gt (int64 $v) (int64 .max))) -}}
{{- if hasKey . "max" -}}
{{- printf "%s: %s must be a whole number from %d to %d" .key $shown (int64 .min) (int64 .max) -}}
{{- else -}}
{{- printf "%s: %s must be a whole number, %d or more" .key $shown (int64 .min) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* .list in words, its last two joined by .and: "a, b or c". */}}
{{- define "kai-scheduler.words" -}}
{{- if gt (len .list) 1 -}}
{{- printf "%s %s %s" (initial .list | join ", ") .and (last .list) -}}
{{- else -}}
{{- first .list -}}
{{- end -}}
{{- end -}}

{{/*
A mistake for each key of the mapping .map that is not one of .known: "<key>.<k>: not a
key of <key>, which has a, b and c". Misspelt, a value would be dropped without a word.
*/}}
{{- define "kai-scheduler.unknownKeys" -}}
{{- $mistakes := list -}}
{{- $known := .known -}}
{{- $key := .key -}}
{{- range $k := keys (.map | default dict) | sortAlpha -}}
{{- if not (has $k $known) -}}
{{- $mistakes = append $mistakes (printf "%s.%s: not a key of %s, which has %s" $key $k $key (include "kai-scheduler.words" (dict "list" $known "and" "and"))) -}}
{{- end -}}
{{- end -}}
{{- join "\n" $mistakes -}}
{{- end -}}

{{/*
The mistakes of one scheduler's values, one a line, each named by its key (after .Prefix,
"nodePools.<pool>." for a pool) with an example of a right value.
*/}}
{{- define "kai-scheduler.mistakes" -}}
{{- $p := .Prefix | default "" -}}
{{- $values := .Values -}}
{{- /* The actions, plugins and arguments the scheduler takes: known.json. */}}
{{- $known := .Known -}}
{{- $mistakes := list -}}
{{- $duration := "^(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h|d|w))+)$" -}}
{{- range $key := list "defaultPreemptMinRuntime" "defaultReclaimMinRuntime" -}}
{{- $value := toString (index $values.minRuntime $key) -}}
{{- if not (regexMatch $duration $value) -}}
{{- $mistakes = append $mistakes (printf "%sminRuntime.%s: %q is not a duration; use a non-negative Go duration such as 0s, 90s, 10m, 1h30m or 1d" $p $key $value) -}}
{{- end -}}
{{- end -}}
{{- $factor := toString ($values.minRuntime.escalationFactor | default "1") -}}
{{- $ceiling := toString ($values.minRuntime.escalationCeiling | default "0s") -}}
{{- if or (not (regexMatch "^[0-9]+([.][0-9]+)?$" $factor)) (lt (float64 $factor) 1.0) -}}
{{- $mistakes = append $mistakes (printf "%sminRuntime.escalationFactor: %q must be a number of at least 1 (1 is off), such as 2" $p $factor) -}}
{{- else if not (regexMatch $duration $ceiling) -}}
{{- $mistakes = append $mistakes (printf "%sminRuntime.escalationCeiling: %q is not a duration; use a non-negative Go duration such as 4h or 1d" $p $ceiling) -}}
{{- else if and (gt (float64 $factor) 1.0) (regexMatch "^([0.]+(ns|us|µs|μs|ms|s|m|h|d|w))+$|^0$" $ceiling) -}}
{{- $mistakes = append $mistakes (printf "%sminRuntime.escalationCeiling: escalationFactor %s needs a ceiling above 0s, such as 4h, so that no job is protected for good" $p $factor) -}}
{{- end -}}
{{- $period := toString $values.schedulePeriod -}}
{{- if or (not (regexMatch "^(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+$" $period)) (regexMatch "^([0.]+(ns|us|µs|μs|ms|s|m|h))+$" $period) -}}
{{- $mistakes = append $mistakes (printf "%sschedulePeriod: %q must be a positive Go duration such as 1s or 500ms (no d or w)" $p $period) -}}
{{- end -}}
{{- $checks := list
  (dict "key" "image.repository" "value" $values.image.repository "rule" "name" "required" true)
  (dict "key" "image.tag" "value" $values.image.tag "rule" "text")
  (dict "key" "image.pullPolicy" "value" $values.image.pullPolicy "rule" "oneOf" "allowed" (list "Always" "IfNotPresent" "Never"))
  (dict "key" "replicas" "value" $values.replicas "rule" "whole" "min" 1 "required" true)
  (dict "key" "schedulerName" "value" $values.schedulerName "rule" "name" "required" true)
  (dict "key" "logVerbosity" "value" $values.logVerbosity "rule" "whole" "min" 0)
  (dict "key" "dispatchWorkers" "value" $values.dispatchWorkers "rule" "whole" "min" 0)
  (dict "key" "statusWorkers" "value" $values.statusWorkers "rule" "whole" "min" 1)
  (dict "key" "minRuntime.reclaimResolveMethod" "value" $values.minRuntime.reclaimResolveMethod "rule" "oneOf" "allowed" (list "lca" "queue"))
  (dict "key" "scheduler.actions" "value" $values.scheduler.actions "rule" "name" "required" true)
  (dict "key" "scheduler.maxConsolidationPreemptees" "value" $values.scheduler.maxConsolidationPreemptees "rule" "whole" "min" 0 "required" true)
  (dict "key" "priorityClasses.create" "value" $values.priorityClasses.create "rule" "bool")
  (dict "key" "defaultQueues.create" "value" $values.defaultQueues.create "rule" "bool")
  (dict "key" "metrics.port" "value" $values.metrics.port "rule" "whole" "min" 1 "max" 65535)
  (dict "key" "metrics.service.enabled" "value" $values.metrics.service.enabled "rule" "bool")
  (dict "key" "metrics.serviceMonitor.enabled" "value" $values.metrics.serviceMonitor.enabled "rule" "bool")
  (dict "key" "health.port" "value" $values.health.port "rule" "whole" "min" 1 "max" 65535)
  (dict "key" "nodePoolLabelKey" "value" $values.nodePoolLabelKey "rule" "text")
-}}
{{- /*
The actions as the scheduler reads them: split at commas and trimmed. A name the scheduler does
not know, an empty entry or one listed twice would stop it at start; upstream's actions it
skips (known.json's skippedActions, none at present: it runs all of upstream's, consolidation
included) are taken, so that an upstream list still installs, but not alone.
*/}}
{{- $actions := $values.scheduler.actions -}}
{{- if and (kindIs "string" $actions) (ne (trim $actions) "") -}}
{{- $seen := list -}}
{{- $runs := false -}}
{{- $wrong := false -}}
{{- range $i, $action := splitList "," $actions -}}
{{- $action = trim $action -}}
{{- if eq $action "" -}}
{{- $wrong = true -}}
{{- $mistakes = append $mistakes (printf "%sscheduler.actions: entry %d of %q is empty; separate the actions by single commas" $p (add1 $i) $actions) -}}
{{- else if has $action $seen -}}
{{- $wrong = true -}}
{{- $mistakes = append $mistakes (printf "%sscheduler.actions: %q is listed twice; an action runs once a cycle" $p $action) -}}
{{- else if has $action $known.actions -}}
{{- $runs = true -}}
{{- else if not (has $action $known.skippedActions) -}}
{{- $wrong = true -}}
{{- $mistakes = append $mistakes (printf "%sscheduler.actions: %q is not an action of this scheduler, which has %s" $p $action (include "kai-scheduler.words" (dict "list" $known.actions "and" "and"))) -}}
{{- end -}}
{{- $seen = append $seen $action -}}
{{- end -}}
{{- if not (or $runs $wrong) -}}
{{- $mistakes = append $mistakes (printf "%sscheduler.actions: %q runs nothing: this scheduler skips %s; list %s" $p $actions (include "kai-scheduler.words" (dict "list" $known.skippedActions "and" "and")) (include "kai-scheduler.words" (dict "list" $known.actions "and" "or"))) -}}
{{- end -}}
{{- end -}}
{{- range $name, $value := $values.priorityClasses.classes -}}
{{- /* What the API server takes for a class that is not a system one. */}}
{{- $checks = append $checks (dict "key" (printf "priorityClasses.classes.%s" $name) "value" $value "rule" "whole" "min" -2147483648 "max" 1000000000) -}}
{{- end -}}
{{- range $name, $value := $values.metrics.serviceMonitor.labels -}}
{{- $checks = append $checks (dict "key" (printf "metrics.serviceMonitor.labels.%s" $name) "value" $value "rule" "text") -}}
{{- end -}}
{{- if kindIs "invalid" $values.scheduler.plugins -}}
{{- $mistakes = append $mistakes (printf "%sscheduler.plugins: missing; list the scheduler's plugins, as values.yaml does" $p) -}}
{{- end -}}
{{- /*
Each plugin as the scheduler reads it: a name it runs, with the arguments and values that
plugin takes, or one of upstream's it skips, whose arguments it ignores; each name once.
*/}}
{{- $listed := list -}}
{{- range $i, $plugin := $values.scheduler.plugins -}}
{{- $key := printf "scheduler.plugins[%d]" $i -}}
{{- $name := $plugin.name -}}
{{- $checks = append $checks (dict "key" (printf "%s.name" $key) "value" $name "rule" "name" "required" true) -}}
{{- range $line := splitList "\n" (include "kai-scheduler.unknownKeys" (dict "key" $key "map" $plugin "known" (list "name" "arguments"))) -}}
{{- if $line -}}
{{- $mistakes = append $mistakes (printf "%s%s" $p $line) -}}
{{- end -}}
{{- end -}}
{{- /* $takes: the plugin's arguments, each with the values it accepts; $free: any string goes. */}}
{{- $takes := dict -}}
{{- $free := true -}}
{{- if and (kindIs "string" $name) (ne $name "") -}}
{{- if has $name $listed -}}
{{- $mistakes = append $mistakes (printf "%s%s.name: %q is listed twice; list a plugin once" $p $key $name) -}}
{{- else if hasKey $known.plugins $name -}}
{{- $takes = get $known.plugins $name -}}
{{- $free = false -}}
{{- else if not (has $name $known.skippedPlugins) -}}
{{- $mistakes = append $mistakes (printf "%s%s.name: %q is not a plugin of this scheduler, which has %s" $p $key $name (include "kai-scheduler.words" (dict "list" (keys $known.plugins | sortAlpha) "and" "and"))) -}}
{{- end -}}
{{- $listed = append $listed $name -}}
{{- end -}}
{{- if and (eq (toString $name) "minruntime") $plugin.arguments -}}
{{- $mistakes = append $mistakes (printf "%sscheduler.plugins: minruntime's arguments come from minRuntime.* (defaultPreemptMinRuntime, defaultReclaimMinRuntime, reclaimResolveMethod, escalationFactor, escalationCeiling); set them there, not under the plugin list" $p) -}}
{{- else -}}
{{- range $arg, $value := $plugin.arguments -}}
{{- if $free -}}
{{- $checks = append $checks (dict "key" (printf "%s.arguments.%s" $key $arg) "value" $value "rule" "text" "required" true) -}}
{{- else if hasKey $takes $arg -}}
{{- $checks = append $checks (dict "key" (printf "%s.arguments.%s" $key $arg) "value" $value "rule" "oneOf" "allowed" (get $takes $arg) "required" true) -}}
{{- else if $takes -}}
{{- $mistakes = append $mistakes (printf "%s%s.arguments.%s: not an argument of %s, which takes %s" $p $key $arg $name (include "kai-scheduler.words" (dict "list" (keys $takes | sortAlpha) "and" "and"))) -}}
{{- else -}}
{{- $mistakes = append $mistakes (printf "%s%s.arguments.%s: not an argument of %s, which takes none" $p $key $arg $name) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- range $check := $checks -}}
{{- $found := include "kai-scheduler.check" $check -}}
{{- if $found -}}
{{- $mistakes = append $mistakes (printf "%s%s" $p $found) -}}
{{- end -}}
{{- end -}}
{{- $minRuntime := include "kai-scheduler.unknownKeys" (dict "key" "minRuntime" "map" $values.minRuntime "known" (list "defaultPreemptMinRuntime" "defaultReclaimMinRuntime" "reclaimResolveMethod" "escalationFactor" "escalationCeiling")) -}}
{{- range $line := splitList "\n" $minRuntime -}}
{{- if $line -}}
{{- $mistakes = append $mistakes (printf "%s%s" $p $line) -}}
{{- end -}}
{{- end -}}
{{- if and $values.metrics.serviceMonitor.enabled (not (regexMatch "^[0-9]+(ms|s|m|h)$" (toString $values.metrics.serviceMonitor.interval))) -}}
{{- $mistakes = append $mistakes (printf "%smetrics.serviceMonitor.interval: %s must be a Prometheus duration such as 30s or 1m" $p (toJson $values.metrics.serviceMonitor.interval)) -}}
{{- end -}}
{{- /* gpuSharing's types are the schema's; its port must not be one the container already has. */}}
{{- if and $values.gpuSharing $values.gpuSharing.enabled -}}
{{- $webhookPort := toString $values.gpuSharing.webhook.port -}}
{{- range $other := list "metrics" "health" -}}
{{- if eq $webhookPort (toString (index $values $other).port) -}}
{{- $mistakes = append $mistakes (printf "%sgpuSharing.webhook.port: %s is also %s.port; the webhook needs a port of its own" $p $webhookPort $other) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if and $values.metrics.serviceMonitor.enabled (not $values.metrics.service.enabled) -}}
{{- $mistakes = append $mistakes (printf "%smetrics.serviceMonitor.enabled needs metrics.service.enabled: the ServiceMonitor scrapes the metrics Service" $p) -}}
{{- end -}}
{{- join "\n" $mistakes -}}
{{- end -}}

{{/*
Fails with the mistakes of every scheduler to render, all at once. A pool inherits the
top-level values: a mistake there is named once, under its top-level key. Rendered by
configmap.yaml; no other template fails, so that no mistake is told alone.
*/}}
{{- define "kai-scheduler.validate" -}}
{{- $top := include "kai-scheduler.mistakes" (dict "Values" .Values "Known" (.Files.Get "known.json" | fromJson)) -}}
{{- $mistakes := list -}}
{{- if $top -}}
{{- $mistakes = splitList "\n" $top -}}
{{- end -}}
{{- range $line := splitList "\n" (include "kai-scheduler.unknownKeys" (dict "key" "defaultPool" "map" .Values.defaultPool "known" (list "enabled"))) -}}
{{- if $line -}}
{{- $mistakes = append $mistakes $line -}}
{{- end -}}
{{- end -}}
{{- with include "kai-scheduler.check" (dict "key" "defaultPool.enabled" "value" .Values.defaultPool.enabled "rule" "bool") -}}
{{- $mistakes = append $mistakes . -}}
{{- end -}}
{{- if not (include "kai-scheduler.instances" . | fromJsonArray) -}}
{{- $mistakes = append $mistakes "defaultPool.enabled: false and no nodePools: no scheduler would run; enable the default pool or add a pool" -}}
{{- end -}}
{{- if and .Values.nodePools (not .Values.nodePoolLabelKey) -}}
{{- $mistakes = append $mistakes "nodePools: needs nodePoolLabelKey, the label that puts objects in pools; it is empty" -}}
{{- end -}}
{{- $poolKeys := list "image" "replicas" "schedulePeriod" "logVerbosity" "dispatchWorkers" "statusWorkers" "minRuntime" "scheduler" "metrics" "health" "resources" "nodeSelector" "tolerations" "affinity" "podAnnotations" -}}
{{- range $pool := keys (.Values.nodePools | default dict) | sortAlpha -}}
{{- range $key := keys (index $.Values.nodePools $pool | default dict) | sortAlpha -}}
{{- if not (has $key $poolKeys) -}}
{{- $mistakes = append $mistakes (printf "nodePools.%s.%s: a pool cannot set %s; it sets %s" $pool $key $key (include "kai-scheduler.words" (dict "list" $poolKeys "and" "or"))) -}}
{{- end -}}
{{- end -}}
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
names its values in messages, the release's Release and Chart, and Known: known.json, the
names its configuration may use (this context carries no .Files to read it with).
*/}}
{{- define "kai-scheduler.context" -}}
{{- toJson (dict "Values" .instance.values "Instance" .instance.instance "Pool" .instance.pool "Prefix" .instance.prefix
  "Known" (.root.Files.Get "known.json" | fromJson)
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
{{- if ne (toString ($.Values.minRuntime.escalationFactor | default "1")) "1" }}
      escalationFactor: {{ $.Values.minRuntime.escalationFactor | toString | quote }}
      escalationCeiling: {{ $.Values.minRuntime.escalationCeiling | toString | quote }}
{{- end }}
{{- else if .arguments }}
    arguments:
{{- range $key, $value := .arguments }}
      {{ $key }}: {{ $value | quote }}
{{- end }}
{{- end }}
{{- end }}
{{- end -}}

{{/*
GPU sharing's names. The reservation namespace and its service account are fixed: the
scheduler's binder and the reservation program look for them by these names.
*/}}
{{- define "kai-scheduler.reservationNamespace" -}}kai-resource-reservation{{- end -}}
{{- define "kai-scheduler.reservationServiceAccount" -}}kai-resource-reservation{{- end -}}
{{- define "kai-scheduler.webhookService" -}}{{ include "kai-scheduler.name" . | trunc 55 | trimSuffix "-" }}-webhook{{- end -}}
{{- define "kai-scheduler.webhookSecret" -}}{{ include "kai-scheduler.name" . | trunc 50 | trimSuffix "-" }}-webhook-cert{{- end -}}
{{- /* Where the scheduler reads the webhook's tls.crt and tls.key: the flag's default. */}}
{{- define "kai-scheduler.webhookCertDir" -}}/tmp/k8s-webhook-server/serving-certs{{- end -}}
{{- define "kai-scheduler.reservationImage" -}}
{{- $image := .Values.gpuSharing.reservation.image -}}
{{- printf "%s:%s" $image.repository ($image.tag | default .Chart.AppVersion) -}}
{{- end -}}

{{/*
"true" when cert-manager issues the webhook's certificate: forced by certManager true, or,
with auto, when the cluster serves cert-manager's API (helm template: --api-versions
cert-manager.io/v1). Empty when helm makes it.
*/}}
{{- define "kai-scheduler.webhookCertManager" -}}
{{- $choice := toString .Values.gpuSharing.webhook.certificate.certManager -}}
{{- if or (eq $choice "true") (and (eq $choice "auto") (.Capabilities.APIVersions.Has "cert-manager.io/v1")) -}}true{{- end -}}
{{- end -}}
