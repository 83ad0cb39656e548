// HTTP request and response values exchanged between the HTTPS server and the API handlers.
//
// The server parses the wire bytes into an HttpRequest (path already percent-decoded, query kept
// raw) and writes back whatever HttpResponse the handler returns. Handlers never see sockets; tests
// build HttpRequests directly. The TLS peer certificates travel with each request so authentication
// (front proxy, x509) can decide per connection who is calling.
//
// Thread safety: plain values; a PeerCertificates object is immutable and shared by every request
// on its connection.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuscale::apiserver {

// The client certificates a TLS peer presented, as seen after the handshake. The server requests a
// certificate but does not require one, and never fails the handshake over a bad one: `verified`
// says whether the chain verified against the union of the configured client CA bundles, and
// authentication decides what to do.
struct PeerCertificates {
  std::vector<std::string> chainDer;       // leaf first; DER bytes
  bool verified = false;                   // chain verified against the configured client CAs
  std::string verifyError;                 // OpenSSL's reason when !verified
  std::string commonName;                  // leaf subject CN
  std::vector<std::string> organizations;  // leaf subject O entries, in order
};

using Header = std::pair<std::string, std::string>;

struct HttpRequest {
  std::string method;           // as sent, e.g. "GET"
  std::string target;           // the raw request-target
  std::string path;             // percent-decoded path ("%2A" -> "*")
  std::string rawQuery;         // the part after '?', undecoded
  std::vector<Header> headers;  // in arrival order; repeated headers stay separate
  std::string body;
  bool secure = false;  // arrived over TLS
  std::string remoteAddress;
  std::shared_ptr<const PeerCertificates> peer;  // null without TLS or without a client certificate

  // First value of the header `name` (case-insensitive), if present.
  std::optional<std::string_view> header(std::string_view name) const;
  // Every value of the header `name` (case-insensitive), in arrival order.
  std::vector<std::string_view> headerValues(std::string_view name) const;
};

struct HttpResponse {
  int status = 200;
  std::string contentType;
  std::string body;
  std::vector<Header> headers;   // extra headers (Retry-After, Cache-Control, ...)
  bool closeConnection = false;  // ask the server to close after writing
};

}  // namespace gpuscale::apiserver
