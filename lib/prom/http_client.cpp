#include "gpuscale/prom/http_client.h"

#include <cpprest/http_client.h>
#include <openssl/evp.h>
#include <pplx/threadpool.h>
#include <boost/algorithm/string/predicate.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <utility>

#include "gpuscale/core/duration.h"
#include "gpuscale/prom/errors.h"
#include "gpuscale/prom/wire.h"
#include "token_file.h"

namespace gpuscale::prom {
namespace {

namespace http = web::http;
constexpr size_t kChunkBytes = 64 * 1024;

struct RawResponse {
  int status = 0;
  std::string body;
};
using RawCallback = std::function<void(Result<RawResponse>)>;

enum class Abort : int { kNone, kTimeout, kTooLarge };

// One HTTP exchange: its deadline timer, its cancellation and the body read so far.
struct Exchange {
  Exchange(boost::asio::io_service& io, std::string what, RawCallback done)
      : timer(io), what(std::move(what)), done(std::move(done)) {}

  void abort(Abort reason) {
    int expected = static_cast<int>(Abort::kNone);
    aborted.compare_exchange_strong(expected, static_cast<int>(reason));
    cancel.cancel();
  }

  void finish(Result<RawResponse> result) {
    if (finished.exchange(true)) return;
    timer.cancel();
    try {
      done(std::move(result));
    } catch (...) {
      // A throwing callback must not surface as an unobserved pplx task exception.
    }
  }

  boost::asio::steady_timer timer;
  pplx::cancellation_token_source cancel;
  std::atomic<int> aborted{static_cast<int>(Abort::kNone)};
  std::atomic<bool> finished{false};
  std::string what;
  RawCallback done;
  RawResponse response;
  std::vector<unsigned char> chunk;
};

bool isLoopbackHost(const std::string& host) {
  return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1" || host == "[::1]";
}

// Applies the TLS material to a context; throws boost::system::system_error on bad PEM.
void applyTls(boost::asio::ssl::context& ctx, const Credentials& credentials) {
  if (!credentials.caPem.empty()) {
    ctx.add_certificate_authority(boost::asio::buffer(credentials.caPem));
  }
  if (!credentials.clientCertPem.empty()) {
    ctx.use_certificate_chain(boost::asio::buffer(credentials.clientCertPem));
    ctx.use_private_key(boost::asio::buffer(credentials.clientKeyPem),
                        boost::asio::ssl::context::pem);
  }
}

std::string base64(std::string_view text) {
  std::string out(4 * ((text.size() + 2) / 3), '\0');
  EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                  reinterpret_cast<const unsigned char*>(text.data()),
                  static_cast<int>(text.size()));
  return out;
}

}  // namespace

struct HttpClient::Connection {
  Connection(PrometheusOptions opts, Credentials creds, const web::uri& url,
             const http::client::http_client_config& config)
      : options(std::move(opts)),
        credentials(std::move(creds)),
        basePath(url.path()),
        baseQuery(url.query()),
        origin(url.scheme() + "://" + url.authority().host() +
               (url.port() > 0 ? ":" + std::to_string(url.port()) : "")),
        http(web::uri(origin), config) {
    if (!credentials.tokenFile.empty())
      tokenFile = std::make_unique<TokenFile>(credentials.tokenFile);
    for (const auto& [name, value] : options.headers) {
      if (boost::iequals(name, "Authorization")) explicitAuthorization = true;
    }
  }

  void exchange(std::string_view apiPath, const Params& params, RawCallback done);
  Result<http::http_request> buildRequest(const std::string& path, const Params& params);
  void readBody(std::shared_ptr<Exchange> ex, concurrency::streams::streambuf<uint8_t> body);
  Status classify(const Exchange& ex, std::exception_ptr error) const;

  PrometheusOptions options;
  Credentials credentials;
  std::string basePath;
  std::string baseQuery;
  std::string origin;
  http::client::http_client http;
  std::unique_ptr<TokenFile> tokenFile;
  bool explicitAuthorization = false;
  std::atomic<uint64_t> requests{0};
  std::atomic<uint64_t> failures{0};
  std::atomic<uint64_t> bodyBytes{0};
};

