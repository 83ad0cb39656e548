#include "support/prometheus_stub_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <stdexcept>

namespace gpuscale::test {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
using tcp = boost::asio::ip::tcp;

std::string unescape(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] == '%' && i + 2 < text.size()) {
      out += static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

}  // namespace

std::optional<StubResponse> podMetricDiscovery(const StubRequest& request,
                                               const std::string& metric) {
  StubResponse r;
  if (request.path == "/api/v1/label/__name__/values") {
    r.body = R"({"status":"success","data":[")" + metric + R"("]})";
  } else if (request.path == "/api/v1/labels") {
    r.body = R"({"status":"success","data":["__name__","namespace","pod"]})";
  } else {
    return std::nullopt;
  }
  return r;
}

std::multimap<std::string, std::string> decodeForm(const std::string& text) {
  std::multimap<std::string, std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('&', start);
    if (end == std::string::npos) end = text.size();
    std::string_view pair(text.data() + start, end - start);
    size_t eq = pair.find('=');
    out.emplace(unescape(pair.substr(0, eq)),
                eq == std::string_view::npos ? "" : unescape(pair.substr(eq + 1)));
    start = end + 1;
  }
  return out;
}

PrometheusStubServer::PrometheusStubServer(Handler handler) : handler_(std::move(handler)) {
  listenFd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  ::setsockopt(listenFd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (::bind(listenFd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(listenFd_, 128) != 0 ||
      ::getsockname(listenFd_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    throw std::runtime_error("stub server: cannot listen on loopback");
  }
  port_ = ntohs(address.sin_port);
  acceptor_ = std::thread([this] { acceptLoop(); });
}

PrometheusStubServer::~PrometheusStubServer() { stop(); }

std::string PrometheusStubServer::url() const {
  return "http://127.0.0.1:" + std::to_string(port_);
}

std::vector<StubRequest> PrometheusStubServer::requests() const {
  std::lock_guard lock(mutex_);
  return requests_;
}

size_t PrometheusStubServer::requestCount() const {
  std::lock_guard lock(mutex_);
  return requests_.size();
}

void PrometheusStubServer::stop() {
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
    ::shutdown(listenFd_, SHUT_RDWR);
    for (int fd : connections_) ::shutdown(fd, SHUT_RDWR);
  }
  stopped_.notify_all();
  acceptor_.join();
  {
    std::lock_guard lock(mutex_);
    threads = std::move(threads_);
  }
  for (auto& thread : threads) thread.join();
  ::close(listenFd_);
}

void PrometheusStubServer::acceptLoop() {
  for (;;) {
    int fd = ::accept4(listenFd_, nullptr, nullptr, SOCK_CLOEXEC);
    std::lock_guard lock(mutex_);
    if (stopping_) {
      if (fd >= 0) ::close(fd);
      return;
    }
    if (fd < 0) continue;
    connections_.push_back(fd);
    threads_.emplace_back([this, fd] { serve(fd); });
  }
}

void PrometheusStubServer::serve(int fd) {
  boost::asio::io_context io;
  tcp::socket socket(io, tcp::v4(), fd);
  beast::flat_buffer buffer;
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(64u << 20);
    beast::error_code ec;
    http::read(socket, buffer, parser, ec);
    if (ec) break;
    auto& message = parser.get();
    StubRequest request;
    request.method = std::string(message.method_string());
    request.target = std::string(message.target());
    auto q = request.target.find('?');
    request.path = request.target.substr(0, q);
    if (q != std::string::npos) request.query = request.target.substr(q + 1);
    for (const auto& field : message) {
      std::string name(field.name_string());
      std::transform(name.begin(), name.end(), name.begin(), ::tolower);
      request.headers[name] = std::string(field.value());
    }
    request.body = message.body();
    {
      std::lock_guard lock(mutex_);
      requests_.push_back(request);
    }
    StubResponse answer = handler_(request);
    if (answer.delay.count() > 0) {
      std::unique_lock lock(mutex_);
      if (stopped_.wait_for(lock, answer.delay, [this] { return stopping_; })) break;
    }
    if (answer.close) break;
    http::response<http::string_body> response{static_cast<http::status>(answer.status),
                                               message.version()};
    response.set(http::field::content_type, answer.contentType);
    response.keep_alive(message.keep_alive());
    response.body() = std::move(answer.body);
    if (answer.chunked) {
      response.chunked(true);
    } else {
      response.prepare_payload();
    }
    http::write(socket, response, ec);
    if (ec || !response.keep_alive()) break;
  }
  beast::error_code ignored;
  socket.shutdown(tcp::socket::shutdown_both, ignored);
  std::lock_guard lock(mutex_);
  connections_.erase(std::remove(connections_.begin(), connections_.end(), fd), connections_.end());
  socket.close(ignored);
}

}  // namespace gpuscale::test
