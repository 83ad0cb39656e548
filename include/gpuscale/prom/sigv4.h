// AWS Signature Version 4 for requests to a Prometheus-compatible API behind AWS IAM (Amazon
// Managed Service for Prometheus: service "aps"). The HTTP client signs every request with it when
// `--prometheus-sigv4-region` is set (see http_client.h).
//
// What is signed: the method, the path as sent, the query in canonical form (the client sends the
// query in exactly that form, so the server's canonical query equals ours), the headers `host`,
// `x-amz-date` and, with temporary credentials, `x-amz-security-token`, and the SHA-256 of the
// body. The path is encoded once more for every service but S3, as the algorithm requires.
//
// Pure functions, no I/O: the clock and the credentials are arguments. Thread safety: none needed.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuscale::prom {

struct AwsCredentials {
  std::string accessKeyId;
  std::string secretAccessKey;
  std::string sessionToken;  // temporary credentials only
};

struct SigV4Scope {
  std::string region;
  std::string service = "aps";
};

struct SignableRequest {
  std::string method;  // GET, POST
  std::string host;    // the Host header: host, or host:port when the port is not the default
  std::string path;    // as sent, percent-encoded
  std::string query;   // as it would be sent (form encoding: '+' is a space); canonicalised
  std::string payload;
};

struct SignedRequest {
  std::string query;  // send this query string (canonical form)
  std::vector<std::pair<std::string, std::string>> headers;  // add these headers
  // What was signed, for logs and tests.
  std::string canonicalRequest;
  std::string stringToSign;
};

// The canonical query string: each name and value decoded ('+' as a space), encoded again with
// only unreserved characters left as they are, and sorted by name, then value.
std::string canonicalQueryString(std::string_view query);

// Signs `request` at `now`. `headers` carries X-Amz-Date, X-Amz-Security-Token (temporary
// credentials) and Authorization.
SignedRequest signV4(const SignableRequest& request, const AwsCredentials& credentials,
                     const SigV4Scope& scope, std::chrono::system_clock::time_point now);

// Lower-case hex SHA-256, used for the payload hash (exposed for tests).
std::string sha256Hex(std::string_view data);

}  // namespace gpuscale::prom