Result<http::http_request> HttpClient::Connection::buildRequest(const std::string& path,
                                                                const Params& params) {
  bool post = options.verb == HttpVerb::kPost;
  http::http_request request(post ? http::methods::POST : http::methods::GET);
  std::string encoded = encodeParams(params);
  std::string target = path;
  std::string query = baseQuery;
  if (!post && !encoded.empty()) query += (query.empty() ? "" : "&") + encoded;
  if (!query.empty()) target += "?" + query;
  request.set_request_uri(web::uri(target));
  if (post) {
    // The byte-vector overload: cpprestsdk's string overload reinterprets a char stream buffer as
    // an unsigned-char one, which UndefinedBehaviorSanitizer rejects. The content type set first is
    // kept.
    request.headers().set_content_type("application/x-www-form-urlencoded");
    request.set_body(std::vector<unsigned char>(encoded.begin(), encoded.end()));
  }
  auto& headers = request.headers();
  headers.add("Accept", "application/json");
  for (const auto& [name, value] : options.headers) headers.add(name, value);
  if (!explicitAuthorization) {
    if (tokenFile) {
      auto token = tokenFile->token();
      if (!token) return token.status();
      headers.add("Authorization", "Bearer " + *token);
    } else if (!credentials.bearerToken.empty()) {
      headers.add("Authorization", "Bearer " + credentials.bearerToken);
    } else if (!credentials.basicAuth.empty()) {
      headers.add("Authorization", "Basic " + base64(credentials.basicAuth));
    }
  }
  return request;
}

Status HttpClient::Connection::classify(const Exchange& ex, std::exception_ptr error) const {
  auto aborted = static_cast<Abort>(ex.aborted.load());
  auto timedOut = [&] {
    return failure(FailureKind::kTimeout, "no complete answer within " +
                                              formatTimeout(options.timeout) + " from " + ex.what);
  };
  if (aborted == Abort::kTimeout) return timedOut();
  if (aborted == Abort::kTooLarge) {
    return failure(FailureKind::kBodyTooLarge,
                   "more than " + std::to_string(options.maxBodyBytes) + " bytes from " + ex.what);
  }
  try {
    std::rethrow_exception(error);
  } catch (const http::http_exception& e) {
    if (e.error_code() == std::errc::timed_out) return timedOut();
    return failure(FailureKind::kConnection, std::string(e.what()) + " (" + ex.what + ")");
  } catch (const pplx::task_canceled&) {
    return failure(FailureKind::kConnection, "request cancelled (" + ex.what + ")");
  } catch (const std::exception& e) {
    return failure(FailureKind::kConnection, std::string(e.what()) + " (" + ex.what + ")");
  }
}

void HttpClient::Connection::readBody(std::shared_ptr<Exchange> ex,
                                      concurrency::streams::streambuf<uint8_t> body) {
  body.getn(ex->chunk.data(), ex->chunk.size()).then([this, ex, body](pplx::task<size_t> read) {
    try {
      size_t n = read.get();
      if (n == 0) {
        bodyBytes += ex->response.body.size();
        return ex->finish(std::move(ex->response));
      }
      if (ex->response.body.size() + n > options.maxBodyBytes) {
        ex->abort(Abort::kTooLarge);
        return ex->finish(classify(*ex, nullptr));
      }
      ex->response.body.append(reinterpret_cast<const char*>(ex->chunk.data()), n);
      readBody(ex, body);
    } catch (...) {
      ex->finish(classify(*ex, std::current_exception()));
    }
  });
}

void HttpClient::Connection::exchange(std::string_view apiPath, const Params& params,
                                      RawCallback done) {
  std::string path = joinPath(basePath, apiPath);
  std::string what =
      std::string(options.verb == HttpVerb::kPost ? "POST " : "GET ") + origin + path;
  auto request = buildRequest(path, params);
  if (!request) return done(request.status());
  ++requests;
  auto ex = std::make_shared<Exchange>(crossplat::threadpool::shared_instance().service(),
                                       std::move(what),
                                       [this, done = std::move(done)](Result<RawResponse> raw) {
                                         if (!raw) ++failures;
                                         done(std::move(raw));
                                       });
  ex->chunk.resize(kChunkBytes);
  ex->timer.expires_after(options.timeout);
  ex->timer.async_wait([ex](const boost::system::error_code& ec) {
    if (!ec) ex->abort(Abort::kTimeout);
  });
  // `done` holds the Connection (see decodeInto), so `this` outlives the exchange.
  http.request(*request, ex->cancel.get_token())
      .then([this, ex](pplx::task<http::http_response> sent) {
        try {
          http::http_response response = sent.get();
          ex->response.status = response.status_code();
          auto declared = response.headers().content_length();
          if (declared > options.maxBodyBytes) {
            ex->abort(Abort::kTooLarge);
            return ex->finish(classify(*ex, nullptr));
          }
          ex->response.body.reserve(declared);
          readBody(ex, response.body().streambuf());
        } catch (...) {
          ex->finish(classify(*ex, std::current_exception()));
        }
      });
}

