#include "gpuscale/sim/plain_http_server.h"

#include <atomic>
#include <thread>

#include <fmt/format.h>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace gpuscale::sim {
namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;

void serveOne(tcp::socket socket, const HttpHandler& handler) {
  boost::beast::error_code ec;
  boost::beast::flat_buffer buffer;
  http::request<http::string_body> request;
  http::read(socket, buffer, request, ec);
  if (ec) return;
  HttpReply reply = handler(std::string_view(request.target().data(), request.target().size()));
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

struct PlainHttpServer::Impl {
  asio::io_context io;
  tcp::acceptor acceptor{io};
  asio::ip::address address;
  unsigned short port = 0;
  HttpHandler handler;
  std::atomic<bool> stopping{false};
  std::thread thread;
};

core::Result<std::unique_ptr<PlainHttpServer>> PlainHttpServer::start(const std::string& host,
                                                                      unsigned short port,
                                                                      HttpHandler handler) {
  auto impl = std::make_unique<Impl>();
  boost::system::error_code ec;
  impl->address = asio::ip::make_address(host, ec);
  if (ec)
    return core::Status::invalid(fmt::format("bad listen address {}: {}", host, ec.message()));
  tcp::endpoint endpoint(impl->address, port);
  impl->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl->acceptor.bind(endpoint, ec);
  if (!ec) impl->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return core::Status::unavailable(
        fmt::format("cannot listen on {}:{}: {}", host, port, ec.message()));
  }
  impl->port = impl->acceptor.local_endpoint().port();
  impl->handler = std::move(handler);
  Impl* raw = impl.get();
  impl->thread = std::thread([raw] {
    while (!raw->stopping.load()) {
      tcp::socket socket(raw->io);
      boost::system::error_code acceptError;
      raw->acceptor.accept(socket, acceptError);
      if (raw->stopping.load()) return;
      if (!acceptError) serveOne(std::move(socket), raw->handler);
    }
  });
  return std::unique_ptr<PlainHttpServer>(new PlainHttpServer(std::move(impl)));
}

PlainHttpServer::PlainHttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

PlainHttpServer::~PlainHttpServer() { stop(); }

unsigned short PlainHttpServer::port() const { return impl_->port; }

void PlainHttpServer::stop() {
  if (!impl_->thread.joinable()) return;
  impl_->stopping = true;
  // Wake the blocked accept() with one connection.
  boost::system::error_code ec;
  tcp::socket poke(impl_->io);
  poke.connect(tcp::endpoint(impl_->address, impl_->port), ec);
  impl_->thread.join();
  impl_->acceptor.close(ec);
}

}  // namespace gpuscale::sim
