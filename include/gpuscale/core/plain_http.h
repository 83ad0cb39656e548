// What a program's plain-HTTP endpoints answer (health probes, the emulator's exporter): a reply
// per request path, and the "HOST:PORT" bind addresses they listen on. The listener itself is
// apiserver::PlainHttpListener (lib/apiserver: it shares the servers' connection machinery); this
// header lets code that only answers (lib/reconciler's probe handler) stay out of lib/apiserver.
//
// Thread safety: plain values and a pure function.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace gpuscale::core {

struct PlainHttpReply {
  int status = 200;
  std::string contentType = "text/plain; charset=utf-8";
  std::string body;
};

// Called with the request's percent-decoded path, without its query string.
using PlainHttpHandler = std::function<PlainHttpReply(std::string_view path)>;

// Splits "HOST:PORT" (the last colon; "[::1]:80" keeps its brackets off); nullopt when malformed.
std::optional<std::pair<std::string, std::uint16_t>> parseHostPort(std::string_view text);

}  // namespace gpuscale::core
