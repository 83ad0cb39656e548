#include "support/http_test_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <sstream>
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

bool writeAll(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

std::string statusLine(int status) {
  return "HTTP/1.1 " + std::to_string(status) + " " +
         std::string(http::obsolete_reason(static_cast<http::status>(status))) + "\r\n";
}

}  // namespace

std::string HttpTestRequest::param(const std::string& key) const {
  auto values = decodeForm(query);
  auto it = values.find(key);
  return it == values.end() ? "" : it->second;
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

class HttpTestServer::SocketExchange final : public HttpTestServer::Exchange {
 public:
  SocketExchange(int fd, HttpTestServer* server) : fd_(fd), server_(server) {}

  void respond(int status, const std::string& body,
               const std::vector<std::pair<std::string, std::string>>& headers) override {
    std::ostringstream out;
    out << statusLine(status) << "Content-Length: " << body.size() << "\r\n";
    bool typed = false;
    for (const auto& [name, value] : headers) {
      typed = typed || beast::iequals(name, "content-type");
      out << name << ": " << value << "\r\n";
    }
    if (!typed) out << "Content-Type: application/json\r\n";
    out << "\r\n" << body;
    alive_ = alive_ && writeAll(fd_, out.str());
  }
  void beginStream(int status, const std::string& contentType) override {
    alive_ = alive_ && writeAll(fd_, statusLine(status) + "Content-Type: " + contentType +
                                         "\r\nTransfer-Encoding: chunked\r\n\r\n");
  }
  bool chunk(const std::string& data) override {
    if (data.empty()) return alive_;  // an empty chunk would end the body
    std::ostringstream out;
    out << std::hex << data.size() << "\r\n" << data << "\r\n";
    return alive_ = alive_ && writeAll(fd_, out.str());
  }
  void endStream() override { alive_ = alive_ && writeAll(fd_, "0\r\n\r\n"); }
  void hangUp() override {
    ::shutdown(fd_, SHUT_RDWR);
    alive_ = false;
  }
  bool waitFor(std::chrono::milliseconds d) override {
    std::unique_lock lock(server_->mutex_);
    return !server_->stopped_.wait_for(lock, d, [this] { return server_->stopping_; });
  }
  bool alive() const { return alive_; }

 private:
  int fd_;
  HttpTestServer* server_;
  bool alive_ = true;
};

HttpTestServer::HttpTestServer(ResponseHandler handler)
    : HttpTestServer(ExchangeHandler(
          [handler = std::move(handler)](const HttpTestRequest& request, Exchange& exchange) {
            HttpTestResponse answer = handler(request);
            if (answer.delay.count() > 0 && !exchange.waitFor(answer.delay))
              return exchange.hangUp();
            if (answer.close) return exchange.hangUp();
            if (answer.chunked) {
              exchange.beginStream(answer.status, answer.contentType);
              exchange.chunk(answer.body);
              return exchange.endStream();
            }
            exchange.respond(answer.status, answer.body, {{"Content-Type", answer.contentType}});
          })) {}

HttpTestServer::HttpTestServer(ExchangeHandler handler) : handler_(std::move(handler)) {
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
    throw std::runtime_error("test server: cannot listen on loopback");
  }
  port_ = ntohs(address.sin_port);
  acceptor_ = std::thread([this] { acceptLoop(); });
}

HttpTestServer::~HttpTestServer() { stop(); }

std::string HttpTestServer::url() const { return "http://127.0.0.1:" + std::to_string(port_); }

std::vector<HttpTestRequest> HttpTestServer::requests() const {
  std::lock_guard lock(mutex_);
  return requests_;
}

size_t HttpTestServer::requestCount() const {
  std::lock_guard lock(mutex_);
  return requests_.size();
}

void HttpTestServer::stop() {
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

void HttpTestServer::acceptLoop() {
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

void HttpTestServer::serve(int fd) {
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
    HttpTestRequest request;
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
    SocketExchange exchange(fd, this);
    handler_(request, exchange);
    if (!exchange.alive() || !message.keep_alive()) break;
  }
  beast::error_code ignored;
  socket.shutdown(tcp::socket::shutdown_both, ignored);
  std::lock_guard lock(mutex_);
  connections_.erase(std::remove(connections_.begin(), connections_.end(), fd), connections_.end());
  socket.close(ignored);
}

}  // namespace gpuscale::test
