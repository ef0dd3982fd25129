#!/usr/bin/env bash
# Test certificates for TLS tests (unit and e2e), made fresh in DIR:
#   ca.crt/.key          the cluster's CA
#   server.crt/.key      signed by ca, for 127.0.0.1, ::1 and localhost
#   client.crt/.key      signed by ca, a client certificate
#   other-ca.crt/.key    an unrelated CA
#   other.crt/.key       signed by other-ca, for 127.0.0.1 and localhost
#   wrongname.crt/.key   signed by ca, for 10.9.9.9 and nothere.invalid only
#   unrelated.key        a key that matches no certificate
# Usage: gen-certs.sh DIR
set -euo pipefail
dir=$1
mkdir -p "$dir"
cd "$dir"
curve=(-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes)
ca() { # name subject
    openssl req -x509 "${curve[@]}" -keyout "$1.key" -out "$1.crt" \
        -days 2 -subj "/CN=$2" \
        -addext "basicConstraints=critical,CA:TRUE" \
        -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
}
leaf() { # name issuer subject san extendedKeyUsage
    openssl req "${curve[@]}" -keyout "$1.key" -out "$1.csr" \
        -subj "/CN=$3" 2>/dev/null
    printf 'subjectAltName=%s\nextendedKeyUsage=%s\nbasicConstraints=CA:FALSE\n' \
        "$4" "$5" > "$1.ext"
    openssl x509 -req -in "$1.csr" -CA "$2.crt" -CAkey "$2.key" \
        -CAcreateserial -days 2 -extfile "$1.ext" -out "$1.crt" 2>/dev/null
    rm -f "$1.csr" "$1.ext"
}
ca ca "offerd test CA"
ca other-ca "another CA"
leaf server ca "offerd test server" \
    "IP:127.0.0.1,IP:::1,DNS:localhost" "serverAuth,clientAuth"
leaf client ca "offerd test client" "DNS:client.test" "clientAuth"
leaf other other-ca "impostor" "IP:127.0.0.1,DNS:localhost" \
    "serverAuth,clientAuth"
leaf wrongname ca "elsewhere" "IP:10.9.9.9,DNS:nothere.invalid" "serverAuth"
openssl genpkey -algorithm ec -pkeyopt ec_paramgen_curve:P-256 \
    -out unrelated.key 2>/dev/null
rm -f ./*.srl
