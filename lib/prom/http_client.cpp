#include "gpuscale/prom/http_client.h"

#include <cpprest/http_client.h>
#include <openssl/evp.h>
#include <pplx/threadpool.h>
#include <boost/algorithm/string/predicate.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <thread>
#include <utility>

#include "body_pipe.h"
#include "gpuscale/core/duration.h"
#include "gpuscale/core/token_file.h"
#include "gpuscale/prom/errors.h"
#include "gpuscale/prom/sigv4.h"
#include "gpuscale/prom/wire.h"
#include "gunzip.h"

namespace gpuscale::prom {
namespace {

namespace http = web::http;
constexpr size_t kChunkBytes = 64 * 1024;

enum class Abort : int { kNone, kTimeout, kTooLarge };

struct Exchange;
// Called once per exchange: OK when the response was read (and decoded, when streamed), else the
// failure.
using ExchangeDone = std::function<void(Exchange&, Status)>;
// Decodes a streamed body (HTTP status, pieces) into a result the ExchangeDone owns.
using StreamDecode = std::function<Status(int, const BodyPieces&)>;

// How a call reaches Prometheus: its endpoint, whether the endpoint accepts POST (the label-values
// endpoint is GET-only in Prometheus' HTTP API), and whether its body is decoded while it arrives
// (`stream`, capped by `cap`) or buffered whole (capped by maxBodyBytes).
struct Endpoint {
  std::string path;
  bool postAllowed = true;
  StreamDecode stream;
  size_t cap = 0;
};

// One HTTP exchange: its deadline timer, its cancellation and the response read so far.
struct Exchange {
  Exchange(boost::asio::io_service& io, std::string what, size_t cap, ExchangeDone done)
      : timer(io), what(std::move(what)), cap(cap), done(std::move(done)) {}

  void abort(Abort reason) {
    int expected = static_cast<int>(Abort::kNone);
    aborted.compare_exchange_strong(expected, static_cast<int>(reason));
    drop();
  }

  // Closes the connection and lets a writer blocked on the pipe go.
  void drop() {
    cancel.cancel();
    if (pipe) pipe->abort();
  }

  bool isAborted() const { return aborted.load() != static_cast<int>(Abort::kNone); }

  void finish(Status status) {
    if (finished.exchange(true)) return;
    timer.cancel();
    try {
      done(*this, std::move(status));
    } catch (...) {
      // A throwing callback must not surface as an unobserved pplx task exception.
    }
  }

  boost::asio::steady_timer timer;
  pplx::cancellation_token_source cancel;
  std::atomic<int> aborted{static_cast<int>(Abort::kNone)};
  std::atomic<bool> finished{false};
  std::string what;
  size_t cap;
  ExchangeDone done;
  int status = 0;
  std::string body;                  // buffered exchanges
  std::vector<unsigned char> chunk;  // buffered exchanges
  std::shared_ptr<BodyPipe> pipe;    // streamed exchanges
};

bool isLoopbackHost(const std::string& host) {
  return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1" || host == "[::1]";
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
        hostHeader(url.authority().host() +
                   (url.port() > 0 && url.port() != (url.scheme() == "https" ? 443 : 80)
                        ? ":" + std::to_string(url.port())
                        : "")),
        http(web::uri(origin), config) {
    if (!credentials.tokenFile.empty())
      tokenFile = std::make_unique<core::TokenFile>(credentials.tokenFile);
    for (const auto& [name, value] : options.headers) {
      if (boost::iequals(name, "Authorization")) explicitAuthorization = true;
    }
  }

  void exchange(const Endpoint& endpoint, const Params& params, ExchangeDone done);
  Result<http::http_request> buildRequest(const std::string& path, const Params& params, bool post);
  void readBody(std::shared_ptr<Exchange> ex, concurrency::streams::streambuf<uint8_t> body);
  void streamBody(std::shared_ptr<Exchange> ex, StreamDecode decode, bool gzip);
  Status classify(const Exchange& ex, std::exception_ptr error) const;

  PrometheusOptions options;
  Credentials credentials;
  std::string basePath;
  std::string baseQuery;
  std::string origin;
  std::string hostHeader;  // what the Host header carries, and SigV4 signs
  http::client::http_client http;
  std::unique_ptr<core::TokenFile> tokenFile;
  bool explicitAuthorization = false;
  std::atomic<uint64_t> requests{0};
  std::atomic<uint64_t> failures{0};
  std::atomic<uint64_t> bodyBytes{0};
};

Result<http::http_request> HttpClient::Connection::buildRequest(const std::string& path,
                                                                const Params& params, bool post) {
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
  if (!options.sigv4Region.empty()) {
    // The query goes out in canonical form, so the server's canonical query is the one signed.
    SignedRequest signedRequest = signV4(
        {post ? "POST" : "GET", hostHeader, path, query, post ? encoded : ""}, credentials.aws,
        {options.sigv4Region, options.sigv4Service}, std::chrono::system_clock::now());
    request.set_request_uri(
        web::uri(signedRequest.query.empty() ? path : path + "?" + signedRequest.query));
    headers.add("Host", hostHeader);
    for (const auto& [name, value] : signedRequest.headers) headers.add(name, value);
  } else if (!explicitAuthorization) {
    if (tokenFile) {
      auto token = tokenFile->token();
      if (!token) return failure(FailureKind::kCredentials, token.status().message());
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
                   "more than " + std::to_string(ex.cap) + " bytes from " + ex.what + " (" +
                       (ex.cap == options.maxSeriesBodyBytes && ex.cap != options.maxBodyBytes
                            ? "--prometheus-max-series-body-bytes"
                            : "--prometheus-max-body-bytes") +
                       ")");
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
        bodyBytes += ex->body.size();
        return ex->finish(Status());
      }
      if (ex->body.size() + n > ex->cap) {
        ex->abort(Abort::kTooLarge);
        return ex->finish(classify(*ex, nullptr));
      }
      ex->body.append(reinterpret_cast<const char*>(ex->chunk.data()), n);
      readBody(ex, body);
    } catch (...) {
      ex->finish(classify(*ex, std::current_exception()));
    }
  });
}

