"""Recomputes the AWS SigV4 Authorization header of a recorded request with botocore and compares it
with the one the request carried. Exit 0 when they match.

usage: verify_sigv4.py REQUEST.json (method, path, query, headers (lower-case names), body, region,
service, as the recording server saw them; the keys come from the environment)."""
import datetime
import json
import os
import sys

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

wire = json.load(open(sys.argv[1]))
headers = wire["headers"]
url = f"http://{headers['host']}{wire['path']}" + (f"?{wire['query']}" if wire["query"] else "")
request = AWSRequest(method=wire["method"], url=url, data=wire["body"].encode())
request.headers["X-Amz-Date"] = headers["x-amz-date"]
credentials = Credentials(os.environ["AWS_ACCESS_KEY_ID"], os.environ["AWS_SECRET_ACCESS_KEY"],
                          os.environ.get("AWS_SESSION_TOKEN"))
signer = SigV4Auth(credentials, wire["service"], wire["region"])
# botocore signs every header it is given; give it exactly the ones the request says it signed.
signed = headers["authorization"].split("SignedHeaders=")[1].split(",")[0].split(";")
for name in signed:
    if name not in ("host", "x-amz-date"):
        request.headers[name] = headers[name]
stamp = datetime.datetime.strptime(headers["x-amz-date"], "%Y%m%dT%H%M%SZ")
request.context["timestamp"] = headers["x-amz-date"]
canonical = signer.canonical_request(request)
string_to_sign = signer.string_to_sign(request, canonical)
signature = signer.signature(string_to_sign, request)
expected = (f"AWS4-HMAC-SHA256 Credential={credentials.access_key}/{stamp:%Y%m%d}/{wire['region']}/"
            f"{wire['service']}/aws4_request, SignedHeaders={';'.join(sorted(signed))}, "
            f"Signature={signature}")
if headers["authorization"] != expected:
    print("sent:     " + headers["authorization"])
    print("botocore: " + expected)
    print("botocore's canonical request:\n" + canonical)
    sys.exit(1)
print("signature verified by botocore")
