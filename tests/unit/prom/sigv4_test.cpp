// AWS Signature Version 4 against the published examples of AWS's signing test suite (credentials
// AKIDEXAMPLE, 2015-08-30T12:36:00Z, us-east-1, service "service"), plus the canonical query rules
// the client relies on.
#include "gpuscale/prom/sigv4.h"

#include <gtest/gtest.h>

namespace gpuscale::prom {
namespace sigv4_test {

const AwsCredentials kSuiteCredentials{"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
                                       ""};
const SigV4Scope kSuiteScope{"us-east-1", "service"};
// 2015-08-30T12:36:00Z.
const auto kSuiteTime = std::chrono::system_clock::from_time_t(1440938160);

std::string authorizationOf(const SignedRequest& signedRequest) {
  for (const auto& [name, value] : signedRequest.headers) {
    if (name == "Authorization") return value;
  }
  return "";
}

struct SuiteCase {
  const char* name;
  const char* method;
  const char* query;
  const char* signature;
};

TEST(SigV4, PublishedSuiteExamples) {
  const SuiteCase cases[] = {
      {"get-vanilla", "GET", "",
       "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"},
      {"get-vanilla-query-order-key-case", "GET", "Param2=value2&Param1=value1",
       "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"},
      {"post-vanilla", "POST", "",
       "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"},
      {"post-vanilla-empty-query-value", "POST", "Param1=value1",
       "28038455d6de14eafc1f9222cf5aa6f1a96197d7deb8263271d420d138af7f11"},
  };
  for (const auto& c : cases) {
    SignableRequest request{c.method, "example.amazonaws.com", "/", c.query, ""};
    const SignedRequest signedRequest = signV4(request, kSuiteCredentials, kSuiteScope, kSuiteTime);
    EXPECT_EQ(authorizationOf(signedRequest),
              std::string("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/"
                          "aws4_request, SignedHeaders=host;x-amz-date, Signature=") +
                  c.signature)
        << c.name << "\n"
        << signedRequest.canonicalRequest;
  }
}

TEST(SigV4, GetVanillaIntermediateForms) {
  const SignedRequest signedRequest = signV4({"GET", "example.amazonaws.com", "/", "", ""},
                                             kSuiteCredentials, kSuiteScope, kSuiteTime);
  EXPECT_EQ(signedRequest.canonicalRequest,
            "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n"
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(signedRequest.stringToSign,
            "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n"
            "bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63");
  ASSERT_FALSE(signedRequest.headers.empty());
  EXPECT_EQ(signedRequest.headers.front(),
            (std::pair<std::string, std::string>{"X-Amz-Date", "20150830T123600Z"}));
}

TEST(SigV4, TemporaryCredentialsSignTheSessionToken) {
  AwsCredentials temporary = kSuiteCredentials;
  temporary.sessionToken = "token/with+chars=";
  const SignedRequest signedRequest =
      signV4({"GET", "example.amazonaws.com", "/", "", ""}, temporary, kSuiteScope, kSuiteTime);
  EXPECT_NE(
      authorizationOf(signedRequest).find("SignedHeaders=host;x-amz-date;x-amz-security-token"),
      std::string::npos);
  EXPECT_NE(signedRequest.canonicalRequest.find("x-amz-security-token:token/with+chars=\n"),
            std::string::npos);
  bool sent = false;
  for (const auto& [name, value] : signedRequest.headers) {
    sent = sent || (name == "X-Amz-Security-Token" && value == temporary.sessionToken);
  }
  EXPECT_TRUE(sent);
}

TEST(SigV4, CanonicalQueryString) {
  struct Case {
    const char* query;
    const char* canonical;
  };
  const Case cases[] = {
      {"", ""},
      {"b=2&a=1", "a=1&b=2"},
      {"a=2&a=1", "a=1&a=2"},
      {"Param1=value1", "Param1=value1"},
      {"query=sum+by+%28pod%29+%28rate%28x%5B1m%5D%29%29",
       "query=sum%20by%20%28pod%29%20%28rate%28x%5B1m%5D%29%29"},
      {"match%5B%5D=%7B__name__%3D~%22a.%2A%22%7D", "match%5B%5D=%7B__name__%3D~%22a.%2A%22%7D"},
      {"time=1714557600.5&timeout=10s", "time=1714557600.5&timeout=10s"},
      {"flag", "flag="},
      {"a=1&&b=2&", "a=1&b=2"},
      {"bad=%zz", "bad=%25zz"},
      {"tilde=~_-.", "tilde=~_-."},
  };
  for (const auto& c : cases) EXPECT_EQ(canonicalQueryString(c.query), c.canonical) << c.query;
}

TEST(SigV4, PathIsEncodedAgainExceptForS3) {
  const SignableRequest request{"GET", "h", "/workspaces/ws-1/api/v1/label/a%2Fb/values", "", ""};
  const auto aps = signV4(request, kSuiteCredentials, {"us-east-1", "aps"}, kSuiteTime);
  EXPECT_NE(aps.canonicalRequest.find("\n/workspaces/ws-1/api/v1/label/a%252Fb/values\n"),
            std::string::npos)
      << aps.canonicalRequest;
  const auto s3 = signV4(request, kSuiteCredentials, {"us-east-1", "s3"}, kSuiteTime);
  EXPECT_NE(s3.canonicalRequest.find("\n/workspaces/ws-1/api/v1/label/a%2Fb/values\n"),
            std::string::npos)
      << s3.canonicalRequest;
}

}  // namespace sigv4_test
}  // namespace gpuscale::prom