void HttpClient::Connection::streamBody(std::shared_ptr<Exchange> ex, StreamDecode decode,
                                        bool gzip) {
  // The decoder pulls the body piece by piece and waits for each: on a thread of its own, never on
  // the pool that writes the pieces. The exchange (and through its callback the Connection) stays
  // alive until the thread ends.
  std::thread([this, ex, decode = std::move(decode), gzip] {
    size_t total = 0;
    std::exception_ptr readError;
    BodyPieces received = [&]() -> std::string_view {
      if (readError || ex->isAborted()) return {};
      std::string_view piece = ex->pipe->next();
      if (piece.empty()) readError = ex->pipe->failure();
      return piece;
    };
    Gunzip gunzip(received);
    // The cap counts decompressed bytes: a small compressed body cannot expand without bound.
    BodyPieces next = [&]() -> std::string_view {
      std::string_view piece = gzip ? gunzip.next() : received();
      if (total + piece.size() > ex->cap) {
        ex->abort(Abort::kTooLarge);
        return {};
      }
      total += piece.size();
      return piece;
    };
    Status decoded = decode(ex->status, next);
    // The gzip stream may end before the body does (the body's end also releases the last write):
    // read on to the end, within the cap.
    if (gzip && decoded.ok() && gunzip.error().empty()) {
      for (auto rest = received(); !rest.empty() && !ex->isAborted(); rest = received()) {
        if (total + rest.size() > ex->cap) ex->abort(Abort::kTooLarge);
        total += rest.size();
      }
    }
    bodyBytes += total;
    if (ex->isAborted() || readError) return ex->finish(classify(*ex, readError));
    if (gzip && !gunzip.error().empty()) {
      ex->drop();
      return ex->finish(failure(FailureKind::kBadJson, gunzip.error() + " from " + ex->what));
    }
    // A decoder that stopped early leaves the rest of the body unread: drop the connection.
    if (!decoded.ok()) ex->drop();
    ex->finish(std::move(decoded));
  }).detach();
}

void HttpClient::Connection::exchange(const Endpoint& endpoint, const Params& params,
                                      ExchangeDone done) {
  bool post = options.verb == HttpVerb::kPost && endpoint.postAllowed;
  std::string path = joinPath(basePath, endpoint.path);
  std::string what = std::string(post ? "POST " : "GET ") + origin + path;
  auto request = buildRequest(path, params, post);
  size_t cap = endpoint.stream ? endpoint.cap : options.maxBodyBytes;
  if (!request) {
    Exchange failed(crossplat::threadpool::shared_instance().service(), what, cap, std::move(done));
    return failed.finish(request.status());
  }
  ++requests;
  auto ex = std::make_shared<Exchange>(crossplat::threadpool::shared_instance().service(),
                                       std::move(what), cap,
                                       [this, done = std::move(done)](Exchange& ex, Status s) {
                                         if (!s.ok()) ++failures;
                                         done(ex, std::move(s));
                                       });
  if (endpoint.stream) {
    // Prometheus writes an uncompressed answer in one piece, which cpprestsdk reads whole (one HTTP
    // chunk of ~90 MB per million series, measured); gzip-compressed it arrives in 2 KiB chunks
    // (~25x fewer bytes), inflated here as the decoder takes them. cpprestsdk's own decompression
    // is not used: it sends quality values Prometheus 2.42 does not read, and does not decompress
    // into a response stream of our own.
    request->headers().add("Accept-Encoding", "gzip");
    ex->pipe = std::make_shared<BodyPipe>();
    request->set_response_stream(
        concurrency::streams::streambuf<uint8_t>(ex->pipe).create_ostream());
  } else {
    ex->chunk.resize(kChunkBytes);
  }
  ex->timer.expires_after(options.timeout);
  ex->timer.async_wait([ex](const boost::system::error_code& ec) {
    if (!ec) ex->abort(Abort::kTimeout);
  });
  // `done` holds the Connection (see decodeInto), so `this` outlives the exchange.
  http.request(*request, ex->cancel.get_token())
      .then([this, ex, stream = endpoint.stream](pplx::task<http::http_response> sent) {
        try {
          http::http_response response = sent.get();
          ex->status = response.status_code();
          auto declared = response.headers().content_length();
          if (declared > ex->cap) {
            ex->abort(Abort::kTooLarge);
            return ex->finish(classify(*ex, nullptr));
          }
          if (stream) {
            response.content_ready().then([pipe = ex->pipe](pplx::task<http::http_response> t) {
              try {
                t.get();
                pipe->finish(nullptr);
              } catch (...) {
                pipe->finish(std::current_exception());
              }
            });
            std::string encoding;
            response.headers().match("Content-Encoding", encoding);
            bool gzip = boost::iequals(encoding, "gzip");
            return streamBody(ex, stream, gzip);
          }
          ex->body.reserve(declared);
          readBody(ex, response.body().streambuf());
        } catch (...) {
          ex->finish(classify(*ex, std::current_exception()));
        }
      });
}

