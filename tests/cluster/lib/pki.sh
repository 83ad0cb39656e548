#!/usr/bin/env bash
# Generates the test cluster's PKI with openssl into DIR (usage: pki.sh DIR [NODE_NAME NODE_IP]):
#   ca.*                 cluster CA: serving cert of kube-apiserver and all client certificates
#   apiserver.*          kube-apiserver serving cert (SANs for localhost/127.0.0.1/kubernetes.*)
#   admin.*              client cert, group system:masters (the admin kubeconfig)
#   kube-controller-manager.*, kube-scheduler.*   client certs with the bootstrap RBAC identities
#   front-proxy-ca.*     request-header CA, deliberately separate from ca.* (a cert from it may assert
#                        any user through X-Remote-* headers)
#   front-proxy-client.* the aggregator's client cert towards APIService backends
#   sa.key / sa.pub      service-account token signing key pair
# With NODE_NAME and NODE_IP (the real node, up.sh --real-node) also, all signed by ca.*:
#   kubelet-client.*     the kubelet's client cert (CN system:node:NODE_NAME, O system:nodes: Node
#                        authorizer + NodeRestriction)
#   kubelet-server.*     the kubelet's serving cert (NODE_IP, NODE_NAME), checked by kube-apiserver
#   apiserver-kubelet-client.*  kube-apiserver's client cert towards the kubelet (logs, exec)
#   kube-proxy.*         CN system:kube-proxy (bootstrap RBAC binds it to system:node-proxier)
# and NODE_IP joins the apiserver's SANs (kube-apiserver then serves on that address).set -euo pipefail
cd "$1"
node_name=${2:-}
node_ip=${3:-}
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
[ -z "$node_ip" ] || server+=",IP:$node_ip"
client="$leaf\nextendedKeyUsage=clientAuth"

ca ca gpuscale-test-ca
ca front-proxy-ca gpuscale-test-front-proxy-ca
sign apiserver "/CN=kube-apiserver" ca "$server"
sign admin "/O=system:masters/CN=kubernetes-admin" ca "$client"
sign kube-controller-manager "/CN=system:kube-controller-manager" ca "$client"
sign kube-scheduler "/CN=system:kube-scheduler" ca "$client"
sign front-proxy-client "/CN=front-proxy-client" front-proxy-ca "$client"
node_certs=()
if [ -n "$node_name" ]; then
  sign kubelet-client "/O=system:nodes/CN=system:node:$node_name" ca "$client"
  sign kubelet-server "/CN=$node_name" ca \
    "$leaf\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:$node_name,IP:$node_ip"
  sign apiserver-kubelet-client "/CN=kube-apiserver-kubelet-client" ca "$client"
  sign kube-proxy "/CN=system:kube-proxy" ca "$client"
  node_certs=(kubelet-client.crt kubelet-server.crt apiserver-kubelet-client.crt kube-proxy.crt)
fi
openssl genrsa -out sa.key 2048
openssl rsa -in sa.key -pubout -out sa.pub
openssl verify -CAfile ca.crt apiserver.crt admin.crt kube-controller-manager.crt kube-scheduler.crt \
  "${node_certs[@]}"
openssl verify -CAfile front-proxy-ca.crt front-proxy-client.crt
chmod 600 ./*.key
