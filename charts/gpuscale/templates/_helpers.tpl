{{/* Labels every object of a component carries; $component is "adapter" or "reconciler". */}}
{{- define "gpuscale.labels" -}}
app.kubernetes.io/name: gpuscale-{{ .component }}
app.kubernetes.io/part-of: gpuscale
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ .root.Chart.Name }}-{{ .root.Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "gpuscale.image" -}}
{{ .repository }}:{{ .tag }}
{{- end -}}

{{/* The serving-certificate Secret of the adapter (modes selfSigned, secret, certManager). */}}
{{- define "gpuscale.adapter.tlsSecret" -}}
{{- if eq .Values.adapter.tls.mode "secret" -}}
{{ required "adapter.tls.secretName is required with tls.mode=secret" .Values.adapter.tls.secretName }}
{{- else -}}
gpuscale-adapter-serving-cert
{{- end -}}
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
{{ .Values.reconciler.statusTls.secretName | default "gpuscale-reconciler-status-cert" }}
{{- end -}}

{{/*
Self-signed mode's CA, as JSON {cert, key (base64 PEM), notAfter (RFC 3339), bundle}: the CA of the
Secret gpuscale-adapter-serving-ca while it has more than renewBeforeDays left (so renewals of the
serving certificates keep it, and the APIServices' caBundle stays), else a new one. When a new CA
replaces an old one that is still valid, `bundle` holds both, so the aggregator trusts the old
serving certificate until the pods have read the new one; `renewed` says so.
*/}}
{{- define "gpuscale.selfSigned.ca" -}}
{{- $cfg := .Values.adapter.tls.selfSigned -}}
{{- $layout := "2006-01-02T15:04:05Z07:00" -}}
{{- $secret := lookup "v1" "Secret" .Release.Namespace "gpuscale-adapter-serving-ca" | default dict -}}
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
{{- $ca := genCA "gpuscale-ca" (int $cfg.caValidityDays) -}}
{{- $until := now | dateModify (printf "+%dh" (mul 24 (int $cfg.caValidityDays))) | date $layout -}}
{{- $bundle := $ca.Cert -}}
{{- if get $data "tls.crt" -}}
{{- $bundle = printf "%s%s" $ca.Cert (b64dec (get $data "tls.crt")) -}}
{{- end -}}
{{- dict "cert" ($ca.Cert | b64enc) "key" ($ca.Key | b64enc) "notAfter" $until "bundle" ($bundle | b64enc) "renewed" true | toJson -}}
{{- end -}}
{{- end -}}

{{- define "gpuscale.selfSigned.caSecret" -}}
apiVersion: v1
kind: Secret
type: kubernetes.io/tls
metadata:
  name: gpuscale-adapter-serving-ca
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
apiVersion: cert-manager.io/v1
kind: Issuer
metadata:
  name: gpuscale-adapter-selfsigned
  namespace: {{ .Release.Namespace }}
  labels:
    {{- $labels | nindent 4 }}
spec:
  selfSigned: {}
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: gpuscale-adapter-ca
  namespace: {{ .Release.Namespace }}
  labels:
    {{- $labels | nindent 4 }}
spec:
  isCA: true
  commonName: gpuscale-adapter-ca
  secretName: gpuscale-adapter-ca
  duration: 87600h
  privateKey: {algorithm: ECDSA, size: 256}
  issuerRef: {name: gpuscale-adapter-selfsigned, kind: Issuer}
---
apiVersion: cert-manager.io/v1
kind: Issuer
metadata:
  name: gpuscale-adapter-ca
  namespace: {{ .Release.Namespace }}
  labels:
    {{- $labels | nindent 4 }}
spec:
  ca: {secretName: gpuscale-adapter-ca}
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
    name: gpuscale-adapter-ca
    kind: Issuer
    {{- end }}
{{- end -}}
