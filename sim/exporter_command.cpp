#include "exporter_command.h"

#include <chrono>
#include <ostream>
#include <string>

#include "command_flags.h"
#include "gpuscale/apiserver/plain_http_listener.h"
#include "gpuscale/core/signals.h"
#include "gpuscale/sim/triton_model.h"

namespace gpuscale::sim {
namespace {

constexpr std::string_view kFlags[] = {"--listen", "--port-file"};

}  // namespace

int runExporterCommand(std::span<const std::string_view> args, std::ostream& out,
                       std::ostream& err) {
  auto flags = CommandFlags::parse(args, kFlags, err);
  if (!flags) return 2;
  auto listen = core::parseHostPort(flags->get("--listen", "127.0.0.1:0"));
  if (!listen) {
    err << "--listen wants HOST:PORT\n";
    return 2;
  }
  const core::StopSignals stopSignals;  // before the listener's thread starts

  const TritonModel model(demoTritonModel());
  const auto start = std::chrono::steady_clock::now();
  apiserver::PlainListenerOptions serving;
  serving.name = "http";
  auto server = apiserver::PlainHttpListener::start(
      listen->first, listen->second,
      [&model, start](std::string_view path) {
        core::PlainHttpReply reply;
        if (path == "/metrics") {
          const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
          reply.contentType = "text/plain; version=0.0.4; charset=utf-8";
          reply.body = model.render(elapsed.count());
        } else {
          reply.status = 404;
          reply.body = "404 page not found\n";
        }
        return reply;
      },
      serving);
  if (!server) {
    err << server.status().message() << "\n";
    return server.status().httpCode() == 422 ? 2 : 1;
  }
  writePortFile(flags->get("--port-file"), (*server)->port());
  out << "listening on " << listen->first << ":" << (*server)->port() << std::endl;
  stopSignals.wait();
  (*server)->stop();
  return 0;
}

}  // namespace gpuscale::sim
