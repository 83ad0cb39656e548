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
The CA bundle (base64) of the adapter's serving certificate for the APIServices, and the Secret
data in selfSigned mode: generated once, then read back from the cluster on upgrades so that the
caBundle and the certificate stay a pair.
*/}}
{{- define "gpuscale.adapter.selfSigned" -}}
{{- $secretName := "gpuscale-adapter-serving-cert" -}}
{{- $existing := lookup "v1" "Secret" .Release.Namespace $secretName -}}
{{- if and $existing (index $existing.data "ca.crt") -}}
{{- dict "ca" (index $existing.data "ca.crt") "crt" (index $existing.data "tls.crt") "key" (index $existing.data "tls.key") | toJson -}}
{{- else -}}
{{- $service := "gpuscale-adapter" -}}
{{- $names := list $service (printf "%s.%s" $service .Release.Namespace) (printf "%s.%s.svc" $service .Release.Namespace) -}}
{{- $ca := genCA "gpuscale-adapter-ca" 3650 -}}
{{- $cert := genSignedCert (printf "%s.%s.svc" $service .Release.Namespace) nil $names 3650 $ca -}}
{{- dict "ca" ($ca.Cert | b64enc) "crt" ($cert.Cert | b64enc) "key" ($cert.Key | b64enc) | toJson -}}
{{- end -}}
{{- end -}}
