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

{{/* Self-signed mode's CA Secret (kept across upgrades; the serving certificates are signed with it). */}}
{{- define "gpuscale.adapter.caSecret" -}}
{{ include "gpuscale.adapter.fullname" . }}-serving-ca
{{- end -}}

{{/*
Whether the reconciler's status listener gets a certificate the PodMonitor can verify:
"chart" (made here: tls.mode selfSigned or certManager), "secret" (reconciler.statusTls.secretName),
"none" (no PodMonitor, or tls.mode=insecure: the listener makes its own).
*/}}
{{- define "gpuscale.reconciler.statusTls" -}}
{{- $r := .Values.reconciler -}}
{{- if not $r.enabled -}}none
{{- else if $r.statusTls.secretName -}}secret
{{- else if not $r.podMonitor.enabled -}}none
{{- else if has .Values.adapter.tls.mode (list "selfSigned" "certManager") -}}chart
{{- else if eq .Values.adapter.tls.mode "secret" -}}
{{- fail "reconciler.podMonitor with adapter.tls.mode=secret needs reconciler.statusTls.secretName (a kubernetes.io/tls Secret with ca.crt)" -}}
{{- else -}}none
{{- end -}}
{{- end -}}

{{- define "gpuscale.reconciler.statusTlsSecret" -}}
{{ .Values.reconciler.statusTls.secretName | default (printf "%s-status-cert" (include "gpuscale.reconciler.fullname" .)) }}
{{- end -}}

{{/*
Self-signed mode's CA, as JSON {cert, key (base64 PEM), notAfter (RFC 3339), bundle}: the CA of the
Secret <adapter fullname>-serving-ca while it has more than renewBeforeDays left (so renewals of the
serving certificates keep it, and the APIServices' caBundle stays), else a new one. When a new CA
replaces an old one that is still valid, `bundle` holds both, so the aggregator trusts the old
serving certificate until the pods have read the new one; `renewed` says so. An upgrade from a
chart without the CA Secret takes the old CA from the serving Secret's ca.crt the same way.
*/}}
{{- define "gpuscale.selfSigned.ca" -}}
{{- $cfg := .Values.adapter.tls.selfSigned -}}
{{- $layout := "2006-01-02T15:04:05Z07:00" -}}
{{- $secret := lookup "v1" "Secret" .Release.Namespace (include "gpuscale.adapter.caSecret" .) | default dict -}}
{{- $data := get $secret "data" | default dict -}}
{{- $notAfter := get (get (get $secret "metadata" | default dict) "annotations" | default dict) "gpuscale.io/not-after" -}}
{{- $keep := false -}}
{{- if and (get $data "tls.crt") (get $data "tls.key") $notAfter -}}
{{- $left := sub (toDate $layout $notAfter).Unix (now).Unix -}}
{{- $keep = gt $left (mul (int $cfg.renewBeforeDays) 86400) -}}
{{- end -}}
{{- if $keep -}}
{{- dict "cert" (get $data "tls.crt") "key" (get $data "tls.key") "notAfter" $notAfter "bundle" (get $data "tls.crt") "renewed" false | toJson -}}
{{- else -}}
{{- $ca := genCA (printf "%s-ca" (include "gpuscale.fullname" .)) (int $cfg.caValidityDays) -}}
{{- $until := now | dateModify (printf "+%dh" (mul 24 (int $cfg.caValidityDays))) | date $layout -}}
{{- $old := get $data "tls.crt" -}}
{{- if not $old -}}
{{- /* A release from before the CA Secret: its CA is the ca.crt of the serving Secret. */ -}}
{{- $serving := lookup "v1" "Secret" .Release.Namespace (include "gpuscale.adapter.tlsSecret" .) | default dict -}}
{{- $old = get (get $serving "data" | default dict) "ca.crt" -}}
{{- end -}}
{{- $bundle := $ca.Cert -}}
{{- if $old -}}
{{- $bundle = printf "%s%s" $ca.Cert (b64dec $old) -}}
{{- end -}}
{{- dict "cert" ($ca.Cert | b64enc) "key" ($ca.Key | b64enc) "notAfter" $until "bundle" ($bundle | b64enc) "renewed" true | toJson -}}
{{- end -}}
{{- end -}}

{{- define "gpuscale.selfSigned.caSecret" -}}
apiVersion: v1
kind: Secret
type: kubernetes.io/tls
metadata:
  name: {{ include "gpuscale.adapter.caSecret" .root }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "gpuscale.labels" (dict "root" .root "component" "adapter") | nindent 4 }}
  annotations:
    gpuscale.io/not-after: {{ .ca.notAfter | quote }}
data:
  tls.crt: {{ .ca.cert }}
  tls.key: {{ .ca.key }}
{{- end -}}

