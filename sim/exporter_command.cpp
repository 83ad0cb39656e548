#include "exporter_command.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <ostream>
#include <string>
#include <thread>

#include "gpuscale/sim/triton_model.h"

namespace gpuscale::sim {
namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;

struct ExporterFlags {
  std::string host = "127.0.0.1";
  unsigned short port = 0;
  std::string portFile;
};

bool parseFlags(std::span<const std::string_view> args, ExporterFlags& flags, std::ostream& err) {
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    std::string_view value;
    auto eq = arg.find('=');
    std::string_view name = arg.substr(0, eq);
    if (eq != std::string_view::npos) {
      value = arg.substr(eq + 1);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      err << "flag needs an argument: " << arg << "\n";
      return false;
    }
    if (name == "--listen") {
      auto colon = value.rfind(':');
      if (colon == std::string_view::npos) {
        err << "--listen wants HOST:PORT\n";
        return false;
      }
      flags.host = std::string(value.substr(0, colon));
      flags.port = static_cast<unsigned short>(std::stoul(std::string(value.substr(colon + 1))));
    } else if (name == "--port-file") {
      flags.portFile = std::string(value);
    } else {
      err << "unknown flag: " << name << "\n";
      return false;
    }
  }
  return true;
}

void serveOne(tcp::socket socket, const TritonModel& model,
              std::chrono::steady_clock::time_point start) {
  boost::beast::error_code ec;
  boost::beast::flat_buffer buffer;
  http::request<http::string_body> request;
  http::read(socket, buffer, request, ec);
  if (ec) return;
  http::response<http::string_body> response;
  response.version(request.version());
  response.keep_alive(false);
  if (request.target() == "/metrics" || request.target().starts_with("/metrics?")) {
    std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    response.result(http::status::ok);
    response.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
    response.body() = model.render(elapsed.count());
  } else {
    response.result(http::status::not_found);
    response.set(http::field::content_type, "text/plain; charset=utf-8");
    response.body() = "404 page not found\n";
  }
  response.prepare_payload();
  http::write(socket, response, ec);
  socket.shutdown(tcp::socket::shutdown_both, ec);
}

}  // namespace

int runExporterCommand(std::span<const std::string_view> args, std::ostream& out,
                       std::ostream& err) {
  ExporterFlags flags;
  if (!parseFlags(args, flags, err)) return 2;

  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  asio::io_context io;
  boost::system::error_code ec;
  auto address = asio::ip::make_address(flags.host, ec);
  if (ec) {
    err << "bad listen address " << flags.host << ": " << ec.message() << "\n";
    return 2;
  }
  tcp::acceptor acceptor(io);
  tcp::endpoint endpoint(address, flags.port);
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    err << "cannot listen on " << flags.host << ":" << flags.port << ": " << ec.message() << "\n";
    return 1;
  }
  const unsigned short port = acceptor.local_endpoint().port();
  if (!flags.portFile.empty()) {
    std::ofstream(flags.portFile + ".tmp") << port << "\n";
    std::rename((flags.portFile + ".tmp").c_str(), flags.portFile.c_str());
  }
  out << "listening on " << flags.host << ":" << port << std::endl;

  const TritonModel model(demoTritonModel());
  const auto start = std::chrono::steady_clock::now();
  std::thread server([&] {
    while (true) {
      tcp::socket socket(io);
      boost::system::error_code acceptError;
      acceptor.accept(socket, acceptError);
      if (acceptError) {
        if (!acceptor.is_open()) return;
        continue;
      }
      serveOne(std::move(socket), model, start);
    }
  });
  int received = 0;
  sigwait(&signals, &received);
  acceptor.close(ec);
  // Wake the blocked accept() by connecting once.
  {
    tcp::socket poke(io);
    poke.connect(tcp::endpoint(address, port), ec);
  }
  server.join();
  return 0;
}

}  // namespace gpuscale::sim
