#!/usr/bin/env bash
# Generates the test cluster's PKI with openssl into DIR (usage: pki.sh DIR):
#   ca.*                 cluster CA: serving cert of kube-apiserver and all client certificates
#   apiserver.*          kube-apiserver serving cert (SANs for localhost/127.0.0.1/kubernetes.*)
#   admin.*              client cert, group system:masters (the admin kubeconfig)
#   kube-controller-manager.*, kube-scheduler.*   client certs with the bootstrap RBAC identities
#   front-proxy-ca.*     request-header CA, deliberately separate from ca.* (a cert from it may assert
#                        any user through X-Remote-* headers)
#   front-proxy-client.* the aggregator's client cert towards APIService backends
#   sa.key / sa.pub      service-account token signing key pair
set -euo pipefail
cd "$1"
days=3650

ca() { # basename common-name
  openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days $days -keyout "$1.key" -out "$1.crt" \
    -subj "/CN=$2" -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,digitalSignature,keyEncipherment,keyCertSign"
}

sign() { # basename subject ca-basename extensions
  openssl req -new -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "$2"
  printf '%b\n' "$4" >"$1.ext"
  openssl x509 -req -sha256 -days $days -in "$1.csr" -CA "$3.crt" -CAkey "$3.key" \
    -CAcreateserial -out "$1.crt" -extfile "$1.ext"
  rm -f "$1.csr" "$1.ext"
}

leaf='basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment'
server="$leaf\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,DNS:kubernetes"
server+=",DNS:kubernetes.default,DNS:kubernetes.default.svc"
server+=",DNS:kubernetes.default.svc.cluster.local,IP:127.0.0.1,IP:10.0.0.1"
client="$leaf\nextendedKeyUsage=clientAuth"

ca ca gpuscale-test-ca
ca front-proxy-ca gpuscale-test-front-proxy-ca
sign apiserver "/CN=kube-apiserver" ca "$server"
sign admin "/O=system:masters/CN=kubernetes-admin" ca "$client"
sign kube-controller-manager "/CN=system:kube-controller-manager" ca "$client"
sign kube-scheduler "/CN=system:kube-scheduler" ca "$client"
sign front-proxy-client "/CN=front-proxy-client" front-proxy-ca "$client"
openssl genrsa -out sa.key 2048
openssl rsa -in sa.key -pubout -out sa.pub
openssl verify -CAfile ca.crt apiserver.crt admin.crt kube-controller-manager.crt kube-scheduler.crt
openssl verify -CAfile front-proxy-ca.crt front-proxy-client.crt
chmod 600 ./*.key
