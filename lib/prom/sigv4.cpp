#include "gpuscale/prom/sigv4.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include <algorithm>
#include <ctime>

#include "gpuscale/core/percent_encoding.h"

namespace gpuscale::prom {
namespace {

constexpr char kAlgorithm[] = "AWS4-HMAC-SHA256";

std::string hmacSha256(std::string_view key, std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest, &size);
  return std::string(reinterpret_cast<const char*>(digest), size);
}

bool unreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.' || c == '~';
}

// Percent-encodes every byte but the unreserved ones (and '/' when `keepSlash`), upper-case hex.
std::string uriEncode(std::string_view text, bool keepSlash) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (unreserved(c) || (keepSlash && c == '/')) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kDigits[c >> 4];
      out += kDigits[c & 0xf];
    }
  }
  return out;
}

// Form decoding; a malformed escape is kept as it is.
std::string formDecode(std::string_view text) {
  std::string out;
  for (size_t start = 0; start < text.size();) {
    const size_t percent = text.find('%', start);
    const std::string_view piece = text.substr(start, percent - start);
    out += *core::percentDecode(piece, true);
    if (percent == std::string_view::npos) break;
    auto escape = core::percentDecode(text.substr(percent, 3), true);
    out += escape ? *escape : "%";
    start = percent + (escape ? 3 : 1);
  }
  return out;
}

std::string formatSigningTime(std::chrono::system_clock::time_point now, const char* format) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  return std::string(text, std::strftime(text, sizeof text, format, &utc));
}

}  // namespace

std::string sha256Hex(std::string_view data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  return core::hexLower(std::string_view(reinterpret_cast<const char*>(digest), sizeof digest));
}

std::string canonicalQueryString(std::string_view query) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (size_t start = 0; start < query.size();) {
    size_t end = query.find('&', start);
    if (end == std::string_view::npos) end = query.size();
    std::string_view item = query.substr(start, end - start);
    if (!item.empty()) {
      const size_t equals = item.find('=');
      const std::string_view name = item.substr(0, equals);
      const std::string_view value =
          equals == std::string_view::npos ? std::string_view() : item.substr(equals + 1);
      pairs.emplace_back(uriEncode(formDecode(name), false), uriEncode(formDecode(value), false));
    }
    start = end + 1;
  }
  std::sort(pairs.begin(), pairs.end());
  std::string out;
  for (const auto& [name, value] : pairs) {
    if (!out.empty()) out += '&';
    out += name + "=" + value;
  }
  return out;
}

SignedRequest signV4(const SignableRequest& request, const AwsCredentials& credentials,
                     const SigV4Scope& scope, std::chrono::system_clock::time_point now) {
  SignedRequest signedRequest;
  const std::string amzDate = formatSigningTime(now, "%Y%m%dT%H%M%SZ");
  const std::string day = amzDate.substr(0, 8);
  signedRequest.query = canonicalQueryString(request.query);

  // Sorted by name: host, x-amz-date, x-amz-security-token.
  std::vector<std::pair<std::string, std::string>> signedHeaders = {{"host", request.host},
                                                                    {"x-amz-date", amzDate}};
  if (!credentials.sessionToken.empty()) {
    signedHeaders.emplace_back("x-amz-security-token", credentials.sessionToken);
  }
  std::string canonicalHeaders, headerNames;
  for (const auto& [name, value] : signedHeaders) {
    canonicalHeaders += name + ":" + value + "\n";
    headerNames += (headerNames.empty() ? "" : ";") + name;
  }
  const std::string path = request.path.empty() ? "/" : request.path;
  const std::string canonicalPath = scope.service == "s3" ? path : uriEncode(path, true);
  signedRequest.canonicalRequest = request.method + "\n" + canonicalPath + "\n" +
                                   signedRequest.query + "\n" + canonicalHeaders + "\n" +
                                   headerNames + "\n" + sha256Hex(request.payload);

  const std::string credentialScope =
      day + "/" + scope.region + "/" + scope.service + "/aws4_request";
  signedRequest.stringToSign = std::string(kAlgorithm) + "\n" + amzDate + "\n" + credentialScope +
                               "\n" + sha256Hex(signedRequest.canonicalRequest);
  std::string key = hmacSha256("AWS4" + credentials.secretAccessKey, day);
  key = hmacSha256(key, scope.region);
  key = hmacSha256(key, scope.service);
  key = hmacSha256(key, "aws4_request");
  const std::string signature = hmacSha256(key, signedRequest.stringToSign);

  signedRequest.headers.emplace_back("X-Amz-Date", amzDate);
  if (!credentials.sessionToken.empty()) {
    signedRequest.headers.emplace_back("X-Amz-Security-Token", credentials.sessionToken);
  }
  signedRequest.headers.emplace_back(
      "Authorization", std::string(kAlgorithm) + " Credential=" + credentials.accessKeyId + "/" +
                           credentialScope + ", SignedHeaders=" + headerNames +
                           ", Signature=" + core::hexLower(signature));
  return signedRequest;
}

}  // namespace gpuscale::prom
