#include "request_parser.h"

#include <algorithm>
#include <boost/beast/http/error.hpp>
#include <cstdint>
#include <utility>

#include "gpuscale/apiserver/url.h"
#include "gpuscale/core/enum_names.h"

namespace gpuscale::apiserver::detail {

namespace http = boost::beast::http;

std::string_view refusalLabel(RequestRefusal refusal) {
  static constexpr core::EnumNames<RequestRefusal, 7> kNames{
      {{RequestRefusal::kHeaderBytes, "header_bytes"},
       {RequestRefusal::kFieldBytes, "header_field_bytes"},
       {RequestRefusal::kHeaderCount, "header_count"},
       {RequestRefusal::kTargetBytes, "target_bytes"},
       {RequestRefusal::kBodyBytes, "body_bytes"},
       {RequestRefusal::kMalformed, "malformed"},
       {RequestRefusal::kNone, "none"}}};
  return core::enumName(kNames, refusal, "none");
}

unsigned refusalStatus(RequestRefusal refusal) {
  switch (refusal) {
    case RequestRefusal::kHeaderBytes:
    case RequestRefusal::kFieldBytes:
    case RequestRefusal::kHeaderCount:
    case RequestRefusal::kTargetBytes:
      return 431;  // as Go's server answers a request line or header over MaxHeaderBytes
    case RequestRefusal::kBodyBytes:
      return 413;
    case RequestRefusal::kMalformed:
    case RequestRefusal::kNone:
      break;
  }
  return 400;
}

size_t readBufferLimit(const RequestLimits& limits) {
  // The head must fit to be parsed (and one byte more to be refused for its size); the rest holds
  // one read's worth of a body or of the next, pipelined request.
  return limits.headerBytes + 1 + 16 * 1024;
}

RequestParser::RequestParser(const RequestLimits& limits) : limits_(limits) {
  header_limit(static_cast<std::uint32_t>(std::min<size_t>(limits.headerBytes, UINT32_MAX)));
  body_limit(limits.bodyBytes);
}

void RequestParser::refuse(RequestRefusal refusal, error_code& ec) {
  refusal_ = refusal;
  // The error only stops the parse; refusal() reports the reason.
  ec = refusal == RequestRefusal::kBodyBytes   ? http::error::body_limit
       : refusal == RequestRefusal::kMalformed ? http::error::bad_target
                                               : http::error::header_limit;
}

RequestRefusal RequestParser::refusal(const error_code& ec) const {
  if (refusal_ != RequestRefusal::kNone) return refusal_;
  if (ec == http::error::header_limit) return RequestRefusal::kHeaderBytes;
  if (ec == http::error::body_limit) return RequestRefusal::kBodyBytes;
  // The read buffer is full although the parser wants more: before the end of the head that is
  // the header limit; after it, a chunk-size line or trailer too long for the buffer.
  if (ec == http::error::buffer_overflow) {
    return is_header_done() ? RequestRefusal::kBodyBytes : RequestRefusal::kHeaderBytes;
  }
  // A peer that went away or ran out of time sent nothing wrong; anything else Beast rejects is
  // malformed.
  if (ec.category() == http::make_error_code(http::error::bad_target).category() &&
      ec != http::error::end_of_stream && ec != http::error::partial_message &&
      ec != http::error::need_more) {
    return RequestRefusal::kMalformed;
  }
  return RequestRefusal::kNone;
}

HttpRequest RequestParser::release() { return std::move(request_); }

void RequestParser::on_request_impl(http::verb method, string_view methodString, string_view target,
                                    int version, error_code& ec) {
  (void)version;
  if (target.size() > limits_.targetBytes) return refuse(RequestRefusal::kTargetBytes, ec);
  // Beast applies its header limit to the request line, then to each stretch of fields not parsed
  // yet (parsed fields leave its buffer): the whole head is counted here instead, as the request
  // line ("METHOD SP target SP HTTP/1.x CRLF") and each field kept (name, ": ", value, CRLF).
  headBytes_ = methodString.size() + target.size() + 12;
  if (headBytes_ + 2 > limits_.headerBytes) return refuse(RequestRefusal::kHeaderBytes, ec);
  header_limit(
      static_cast<std::uint32_t>(std::min<size_t>(limits_.headerBytes - headBytes_, UINT32_MAX)));
  // Origin-form only ("/path?query"): the absolute form is for proxies, "*" for OPTIONS.
  if (target.empty() || target.front() != '/') return refuse(RequestRefusal::kMalformed, ec);
  const std::string_view raw(target.data(), target.size());
  const size_t question = raw.find('?');
  auto path = decodePath(raw.substr(0, question));
  if (!path) return refuse(RequestRefusal::kMalformed, ec);
  head_ = method == http::verb::head;
  request_.method.assign(methodString.data(), methodString.size());
  request_.target.assign(raw);
  request_.path = std::move(*path);
  if (question != std::string_view::npos) request_.rawQuery.assign(raw.substr(question + 1));
  request_.headers.reserve(8);
}

void RequestParser::on_response_impl(int, string_view, int, error_code& ec) {
  ec = http::error::bad_method;  // a request parser never sees a status line
}

void RequestParser::on_field_impl(http::field, string_view name, string_view value,
                                  error_code& ec) {
  if (++fields_ > limits_.headerCount) return refuse(RequestRefusal::kHeaderCount, ec);
  if (name.size() + value.size() > limits_.fieldBytes) {
    return refuse(RequestRefusal::kFieldBytes, ec);
  }
  if (is_header_done()) return;  // a trailer: counted, not kept
  headBytes_ += name.size() + value.size() + 4;
  if (headBytes_ + 2 > limits_.headerBytes) return refuse(RequestRefusal::kHeaderBytes, ec);
  request_.headers.emplace_back(std::string(name.data(), name.size()),
                                std::string(value.data(), value.size()));
}

void RequestParser::on_header_impl(error_code&) {}

void RequestParser::on_body_init_impl(const boost::optional<std::uint64_t>& contentLength,
                                      error_code& ec) {
  if (contentLength && *contentLength > limits_.bodyBytes) {
    return refuse(RequestRefusal::kBodyBytes, ec);
  }
  if (contentLength) request_.body.reserve(static_cast<size_t>(*contentLength));
}

std::size_t RequestParser::on_body_impl(string_view body, error_code& ec) {
  if (request_.body.size() + body.size() > limits_.bodyBytes) {
    refuse(RequestRefusal::kBodyBytes, ec);
    return 0;
  }
  request_.body.append(body.data(), body.size());
  return body.size();
}

void RequestParser::on_chunk_header_impl(std::uint64_t size, string_view extensions,
                                         error_code& ec) {
  if (size > limits_.bodyBytes - std::min(limits_.bodyBytes, request_.body.size())) {
    return refuse(RequestRefusal::kBodyBytes, ec);
  }
  // A chunk extension is part of the framing, not the body; it may not be longer than a field.
  if (extensions.size() > limits_.fieldBytes) return refuse(RequestRefusal::kBodyBytes, ec);
}

std::size_t RequestParser::on_chunk_body_impl(std::uint64_t, string_view body, error_code& ec) {
  return on_body_impl(body, ec);
}

void RequestParser::on_finish_impl(error_code&) {}

}  // namespace gpuscale::apiserver::detail
