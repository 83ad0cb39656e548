#include "gpuscale/core/plain_http_listener.h"

#include <fmt/format.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <charconv>
#include <exception>
#include <thread>

namespace gpuscale::core {
namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;

void serveOne(tcp::socket socket, const PlainHttpHandler& handler,
              std::chrono::seconds readTimeout) {
  const timeval timeout{static_cast<time_t>(readTimeout.count()), 0};
  setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  boost::beast::error_code ec;
  boost::beast::flat_buffer buffer;
  http::request<http::string_body> request;
  http::read(socket, buffer, request, ec);
  if (ec) return;
  std::string_view target(request.target().data(), request.target().size());
  PlainHttpReply reply = handler(target.substr(0, target.find('?')));
  http::response<http::string_body> response;
  response.version(request.version());
  response.keep_alive(false);
  response.result(static_cast<http::status>(reply.status));
  response.set(http::field::content_type, reply.contentType);
  response.body() = std::move(reply.body);
  response.prepare_payload();
  http::write(socket, response, ec);
  socket.shutdown(tcp::socket::shutdown_both, ec);
}

}  // namespace

std::optional<std::pair<std::string, std::uint16_t>> parseHostPort(std::string_view text) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  unsigned port = 0;
  std::string_view digits = text.substr(colon + 1);
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
  if (ec != std::errc() || ptr != digits.data() + digits.size() || port > 65535) {
    return std::nullopt;
  }
  std::string_view host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return std::pair{std::string(host), static_cast<std::uint16_t>(port)};
}

struct PlainHttpListener::Impl {
  asio::io_context io;
  tcp::acceptor acceptor{io};
  asio::ip::address address;
  std::uint16_t port = 0;
  PlainHttpHandler handler;
  std::chrono::seconds readTimeout{5};
  std::atomic<bool> stopping{false};
  std::thread thread;
};

Result<std::unique_ptr<PlainHttpListener>> PlainHttpListener::start(
    const std::string& host, std::uint16_t port, PlainHttpHandler handler,
    std::chrono::seconds readTimeout) {
  auto impl = std::make_unique<Impl>();
  boost::system::error_code ec;
  impl->address = asio::ip::make_address(host, ec);
  if (ec) return Status::invalid(fmt::format("bad listen address {}: {}", host, ec.message()));
  tcp::endpoint endpoint(impl->address, port);
  impl->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl->acceptor.bind(endpoint, ec);
  if (!ec) impl->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return Status::unavailable(fmt::format("cannot listen on {}:{}: {}", host, port, ec.message()));
  }
  impl->port = impl->acceptor.local_endpoint().port();
  impl->handler = std::move(handler);
  impl->readTimeout = readTimeout;
  Impl* raw = impl.get();
  impl->thread = std::thread([raw] {
    while (!raw->stopping.load()) {
      tcp::socket socket(raw->io);
      boost::system::error_code acceptError;
      raw->acceptor.accept(socket, acceptError);
      if (raw->stopping.load()) return;
      if (acceptError) continue;
      // Whatever a request makes throw (a handler's bug, memory exhausted) ends that connection,
      // never the listener's thread (an exception out of it would end the process).
      try {
        serveOne(std::move(socket), raw->handler, raw->readTimeout);
      } catch (const std::exception& error) {
        fmt::print(stderr, "plain HTTP listener: a request failed: {}\n", error.what());
      } catch (...) {
        fmt::print(stderr, "plain HTTP listener: a request failed\n");
      }
    }
  });
  return std::unique_ptr<PlainHttpListener>(new PlainHttpListener(std::move(impl)));
}

Result<std::unique_ptr<PlainHttpListener>> PlainHttpListener::start(std::string_view hostPort,
                                                                    PlainHttpHandler handler) {
  auto parsed = parseHostPort(hostPort);
  if (!parsed) return Status::badRequest(fmt::format("bind address {} needs HOST:PORT", hostPort));
  return start(parsed->first, parsed->second, std::move(handler));
}

PlainHttpListener::PlainHttpListener(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

PlainHttpListener::~PlainHttpListener() { stop(); }

std::uint16_t PlainHttpListener::port() const { return impl_->port; }

void PlainHttpListener::stop() {
  if (!impl_->thread.joinable()) return;
  impl_->stopping = true;
  // A blocking accept() is not always woken by close(): wake it with one connection.
  boost::system::error_code ec;
  tcp::socket poke(impl_->io);
  const auto wake = impl_->address.is_unspecified()
                        ? asio::ip::address(asio::ip::make_address("127.0.0.1"))
                        : impl_->address;
  poke.connect(tcp::endpoint(wake, impl_->port), ec);
  impl_->thread.join();
  impl_->acceptor.close(ec);
}

}  // namespace gpuscale::core
