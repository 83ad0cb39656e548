#!/usr/bin/env bash
# The chart's self-signed certificates across `helm upgrade`, against the test cluster's control
# plane (the chart reads its Secrets back with `lookup`, which needs a cluster; no node is needed,
# the pods may stay Pending):
#   1. install: a CA (ten years) in Secret gpuscale-adapter-serving-ca, a one-year serving
#      certificate it signs in gpuscale-adapter-serving-cert, that CA in every APIService's caBundle;
#   2. an upgrade far from expiry changes nothing (same serial, same CA);
#   3. an upgrade when the serving certificate has fewer than 90 days left (its recorded end moved
#      closer) issues a new one from the same CA: the caBundle does not change;
#   4. an upgrade when the CA nears its end makes a new CA and a pair it signs, and the caBundle
#      holds the new and the old CA (the running pods still serve the old pair); the next upgrade
#      drops the old one;
#   5. an upgrade from a release that has no CA Secret yet (0.1.0 kept its CA only as the serving
#      Secret's ca.crt) makes a CA and keeps the old one in the caBundle for that upgrade.
# Exit 77 (skipped) when the cluster binaries or helm are missing.
set -euo pipefail

# shellcheck source=../lib/common.sh
source "$(dirname "$0")/../lib/common.sh"
e2e_init chart-tls
e2e_require_cluster
e2e_require "$bin/helm" /usr/bin/openssl /usr/bin/python3

step "start the control plane"
e2e_cluster_up
export HELM_CACHE_HOME=$work/helm HELM_CONFIG_HOME=$work/helm HELM_DATA_HOME=$work/helm
helm_apply() { # install|upgrade
  "$bin/helm" "$1" gpuscale "$src/charts/gpuscale" --namespace gpuscale --create-namespace \
    --set reconciler.enabled=false >/dev/null
}
data() { # secret key
  kc -n gpuscale get secret "$1" -o jsonpath="{.data.${2//./\\.}}" | base64 -d
}
serial() { data gpuscale-adapter-serving-cert tls.crt | openssl x509 -noout -serial; }
ca_serial() { data gpuscale-adapter-serving-ca tls.crt | openssl x509 -noout -serial; }
days_left() { # secret key
  data "$1" "$2" | python3 -c '
import datetime, subprocess, sys
end = subprocess.run(["openssl", "x509", "-noout", "-enddate"], input=sys.stdin.buffer.read(),
                     capture_output=True).stdout.decode().strip().split("=", 1)[1]
end = datetime.datetime.strptime(end, "%b %d %H:%M:%S %Y %Z")
print((end - datetime.datetime.utcnow()).days)'
}
bundle_serials() {
  kc get apiservice v1beta1.custom.metrics.k8s.io -o jsonpath='{.spec.caBundle}' | base64 -d |
    python3 -c '
import re, subprocess, sys
for pem in re.findall(r"-----BEGIN CERTIFICATE-----.*?-----END CERTIFICATE-----", sys.stdin.read(), re.S):
    print(subprocess.run(["openssl", "x509", "-noout", "-serial"], input=pem.encode(),
                         capture_output=True).stdout.decode().strip())'
}
bundle_holds() { # serial...: the caBundle holds exactly these CAs
  [ "$(bundle_serials | sort | tr '\n' ' ')" = "$(printf '%s\n' "$@" | sort | tr '\n' ' ')" ]
}
verified() {
  openssl verify -CAfile <(data gpuscale-adapter-serving-ca tls.crt) \
    <(data gpuscale-adapter-serving-cert tls.crt) >/dev/null
}
near_end() { # secret days
  local when
  when=$(date -u -d "+$2 days" +%Y-%m-%dT%H:%M:%SZ)
  kc -n gpuscale annotate secret "$1" --overwrite "gpuscale.io/not-after=$when" >/dev/null
}
upgrade_near_end() { # secret: helm upgrade once the secret's recorded end is 30 days away
  near_end "$1" 30
  helm_apply upgrade
}

step "1. helm install: CA and serving certificate, the CA in the caBundle"
helm_apply install
[ "$(days_left gpuscale-adapter-serving-cert tls.crt)" -ge 364 ] || die "the serving certificate is not a one-year one"
[ "$(days_left gpuscale-adapter-serving-ca tls.crt)" -ge 3649 ] || die "the CA is not a ten-year one"
verified || die "the serving certificate is not signed by the CA"
bundle_holds "$(ca_serial)" || die "caBundle: $(bundle_serials), CA: $(ca_serial)"
first=$(serial) ca=$(ca_serial)

step "2. helm upgrade far from expiry: nothing changes"
helm_apply upgrade
[ "$(serial)" = "$first" ] || die "the serving certificate changed"
[ "$(ca_serial)" = "$ca" ] && bundle_holds "$ca" || die "the CA changed"

step "3. helm upgrade with 30 days left: a new serving certificate, the same CA"
upgrade_near_end gpuscale-adapter-serving-cert
second=$(serial)
[ "$second" != "$first" ] || die "the serving certificate was not renewed"
[ "$(days_left gpuscale-adapter-serving-cert tls.crt)" -ge 364 ] || die "the renewal is not a one-year certificate"
verified || die "the renewal is not signed by the CA"
[ "$(ca_serial)" = "$ca" ] && bundle_holds "$ca" || die "the CA changed with the renewal"

step "4. helm upgrade with the CA near its end: a new CA, both in the caBundle, then the new one alone"
upgrade_near_end gpuscale-adapter-serving-ca
new_ca=$(ca_serial)
[ "$new_ca" != "$ca" ] || die "the CA was not renewed"
verified || die "the serving certificate is not signed by the new CA"
[ "$(serial)" != "$second" ] || die "the serving certificate was not issued again"
bundle_holds "$new_ca" "$ca" || die "the caBundle does not hold both CAs: $(bundle_serials)"
helm_apply upgrade
bundle_holds "$new_ca" || die "the old CA stayed in the caBundle: $(bundle_serials)"

step "5. helm upgrade from a release without the CA Secret (0.1.0): the old CA stays in the caBundle"
kc -n gpuscale delete secret gpuscale-adapter-serving-ca >/dev/null
helm_apply upgrade
newer_ca=$(ca_serial)
[ "$newer_ca" != "$new_ca" ] || die "no new CA"
verified || die "the serving certificate is not signed by the new CA"
bundle_holds "$newer_ca" "$new_ca" ||
  die "the caBundle does not hold the serving Secret's old CA: $(bundle_serials)"
helm_apply upgrade
bundle_holds "$newer_ca" || die "the old CA stayed in the caBundle: $(bundle_serials)"
echo "PASS"
