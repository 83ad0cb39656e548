{{/*
Names. As the prometheus-community charts do: the chart's name (nameOverride), the release's full
name (fullnameOverride, or the release name when it already contains the chart's name, else
"<release>-<name>"), and one full name per component ("<fullname>-adapter", "<fullname>-reconciler").
Every object is named after its component's full name, so `helm install gpuscale` gives the
objects of manifests/ (gpuscale-adapter, gpuscale-reconciler, ...) and another release name gives
other names. Names are cut to 63 characters (a label value's limit).
*/}}
{{- define "gpuscale.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "gpuscale.fullname" -}}
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

{{- define "gpuscale.adapter.fullname" -}}
{{- printf "%s-adapter" (include "gpuscale.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "gpuscale.reconciler.fullname" -}}
{{- printf "%s-reconciler" (include "gpuscale.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
The ServiceAccount a component's pods run as: its own (serviceAccount.create, named
serviceAccount.name or the component's full name), or an existing one (serviceAccount.name,
required then: running as the namespace's "default" account would hide a missing permission).
Argument: dict "root" $ "component" "adapter"|"reconciler".
*/}}
{{- define "gpuscale.serviceAccountName" -}}
{{- $sa := (index .root.Values .component).serviceAccount -}}
{{- if $sa.create -}}
{{- default (include (printf "gpuscale.%s.fullname" .component) .root) $sa.name -}}
{{- else -}}
{{- required (printf "%s.serviceAccount.name is required when %s.serviceAccount.create is false" .component .component) $sa.name -}}
{{- end -}}
{{- end -}}

{{/*
The labels a component's pods carry and its Deployment, Service, PodDisruptionBudget and
NetworkPolicy select on. They stay the same across chart versions (a Deployment's selector cannot
change on upgrade) and equal those of manifests/ for the release name gpuscale.
Argument: dict "root" $ "component" "adapter"|"reconciler".
*/}}
{{- define "gpuscale.selectorLabels" -}}
{{- if eq .component "adapter" -}}
app.kubernetes.io/name: {{ include "gpuscale.adapter.fullname" .root }}
{{- else -}}
app: {{ include "gpuscale.reconciler.fullname" .root }}
{{- end -}}
{{- end -}}

{{/* Labels every object of a component carries. Argument: dict "root" $ "component" "adapter"|"reconciler". */}}
{{- define "gpuscale.labels" -}}
app.kubernetes.io/name: {{ include (printf "gpuscale.%s.fullname" .component) .root }}
app.kubernetes.io/component: {{ .component }}
app.kubernetes.io/part-of: gpuscale
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ .root.Chart.Name }}-{{ .root.Chart.Version | replace "+" "_" }}
{{- end -}}

{{/*
A component's image: repository, and tag defaulting to the chart's appVersion (the release the
chart was made with). Argument: dict "root" $ "image" <component>.image.
*/}}
{{- define "gpuscale.image" -}}
{{ .image.repository }}:{{ .image.tag | default .root.Chart.AppVersion }}
{{- end -}}

{{/*
Scheduling and pod-level settings shared by both Deployments: affinity (the component's value, or
by default a preferred anti-affinity that spreads the replicas over nodes), topology spread,
nodeSelector, tolerations, priority class and the pod's securityContext. Rendered at the pod
spec's indentation. Argument: dict "root" $ "component" "adapter"|"reconciler".
*/}}
{{- define "gpuscale.podScheduling" -}}
{{- $c := index .root.Values .component -}}
{{- with $c.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- with $c.podSecurityContext }}
securityContext:
  {{- toYaml . | nindent 2 }}
{{- end }}
affinity:
{{- if $c.affinity }}
  {{- toYaml $c.affinity | nindent 2 }}
{{- else }}
  podAntiAffinity:
    # Spread the replicas over nodes so one node going away never takes them all down; preferred
    # so a one-node cluster still runs both.
    preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 100
      podAffinityTerm:
        topologyKey: kubernetes.io/hostname
        labelSelector:
          matchLabels:
            {{- include "gpuscale.selectorLabels" . | nindent 12 }}
{{- end }}
{{- with $c.topologySpreadConstraints }}
topologySpreadConstraints:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $c.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $c.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* The serving-certificate Secret of the adapter (modes selfSigned, secret, certManager). */}}
{{- define "gpuscale.adapter.tlsSecret" -}}
{{- if eq .Values.adapter.tls.mode "secret" -}}
{{ required "adapter.tls.secretName is required with tls.mode=secret" .Values.adapter.tls.secretName }}
{{- else -}}
{{ include "gpuscale.adapter.fullname" . }}-serving-cert
{{- end -}}
{{- end -}}

{{/*
The CA bundle (base64) of the adapter's serving certificate for the APIServices, and the Secret
data in selfSigned mode: generated once, then read back from the cluster on upgrades so that the
caBundle and the certificate stay a pair.
*/}}
{{- define "gpuscale.adapter.selfSigned" -}}
{{- $secretName := include "gpuscale.adapter.tlsSecret" . -}}
{{- $existing := lookup "v1" "Secret" .Release.Namespace $secretName -}}
{{- if and $existing (index $existing.data "ca.crt") -}}
{{- dict "ca" (index $existing.data "ca.crt") "crt" (index $existing.data "tls.crt") "key" (index $existing.data "tls.key") | toJson -}}
{{- else -}}
{{- $service := include "gpuscale.adapter.fullname" . -}}
{{- $names := list $service (printf "%s.%s" $service .Release.Namespace) (printf "%s.%s.svc" $service .Release.Namespace) -}}
{{- $ca := genCA (printf "%s-ca" $service) 3650 -}}
{{- $cert := genSignedCert (printf "%s.%s.svc" $service .Release.Namespace) nil $names 3650 $ca -}}
{{- dict "ca" ($ca.Cert | b64enc) "crt" ($cert.Cert | b64enc) "key" ($cert.Key | b64enc) | toJson -}}
{{- end -}}
{{- end -}}