Result<std::unique_ptr<HttpClient>> HttpClient::create(const PrometheusOptions& options) {
  if (Status s = options.validate(); !s.ok()) return s;
  auto credentials = resolveCredentials(options);
  if (!credentials) return credentials.status();
  web::uri url;
  try {
    url = web::uri(options.url);
  } catch (const std::exception& e) {
    return Status::badRequest("invalid --prometheus-url \"" + options.url + "\": " + e.what());
  }
  if (Status tls = credentials->tls.check(); !tls.ok()) {
    return tls.withContext("prometheus TLS material");
  }
  http::client::http_client_config config;
  // cpprestsdk's timeout is per read; the exchange's own deadline is the real bound and fires
  // first.
  config.set_timeout(options.timeout + std::chrono::seconds(1));
  config.set_chunksize(kChunkBytes);
  config.set_validate_certificates(!credentials->tls.insecureSkipTlsVerify);
  if (isLoopbackHost(url.host())) config.set_proxy(web::web_proxy(web::web_proxy::disabled));
  // Checked above: the material loads.
  config.set_ssl_context_callback(
      [tls = credentials->tls](boost::asio::ssl::context& ctx) { (void)tls.configure(ctx); });
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

// The ExchangeDone that decodes a buffered body with `decode` and reports to `done`; `keep` holds
// the connection.
template <typename T, typename Decode>
ExchangeDone decodeInto(Decode decode, Callback<T> done,
                        std::shared_ptr<HttpClient::Connection> keep) {
  return [decode, done = std::move(done), keep = std::move(keep)](Exchange& ex, Status s) {
    if (!s.ok()) return done(std::move(s));
    done(decode(ex.status, ex.body));
  };
}

Endpoint buffered(std::string path, bool postAllowed = true) {
  return {std::move(path), postAllowed, nullptr, 0};
}

}  // namespace

void HttpClient::queryAsync(std::string promql, Timestamp at, Callback<QueryResultPtr> done) {
  connection_->exchange(buffered("/api/v1/query"),
                        queryParams(promql, at, connection_->options.timeout),
                        decodeInto(decodeQueryResponse, std::move(done), connection_));
}

void HttpClient::seriesAsync(Matchers match, TimeRange window, Callback<std::vector<Series>> done) {
  connection_->exchange(buffered("/api/v1/series"), matchParams(match, window),
                        decodeInto(decodeSeriesResponse, std::move(done), connection_));
}

void HttpClient::seriesLabelNamesAsync(Matchers match, TimeRange window,
                                       Callback<MetricLabelNames> done) {
  // Decoded while it arrives: the view is all that is kept of a body of any size up to the cap.
  auto view = std::make_shared<Result<MetricLabelNames>>(MetricLabelNames{});
  Endpoint endpoint{"/api/v1/series", true,
                    [view](int status, const BodyPieces& next) {
                      *view = decodeSeriesLabelNamesResponse(status, next);
                      return view->status();
                    },
                    connection_->options.maxSeriesBodyBytes};
  connection_->exchange(endpoint, matchParams(match, window),
                        [view, done = std::move(done), keep = connection_](Exchange&, Status s) {
                          if (!s.ok()) return done(std::move(s));
                          done(std::move(*view));
                        });
}

void HttpClient::labelValuesAsync(std::string label, Matchers match, TimeRange window,
                                  Callback<std::vector<std::string>> done) {
  // GET whatever --prometheus-verb says: Prometheus answers POST here with 405. The matchers stay
  // short enough for a URL (discovery splits long name alternations; see discovery.h).
  connection_->exchange(buffered("/api/v1/label/" + pathEscape(label) + "/values", false),
                        matchParams(match, window),
                        decodeInto(decodeStringListResponse, std::move(done), connection_));
}

void HttpClient::labelNamesAsync(Matchers match, TimeRange window,
                                 Callback<std::vector<std::string>> done) {
  connection_->exchange(buffered("/api/v1/labels"), matchParams(match, window),
                        decodeInto(decodeStringListResponse, std::move(done), connection_));
}

}  // namespace gpuscale::prom
