// The requests that probe a server's request limits (apiserver::RequestLimits): for each limit, a
// request exactly at it (served), one byte over it and a megabyte over it (refused: 431 for the
// head, 413 for the body). Shared by the parser's unit test and the servers' tests, so every
// server is held to the same table. Every request asks for /healthz (with a query where the target
// is the point), which each server answers 200 without credentials.
#pragma once

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "gpuscale/apiserver/server_options.h"

namespace gpuscale::testing {

struct RequestLimitCase {
  std::string name;   // what the row checks
  std::string bytes;  // the whole request, as sent
  int status;         // 200 (served, connection kept) or 431/413 (refused, connection closed)
};

inline constexpr size_t kMegabyte = 1 << 20;

// "GET <target> HTTP/1.1" with Host and `fields` (each "Name: value\r\n"), then `body` as given.
inline std::string requestBytes(const std::string& target, const std::string& fields,
                                const std::string& body = "") {
  return "GET " + target + " HTTP/1.1\r\nHost: x\r\n" + fields + "\r\n" + body;
}

// `count` fields named X-F<i> whose values pad the head to exactly `headBytes`, each field at most
// `fieldBytes` (name + value). Requires enough fields for the bytes.
inline std::string paddingFields(size_t count, size_t headBytes, const std::string& target) {
  const size_t fixed = requestBytes(target, "").size();
  std::string fields;
  size_t remaining = headBytes - fixed;
  for (size_t i = 0; i < count; ++i) {
    const std::string name = "X-F" + std::to_string(i);
    const size_t overhead = name.size() + 4;  // ": " and CRLF
    const size_t left = count - i;
    size_t value = remaining / left - overhead;
    if (i + 1 == count) value = remaining - overhead;
    fields += name + ": " + std::string(value, 'v') + "\r\n";
    remaining -= overhead + value;
  }
  return fields;
}

inline std::string chunked(size_t bytes, const std::string& trailer = "") {
  std::string body;
  constexpr size_t kChunk = 1000;
  for (size_t sent = 0; sent < bytes; sent += kChunk) {
    const size_t n = std::min(kChunk, bytes - sent);
    char size[32];
    std::snprintf(size, sizeof size, "%zx\r\n", n);
    body += size + std::string(n, 'b') + "\r\n";
  }
  return body + "0\r\n" + trailer + "\r\n";
}

inline std::vector<RequestLimitCase> requestLimitCases(const apiserver::RequestLimits& limits) {
  const std::string probe = "/healthz";
  std::vector<RequestLimitCase> rows;
  const auto add = [&](std::string name, std::string bytes, int status) {
    rows.push_back({std::move(name), std::move(bytes), status});
  };
  const auto field = [](size_t nameBytes, size_t valueBytes) {
    return "X" + std::string(nameBytes - 1, 'n') + ": " + std::string(valueBytes, 'v') + "\r\n";
  };
  const size_t f = limits.fieldBytes;
  add("field name at the limit", requestBytes(probe, field(f - 1, 1)), 200);
  add("field name one byte over", requestBytes(probe, field(f, 1)), 431);
  add("field name a megabyte over", requestBytes(probe, field(f + kMegabyte, 1)), 431);
  add("field value at the limit", requestBytes(probe, field(1, f - 1)), 200);
  add("field value one byte over", requestBytes(probe, field(1, f)), 431);
  add("field value a megabyte over", requestBytes(probe, field(1, f + kMegabyte)), 431);
  // Beast's own field storage throws for a name or value of 64 KiB and more.
  add("field value of 64 KiB", requestBytes(probe, field(1, 64 << 10)), 431);

  const auto fields = [](size_t count) {
    std::string out;
    for (size_t i = 0; i < count; ++i) out += "X-C" + std::to_string(i) + ": c\r\n";
    return out;
  };
  const size_t n = limits.headerCount;
  add("header count at the limit", requestBytes(probe, fields(n - 1)), 200);  // Host is one
  add("header count one over", requestBytes(probe, fields(n)), 431);
  add("header count a megabyte over", requestBytes(probe, fields(kMegabyte / 8)), 431);

  const size_t h = limits.headerBytes;
  const size_t spread = h / (f / 2) + 1;  // fields of about half the field limit
  add("header bytes at the limit", requestBytes(probe, paddingFields(spread, h, probe)), 200);
  add("header bytes one over", requestBytes(probe, paddingFields(spread, h + 1, probe)), 431);
  add("header bytes a megabyte over",
      requestBytes(probe, paddingFields(n - 1, h + kMegabyte, probe)), 431);

  const auto target = [&](size_t bytes) { return probe + "?" + std::string(bytes - 9, 'q'); };
  add("target at the limit", requestBytes(target(limits.targetBytes), ""), 200);
  add("target one byte over", requestBytes(target(limits.targetBytes + 1), ""), 431);
  add("target a megabyte over", requestBytes(target(limits.targetBytes + kMegabyte), ""), 431);

  const auto withBody = [&](size_t bytes) {
    return requestBytes(probe, "Content-Length: " + std::to_string(bytes) + "\r\n",
                        std::string(bytes, 'b'));
  };
  const size_t b = limits.bodyBytes;
  add("body on a GET at the limit", withBody(b), 200);
  add("body on a GET one byte over", withBody(b + 1), 413);
  add("body on a GET a megabyte over", withBody(b + kMegabyte), 413);
  const std::string te = "Transfer-Encoding: chunked\r\n";
  add("chunked body at the limit", requestBytes(probe, te, chunked(b)), 200);
  add("chunked body one byte over", requestBytes(probe, te, chunked(b + 1)), 413);
  add("chunked body a megabyte over", requestBytes(probe, te, chunked(b + kMegabyte)), 413);
  add("chunked body with a trailer over the field limit",
      requestBytes(probe, te, chunked(0, field(1, f))), 431);
  add("chunk extension of a megabyte",
      requestBytes(probe, te, "1;" + std::string(kMegabyte, 'e') + "\r\nb\r\n0\r\n\r\n"), 413);
  return rows;
}

}  // namespace gpuscale::testing