{{/*
A serving pair for Service `service` signed by `ca`, as JSON {crt, key, notAfter}: the pair in the
Secret `secret` while it was signed by this CA and has more than renewBeforeDays left, else a new
one valid validityDays, so `helm upgrade` renews what nears its end and nothing else.
*/}}
{{- define "gpuscale.selfSigned.pair" -}}
{{- $root := .root -}}
{{- $ns := $root.Release.Namespace -}}
{{- $cfg := $root.Values.adapter.tls.selfSigned -}}
{{- $layout := "2006-01-02T15:04:05Z07:00" -}}
{{- $secret := lookup "v1" "Secret" $ns .secret | default dict -}}
{{- $data := get $secret "data" | default dict -}}
{{- $notAfter := get (get (get $secret "metadata" | default dict) "annotations" | default dict) "gpuscale.io/not-after" -}}
{{- $keep := false -}}
{{- if and (not .ca.renewed) (get $data "tls.crt") (get $data "tls.key") (eq (get $data "ca.crt") .ca.cert) $notAfter -}}
{{- $left := sub (toDate $layout $notAfter).Unix (now).Unix -}}
{{- $keep = gt $left (mul (int $cfg.renewBeforeDays) 86400) -}}
{{- end -}}
{{- if $keep -}}
{{- dict "crt" (get $data "tls.crt") "key" (get $data "tls.key") "notAfter" $notAfter | toJson -}}
{{- else -}}
{{- $ca := buildCustomCert .ca.cert .ca.key -}}
{{- $names := list .service (printf "%s.%s" .service $ns) (printf "%s.%s.svc" .service $ns) (printf "%s.%s.svc.cluster.local" .service $ns) -}}
{{- $cert := genSignedCert (printf "%s.%s.svc" .service $ns) nil $names (int $cfg.validityDays) $ca -}}
{{- $until := now | dateModify (printf "+%dh" (mul 24 (int $cfg.validityDays))) | date $layout -}}
{{- dict "crt" ($cert.Cert | b64enc) "key" ($cert.Key | b64enc) "notAfter" $until | toJson -}}
{{- end -}}
{{- end -}}

{{- define "gpuscale.selfSigned.pairSecret" -}}
apiVersion: v1
kind: Secret
type: kubernetes.io/tls
metadata:
  name: {{ .secret }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "gpuscale.labels" (dict "root" .root "component" .component) | nindent 4 }}
  annotations:
    gpuscale.io/not-after: {{ .pair.notAfter | quote }}
data:
  ca.crt: {{ .ca.cert }}
  tls.crt: {{ .pair.crt }}
  tls.key: {{ .pair.key }}
{{- end -}}

{{/*
cert-manager mode: unless issuerRef names an issuer of yours, a self-signed root, a CA certificate
(ten years) and an Issuer signing with it, as manifests/adapter/components/cert-manager makes.
*/}}
{{- define "gpuscale.certManager.ca" -}}
{{- if not .Values.adapter.tls.certManager.issuerRef -}}
{{- $labels := include "gpuscale.labels" (dict "root" . "component" "adapter") -}}
{{- $fullname := include "gpuscale.adapter.fullname" . -}}
apiVersion: cert-manager.io/v1
kind: Issuer
metadata:
  name: {{ $fullname }}-selfsigned
  namespace: {{ .Release.Namespace }}
  labels:
    {{- $labels | nindent 4 }}
spec:
  selfSigned: {}
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: {{ $fullname }}-ca
  namespace: {{ .Release.Namespace }}
  labels:
    {{- $labels | nindent 4 }}
spec:
  isCA: true
  commonName: {{ $fullname }}-ca
  secretName: {{ $fullname }}-ca
  duration: 87600h
  privateKey: {algorithm: ECDSA, size: 256}
  issuerRef: {name: {{ $fullname }}-selfsigned, kind: Issuer}
---
apiVersion: cert-manager.io/v1
kind: Issuer
metadata:
  name: {{ $fullname }}-ca
  namespace: {{ .Release.Namespace }}
  labels:
    {{- $labels | nindent 4 }}
spec:
  ca: {secretName: {{ $fullname }}-ca}
{{- end -}}
{{- end -}}

{{- define "gpuscale.certManager.certificate" -}}
{{- $root := .root -}}
{{- $tls := $root.Values.adapter.tls.certManager -}}
{{- $ns := $root.Release.Namespace -}}
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: {{ .secret }}
  namespace: {{ $ns }}
  labels:
    {{- include "gpuscale.labels" (dict "root" $root "component" .component) | nindent 4 }}
spec:
  secretName: {{ .secret }}
  duration: {{ $tls.duration }}
  renewBefore: {{ $tls.renewBefore }}
  dnsNames:
  - {{ .service }}.{{ $ns }}.svc
  - {{ .service }}.{{ $ns }}.svc.cluster.local
  privateKey: {algorithm: ECDSA, size: 256, rotationPolicy: Always}
  issuerRef:
    {{- if $tls.issuerRef }}
    {{- toYaml $tls.issuerRef | nindent 4 }}
    {{- else }}
    name: {{ include "gpuscale.adapter.fullname" $root }}-ca
    kind: Issuer
    {{- end }}
{{- end -}}
