#include "health_server.h"

#include <sys/socket.h>
#include <sys/time.h>

#include <spdlog/spdlog.h>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace gpuscale::reconciler {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;

struct HealthServer::State {
  asio::io_context io;
  tcp::acceptor acceptor{io};
};

HealthServer::HealthServer(Handler handler) : handler_(std::move(handler)) {}

HealthServer::~HealthServer() { stop(); }

core::Status HealthServer::start(const std::string& address) {
  auto colon = address.rfind(':');
  if (colon == std::string::npos) return core::Status::badRequest("bind address needs host:port");
  state_ = std::make_shared<State>();
  boost::system::error_code ec;
  auto ip = asio::ip::make_address(address.substr(0, colon), ec);
  if (ec) return core::Status::badRequest("bad bind address " + address);
  int port = std::atoi(address.c_str() + colon + 1);
  tcp::endpoint endpoint(ip, static_cast<uint16_t>(port));
  state_->acceptor.open(endpoint.protocol(), ec);
  if (!ec) state_->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) state_->acceptor.bind(endpoint, ec);
  if (!ec) state_->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return core::Status::unavailable("listening on " + address + ": " + ec.message());
  port_ = state_->acceptor.local_endpoint().port();
  thread_ = std::jthread([this, state = state_](std::stop_token stop) {
    while (!stop.stop_requested()) {
      tcp::socket socket(state->io);
      boost::system::error_code aec;
      state->acceptor.accept(socket, aec);
      if (aec) {
        if (stop.stop_requested() || !state->acceptor.is_open()) return;
        continue;
      }
      timeval timeout{5, 0};  // a silent client must not hold the only thread
      setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
      try {
        boost::beast::flat_buffer buffer;
        http::request<http::string_body> req;
        http::read(socket, buffer, req);
        std::string target(req.target());
        auto q = target.find('?');
        HttpAnswer a = handler_(target.substr(0, q));
        http::response<http::string_body> res{static_cast<http::status>(a.status), req.version()};
        res.set(http::field::content_type, a.contentType);
        res.keep_alive(false);
        res.body() = std::move(a.body);
        res.prepare_payload();
        http::write(socket, res);
      } catch (const std::exception& e) {
        spdlog::debug("health server: {}", e.what());
      }
      socket.shutdown(tcp::socket::shutdown_both, aec);
    }
  });
  return {};
}

void HealthServer::stop() {
  if (!state_) return;
  thread_.request_stop();
  boost::system::error_code ec;
  state_->acceptor.cancel(ec);
  state_->acceptor.close(ec);
  // A blocking accept() is not always woken by close(): poke it with a connection.
  try {
    asio::io_context io;
    tcp::socket s(io);
    s.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_), ec);
  } catch (...) {
  }
  if (thread_.joinable()) thread_.join();
  state_.reset();
}

}  // namespace gpuscale::reconciler
