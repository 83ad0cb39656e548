#include "gpuscale/adapter/external_metrics_remote.h"

#include <fmt/format.h>
#include <openssl/ssl.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <charconv>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>

#include "gpuscale/core/files.h"
#include "gpuscale/core/rfc3339.h"
#include "gpuscale/core/tls_client_config.h"
#include "gpuscale/prom/credentials.h"

namespace gpuscale::adapter {
namespace {

namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
using Json = nlohmann::json;
using Headers = std::vector<std::pair<std::string, std::string>>;

constexpr std::string_view kGroupVersionPath = "/apis/external.metrics.k8s.io/v1beta1";

bool isUnreserved(unsigned char c) {
  return std::isalnum(c) != 0 || c == '-' || c == '.' || c == '_' || c == '~';
}

// Percent-encodes everything but RFC 3986's unreserved characters (a path segment or a query
// value).
std::string escape(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (isUnreserved(c)) {
      out.push_back(static_cast<char>(c));
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

struct Endpoint {
  std::string host;
  std::string port = "443";
  std::string pathPrefix;  // without a trailing '/'
};

core::Result<Endpoint> parseEndpoint(const std::string& url) {
  constexpr std::string_view kScheme = "https://";
  auto invalid = [&](std::string_view why) {
    return core::Status::badRequest("invalid --external-metrics-fallback-url \"" + url +
                                    "\": " + std::string(why));
  };
  if (!std::string_view(url).starts_with(kScheme)) return invalid("must start with https://");
  std::string_view rest = std::string_view(url).substr(kScheme.size());
  const size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  Endpoint endpoint;
  if (slash != std::string_view::npos) endpoint.pathPrefix = std::string(rest.substr(slash));
  while (!endpoint.pathPrefix.empty() && endpoint.pathPrefix.back() == '/') {
    endpoint.pathPrefix.pop_back();
  }
  if (authority.empty()) return invalid("no host");
  if (authority.front() == '[') {  // [IPv6]:port
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return invalid("unterminated IPv6 address");
    endpoint.host = std::string(authority.substr(1, close - 1));
    authority.remove_prefix(close + 1);
    if (!authority.empty() && authority.front() != ':') return invalid("junk after the address");
  } else {
    const size_t colon = authority.rfind(':');
    endpoint.host = std::string(authority.substr(0, colon));
    authority = colon == std::string_view::npos ? std::string_view() : authority.substr(colon);
  }
  if (!authority.empty()) {
    endpoint.port = std::string(authority.substr(1));
    int port = 0;
    auto [end, ec] =
        std::from_chars(endpoint.port.data(), endpoint.port.data() + endpoint.port.size(), port);
    if (ec != std::errc() || end != endpoint.port.data() + endpoint.port.size() || port <= 0 ||
        port > 65535) {
      return invalid("bad port");
    }
  }
  if (endpoint.host.empty()) return invalid("no host");
  return endpoint;
}

std::string trimmed(std::string text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  size_t start = 0;
  while (start < text.size() && std::isspace(static_cast<unsigned char>(text[start]))) ++start;
  return text.substr(start);
}

// A string member of a remote's JSON object, "" when absent or not a string (json::value() would
// throw for a member of another type: the remote decides what it sends).
std::string stringMember(const Json& object, std::string_view key) {
  if (!object.is_object()) return "";
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// An integer JSON value that fits int64 (nlohmann keeps non-negative numbers as unsigned).
std::optional<int64_t> int64Value(const Json& number) {
  if (number.is_number_unsigned()) {
    const uint64_t value = number.get<uint64_t>();
    if (value > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<int64_t>(value);
  }
  if (number.is_number_integer()) return number.get<int64_t>();
  return std::nullopt;
}

core::Status badReply(std::string_view why) {
  return core::Status::internal("unable to fetch metrics: external metrics fallback: " +
                                std::string(why));
}

// A metav1.Status body passed through; nullopt when the body is not one.
std::optional<core::Status> remoteStatus(int httpCode, const Json& body) {
  if (!body.is_object() || stringMember(body, "kind") != "Status") return std::nullopt;
  core::StatusDetails details;
  if (auto it = body.find("details"); it != body.end() && it->is_object()) {
    details.present = true;
    details.name = stringMember(*it, "name");
    details.group = stringMember(*it, "group");
    details.kind = stringMember(*it, "kind");
    if (auto causes = it->find("causes"); causes != it->end() && causes->is_array()) {
      for (const Json& cause : *causes) {
        if (cause.is_object()) details.causes.push_back(stringMember(cause, "message"));
      }
    }
  }
  int code = httpCode;
  if (auto it = body.find("code"); it != body.end()) {
    const auto sent = int64Value(*it);
    if (sent) code = *sent >= 400 && *sent <= 599 ? static_cast<int>(*sent) : 0;
  }
  if (code < 400 || code > 599) code = httpCode >= 400 && httpCode <= 599 ? httpCode : 500;
  return core::Status(code, stringMember(body, "reason"), stringMember(body, "message"),
                      std::move(details));
}

core::Status errorReply(int httpCode, std::string_view body) {
  const Json parsed = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (auto status = remoteStatus(httpCode, parsed)) return *status;
  std::string excerpt(body.substr(0, 200));
  return core::Status::plain(
      fmt::format("external metrics fallback answered HTTP {}: {}", httpCode, excerpt),
      httpCode >= 400 && httpCode <= 599 ? httpCode : 502);
}

core::Result<apiserver::ExternalMetricValue> decodeItem(const Json& item) {
  if (!item.is_object()) return badReply("an item is not an object");
  apiserver::ExternalMetricValue value;
  const auto name = item.find("metricName");
  const auto quantity = item.find("value");
  const auto timestamp = item.find("timestamp");
  if (name == item.end() || !name->is_string() || quantity == item.end() ||
      !quantity->is_string() || timestamp == item.end() || !timestamp->is_string()) {
    return badReply("an item lacks metricName, timestamp or value");
  }
  value.metricName = name->get<std::string>();
  auto parsed = core::Quantity::parse(quantity->get<std::string>());
  if (!parsed) return badReply("bad value: " + parsed.status().message());
  value.value = *parsed;
  auto at = core::parseRfc3339(timestamp->get<std::string>());
  if (!at) return badReply("bad timestamp \"" + timestamp->get<std::string>() + "\"");
  value.timestamp = *at;
  if (auto labels = item.find("metricLabels"); labels != item.end() && labels->is_object()) {
    auto& map = value.metricLabels.emplace();
    for (const auto& [key, label] : labels->items()) {
      if (!label.is_string()) return badReply("a metric label is not a string");
      map.emplace(key, label.get<std::string>());
    }
  }
  if (auto window = item.find("window"); window != item.end()) {
    if (auto seconds = int64Value(*window)) value.windowSeconds = *seconds;
  }
  return value;
}

core::Result<apiserver::ExternalMetricInfo> decodeResource(const Json& resource) {
  if (!resource.is_object() || !resource.contains("name") || !resource["name"].is_string()) {
    return badReply("a resource has no name");
  }
  const auto namespaced = resource.find("namespaced");
  return apiserver::ExternalMetricInfo{
      resource["name"].get<std::string>(),
      namespaced == resource.end() || !namespaced->is_boolean() || namespaced->get<bool>()};
}

// The elements of the `field` array of a list of `kind` in a 200 answer, each decoded with
// `decodeOne`; a missing or null array is empty. Non-200 answers are errorReply().
template <typename T>
core::Result<std::vector<T>> decodeList(int httpCode, std::string_view body, std::string_view kind,
                                        std::string_view field,
                                        core::Result<T> (*decodeOne)(const Json&)) {
  if (httpCode != 200) return errorReply(httpCode, body);
  Json parsed = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object() || stringMember(parsed, "kind") != kind) {
    return badReply("the answer is not an " + std::string(kind));
  }
  std::vector<T> out;
  const auto elements = parsed.find(field);
  if (elements == parsed.end() || elements->is_null()) return out;
  if (!elements->is_array()) return badReply(std::string(field) + " is not a list");
  for (const Json& element : *elements) {
    auto decoded = decodeOne(element);
    if (!decoded) return decoded.status();
    out.push_back(std::move(*decoded));
  }
  return out;
}

}  // namespace

Headers aggregatorIdentityHeaders(const apiserver::UserInfo& user) {
  Headers headers;
  headers.emplace_back("X-Remote-User", user.name);
  if (!user.uid.empty()) headers.emplace_back("X-Remote-Uid", user.uid);
  for (const std::string& group : user.groups) headers.emplace_back("X-Remote-Group", group);
  for (const auto& [key, values] : user.extra) {
    for (const std::string& value : values) {
      headers.emplace_back("X-Remote-Extra-" + escape(key), value);
    }
  }
  return headers;
}

core::Result<std::vector<apiserver::ExternalMetricValue>> decodeExternalMetricReply(
    int httpCode, std::string_view body) {
  return decodeList<apiserver::ExternalMetricValue>(httpCode, body, "ExternalMetricValueList",
                                                    "items", decodeItem);
}

core::Result<std::vector<apiserver::ExternalMetricInfo>> decodeExternalResourceList(
    int httpCode, std::string_view body) {
  return decodeList<apiserver::ExternalMetricInfo>(httpCode, body, "APIResourceList", "resources",
                                                   decodeResource);
}

struct ExternalMetricsRemote::Impl {
  ExternalFallbackOptions options;
  Endpoint endpoint;
  std::unique_ptr<ssl::context> tls;

  struct Reply {
    int code = 0;
    std::string body;
  };

  core::Status transportFailure(std::string_view what, const beast::error_code& ec) const {
    if (ec == beast::error::timeout || ec == net::error::operation_aborted) {
      return core::Status::timeout(
          fmt::format("unable to fetch metrics: external metrics fallback {} timed out after {}",
                      options.url, core::formatGoDuration(options.timeout)));
    }
    return core::Status::unavailable(
        fmt::format("unable to fetch metrics: external metrics fallback {} unreachable: {}: {}",
                    options.url, what, ec.message()));
  }

  // One GET over a new TLS connection, bounded by options.timeout as a whole.
  core::Result<Reply> get(const std::string& target, const Headers& headers) const {
    net::io_context io;
    beast::ssl_stream<beast::tcp_stream> stream(io, *tls);
    if (!SSL_set_tlsext_host_name(stream.native_handle(), endpoint.host.c_str())) {
      return core::Status::internal("external metrics fallback: cannot set the TLS server name");
    }
    if (!options.insecureSkipTlsVerify) {
      stream.set_verify_mode(ssl::verify_peer);
      stream.set_verify_callback(ssl::host_name_verification(endpoint.host));
    }
    http::request<http::empty_body> request(http::verb::get, target, 11);
    request.set(http::field::host, endpoint.host);
    request.set(http::field::accept, "application/json");
    request.set(http::field::user_agent, "gpuscale-adapter (external metrics fallback)");
    if (!options.tokenFile.empty()) {
      auto token = core::readFile(options.tokenFile);
      if (!token)
        return core::Status::internal("external metrics fallback: " + token.status().message());
      request.set(http::field::authorization, "Bearer " + trimmed(std::move(*token)));
    }
    for (const auto& [name, value] : headers) request.insert(name, value);

    beast::get_lowest_layer(stream).expires_after(options.timeout);
    net::ip::tcp::resolver resolver(io);
    beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.header_limit(kFallbackMaxHeaderBytes);
    parser.body_limit(kFallbackMaxBodyBytes);
    std::optional<core::Status> failure;
    bool done = false;
    auto fail = [&](std::string_view what, const beast::error_code& ec) {
      failure = transportFailure(what, ec);
    };
    resolver.async_resolve(
        endpoint.host, endpoint.port,
        [&](const beast::error_code& ec, const net::ip::tcp::resolver::results_type& results) {
          if (ec) return fail("resolve", ec);
          beast::get_lowest_layer(stream).async_connect(
              results, [&](const beast::error_code& ec, const net::ip::tcp::endpoint&) {
                if (ec) return fail("connect", ec);
                stream.async_handshake(ssl::stream_base::client, [&](const beast::error_code& ec) {
                  if (ec) return fail("TLS handshake", ec);
                  http::async_write(stream, request, [&](const beast::error_code& ec, size_t) {
                    if (ec) return fail("send", ec);
                    http::async_read(stream, buffer, parser,
                                     [&](const beast::error_code& ec, size_t) {
                                       if (ec) return fail("read", ec);
                                       done = true;
                                     });
                  });
                });
              });
        });
    // The stream's own deadline ends every step; this bounds name resolution too.
    io.run_for(options.timeout + std::chrono::seconds(1));
    if (!done) {
      resolver.cancel();
      beast::get_lowest_layer(stream).close();
      io.run();
      if (!failure) failure = transportFailure("exchange", beast::error::timeout);
      return *failure;
    }
    return Reply{static_cast<int>(parser.get().result_int()), std::move(parser.get().body())};
  }
};

core::Result<std::shared_ptr<ExternalMetricsRemote>> ExternalMetricsRemote::create(
    const ExternalFallbackOptions& options) {
  auto endpoint = parseEndpoint(options.url);
  if (!endpoint) return endpoint.status();
  if (options.clientCertFile.empty() != options.clientKeyFile.empty()) {
    return core::Status::badRequest(
        "--external-metrics-fallback-client-cert-file and --external-metrics-fallback-client-key-"
        "file go together");
  }
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->endpoint = std::move(*endpoint);
  impl->tls = std::make_unique<ssl::context>(ssl::context::tls_client);
  auto tls = core::TlsClientConfig::fromFiles(options.caFile, options.clientCertFile,
                                              options.clientKeyFile);
  if (tls) {
    tls->insecureSkipTlsVerify = options.insecureSkipTlsVerify;
    if (core::Status configured = tls->configure(*impl->tls); !configured.ok()) tls = configured;
  }
  if (!tls) {
    return core::Status::badRequest(
        "external metrics fallback TLS files (--external-metrics-fallback-ca-file, "
        "-client-cert-file, -client-key-file): " +
        tls.status().message());
  }
  if (!options.tokenFile.empty()) {
    if (auto token = core::readFile(options.tokenFile); !token) {
      return core::Status::badRequest("--external-metrics-fallback-token-file: " +
                                      token.status().message());
    }
  }
  return std::shared_ptr<ExternalMetricsRemote>(new ExternalMetricsRemote(std::move(impl)));
}

void ExternalFallbackOptions::addFlags(core::FlagSet& flags) {
  constexpr std::string_view kPrefix = "external-metrics-fallback-";
  auto name = [kPrefix](std::string_view suffix) {
    return std::string(kPrefix) + std::string(suffix);
  };
  flags.addString(name("url"), &url,
                  "https URL of an external.metrics.k8s.io server: external metrics no rule serves "
                  "are forwarded to it and its discovery is merged with ours");
  flags.addString(name("ca-file"), &caFile,
                  "CA bundle that verifies the fallback (default: the "
                  "system's)");
  flags.addBool(name("insecure-skip-tls-verify"), &insecureSkipTlsVerify,
                "do not verify the fallback's certificate");
  flags.addString(name("client-cert-file"), &clientCertFile,
                  "client certificate the fallback trusts for front-proxy identity headers");
  flags.addString(name("client-key-file"), &clientKeyFile, "its key");
  flags.addString(name("token-file"), &tokenFile, "bearer token, re-read for every request");
  flags.addDuration(name("timeout"), &timeout, "bound on each forwarded request",
                    core::DurationBound::kPositive);
  flags.addDuration(name("discovery-ttl"), &discoveryTtl,
                    "how long the fallback's discovery list is reused",
                    core::DurationBound::kPositive);
}

ExternalMetricsRemote::ExternalMetricsRemote(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ExternalMetricsRemote::~ExternalMetricsRemote() = default;

const std::string& ExternalMetricsRemote::url() const { return impl_->options.url; }

core::Result<std::vector<apiserver::ExternalMetricInfo>> ExternalMetricsRemote::listMetrics()
    const {
  // A front-proxy certificate without a user would be refused (the remote's x509 step rejects it),
  // so the cached discovery list is asked for as our own user.
  apiserver::UserInfo self;
  self.name = std::string(kDiscoveryUser);
  auto reply = impl_->get(impl_->endpoint.pathPrefix + std::string(kGroupVersionPath),
                          aggregatorIdentityHeaders(self));
  if (!reply) return reply.status();
  return decodeExternalResourceList(reply->code, reply->body);
}

core::Result<std::vector<apiserver::ExternalMetricValue>> ExternalMetricsRemote::getExternalMetric(
    const apiserver::UserInfo& caller, std::string_view rawLabelSelector,
    std::string_view namespaceName, std::string_view metric) const {
  std::string target = impl_->endpoint.pathPrefix + std::string(kGroupVersionPath) +
                       "/namespaces/" + escape(namespaceName) + "/" + escape(metric);
  if (!rawLabelSelector.empty()) target += "?labelSelector=" + escape(rawLabelSelector);
  auto reply = impl_->get(target, aggregatorIdentityHeaders(caller));
  if (!reply) return reply.status();
  return decodeExternalMetricReply(reply->code, reply->body);
}

}  // namespace gpuscale::adapter
