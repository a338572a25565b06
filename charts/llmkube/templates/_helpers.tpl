{{/* The chart's name: nameOverride, else the chart's. */}}
{{- define "llmkube.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The prefix of every object's name, at most 63 characters: fullnameOverride, else the release
name, followed by the chart's name unless the release name already holds it. */}}
{{- define "llmkube.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := include "llmkube.name" . -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "llmkube.selectorLabels" -}}
app.kubernetes.io/name: {{ include "llmkube.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end -}}

{{- define "llmkube.labels" -}}
{{ include "llmkube.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* An image reference from {repository, tag, digest} and the chart's appVersion: repository@digest
when a digest is set, else repository:tag, the tag defaulting to appVersion. */}}
{{- define "llmkube.image" -}}
{{- if .image.digest -}}
{{- printf "%s@%s" .image.repository .image.digest -}}
{{- else -}}
{{- printf "%s:%s" .image.repository (.image.tag | default .appVersion) -}}
{{- end -}}
{{- end -}}

{{- define "llmkube.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "llmkube.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* Combinations the schema cannot say. */}}
{{- define "llmkube.validate" -}}
{{- if and .Values.metrics.emitScrapeAnnotations .Values.metrics.inferencePodMonitor.enabled -}}
{{- fail "metrics.emitScrapeAnnotations and metrics.inferencePodMonitor.enabled are alternatives: both would make Prometheus scrape every inference pod twice. Enable one." -}}
{{- end -}}
{{- if and (gt (int .Values.replicaCount) 1) (not .Values.leaderElection.enabled) -}}
{{- fail "replicaCount > 1 needs leaderElection.enabled: two operators without a leader would both write." -}}
{{- end -}}
{{- end -}}