Result<std::unique_ptr<HttpClient>> HttpClient::create(const PrometheusOptions& options) {
  if (Status s = validate(options); !s.ok()) return s;
  auto credentials = resolveCredentials(options);
  if (!credentials) return credentials.status();
  web::uri url;
  try {
    url = web::uri(options.url);
  } catch (const std::exception& e) {
    return Status::badRequest("invalid --prometheus-url \"" + options.url + "\": " + e.what());
  }
  try {
    boost::asio::ssl::context probe(boost::asio::ssl::context::tls_client);
    applyTls(probe, *credentials);
  } catch (const std::exception& e) {
    return Status::invalid(std::string("prometheus TLS material: ") + e.what());
  }
  http::client::http_client_config config;
  // cpprestsdk's timeout is per read; the exchange's own deadline is the real bound and fires
  // first.
  config.set_timeout(options.timeout + std::chrono::seconds(1));
  config.set_chunksize(kChunkBytes);
  config.set_validate_certificates(!credentials->insecureSkipTlsVerify);
  if (isLoopbackHost(url.host())) config.set_proxy(web::web_proxy(web::web_proxy::disabled));
  config.set_ssl_context_callback(
      [tls = *credentials](boost::asio::ssl::context& ctx) { applyTls(ctx, tls); });
  try {
    auto connection = std::make_shared<Connection>(options, std::move(*credentials), url, config);
    return std::unique_ptr<HttpClient>(new HttpClient(std::move(connection)));
  } catch (const std::exception& e) {
    return Status::badRequest("invalid --prometheus-url \"" + options.url + "\": " + e.what());
  }
}

HttpClient::HttpClient(std::shared_ptr<Connection> connection)
    : connection_(std::move(connection)) {}

HttpClient::~HttpClient() = default;

HttpClient::Stats HttpClient::stats() const {
  return {connection_->requests.load(), connection_->failures.load(),
          connection_->bodyBytes.load()};
}

namespace {

// The RawCallback that decodes a body with `decode` and reports to `done`; `keep` holds the
// connection.
template <typename T, typename Decode>
RawCallback decodeInto(Decode decode, Callback<T> done,
                       std::shared_ptr<HttpClient::Connection> keep) {
  return [decode, done = std::move(done), keep = std::move(keep)](Result<RawResponse> raw) {
    if (!raw) return done(raw.status());
    done(decode(raw->status, raw->body));
  };
}

}  // namespace

void HttpClient::queryAsync(std::string promql, Timestamp at, Callback<QueryResultPtr> done) {
  connection_->exchange("/api/v1/query", queryParams(promql, at, connection_->options.timeout),
                        decodeInto(decodeQueryResponse, std::move(done), connection_));
}

void HttpClient::seriesAsync(Matchers match, TimeRange window, Callback<std::vector<Series>> done) {
  connection_->exchange("/api/v1/series", matchParams(match, window),
                        decodeInto(decodeSeriesResponse, std::move(done), connection_));
}

void HttpClient::seriesLabelNamesAsync(Matchers match, TimeRange window,
                                       Callback<MetricLabelNames> done) {
  connection_->exchange("/api/v1/series", matchParams(match, window),
                        decodeInto(decodeSeriesLabelNamesResponse, std::move(done), connection_));
}

void HttpClient::labelValuesAsync(std::string label, Matchers match, TimeRange window,
                                  Callback<std::vector<std::string>> done) {
  connection_->exchange("/api/v1/label/" + pathEscape(label) + "/values",
                        matchParams(match, window),
                        decodeInto(decodeStringListResponse, std::move(done), connection_));
}

void HttpClient::labelNamesAsync(Matchers match, TimeRange window,
                                 Callback<std::vector<std::string>> done) {
  connection_->exchange("/api/v1/labels", matchParams(match, window),
                        decodeInto(decodeStringListResponse, std::move(done), connection_));
}

}  // namespace gpuscale::prom
