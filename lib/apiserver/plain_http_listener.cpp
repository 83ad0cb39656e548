#include "gpuscale/apiserver/plain_http_listener.h"

#include <fmt/format.h>

#include <utility>

#include "listener.h"

namespace gpuscale::apiserver {

namespace detail {

HttpHandler adaptPlainHandler(core::PlainHttpHandler handler) {
  return [handler = std::move(handler)](const HttpRequest& request) {
    core::PlainHttpReply reply = handler(request.path);
    HttpResponse response;
    response.status = reply.status;
    response.contentType = std::move(reply.contentType);
    response.body = std::move(reply.body);
    return response;
  };
}

}  // namespace detail

struct PlainHttpListener::Impl {
  PlainListenerOptions settings;
  ServerOptions options;  // what the connections read: limits and deadlines
  HttpHandler handler;
  std::shared_ptr<detail::ServerMetrics> metrics = std::make_shared<detail::ServerMetrics>();
  std::unique_ptr<detail::IoLoop> loop;
  std::shared_ptr<detail::Listener<false>> listener;
};

core::Result<std::unique_ptr<PlainHttpListener>> PlainHttpListener::start(
    const std::string& host, std::uint16_t port, core::PlainHttpHandler handler,
    PlainListenerOptions options) {
  boost::system::error_code ec;
  boost::asio::ip::make_address(host, ec);
  if (ec)
    return core::Status::invalid(fmt::format("bad listen address {}: {}", host, ec.message()));
  auto impl = std::make_unique<Impl>();
  impl->settings = std::move(options);
  const PlainListenerOptions& s = impl->settings;
  impl->options.requestLimits = s.requestLimits;
  impl->options.firstRequestTimeout = s.firstRequestTimeout;
  impl->options.requestReadTimeout = s.requestReadTimeout;
  impl->options.idleTimeout = s.firstRequestTimeout;  // one request per connection
  impl->options.writeTimeout = s.writeTimeout;
  impl->handler = detail::adaptPlainHandler(std::move(handler));
  if (s.registry) impl->metrics->registerOn(*s.registry);
  impl->loop = std::make_unique<detail::IoLoop>(impl->metrics);

  detail::ListenerContext context;
  context.name = impl->settings.name;
  context.options = &impl->options;
  context.handler = &impl->handler;
  context.registry = impl->loop->registry();
  context.metrics = impl->metrics.get();
  context.budget = std::make_shared<detail::ConnectionBudget>(s.connections);
  context.keepAlive = false;
  impl->listener = std::make_shared<detail::Listener<false>>(impl->loop->io(), context);
  if (auto status = impl->listener->listen(host, port); !status.ok()) {
    return core::Status::unavailable(status.message());  // the address was valid: a failed bind
  }
  impl->listener->start();
  impl->loop->start(1);
  return std::unique_ptr<PlainHttpListener>(new PlainHttpListener(std::move(impl)));
}

core::Result<std::unique_ptr<PlainHttpListener>> PlainHttpListener::start(
    std::string_view hostPort, core::PlainHttpHandler handler, PlainListenerOptions options) {
  auto parsed = core::parseHostPort(hostPort);
  if (!parsed) {
    return core::Status::badRequest(fmt::format("bind address {} needs HOST:PORT", hostPort));
  }
  return start(parsed->first, parsed->second, std::move(handler), std::move(options));
}

PlainHttpListener::PlainHttpListener(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

PlainHttpListener::~PlainHttpListener() { stop(); }

std::uint16_t PlainHttpListener::port() const { return impl_->listener->port(); }

size_t PlainHttpListener::openConnections() const { return impl_->loop->registry()->size(); }

void PlainHttpListener::stop() {
  impl_->loop->stop([this] { impl_->listener->close(); }, impl_->settings.shutdownTimeout);
}

}  // namespace gpuscale::apiserver
