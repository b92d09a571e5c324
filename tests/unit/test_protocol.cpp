// The protocol layer: framing (incl. recovery from bad input), JSON-RPC classification, positions.
#include <catch2/catch.hpp>

#include "protocol/framing.h"
#include "protocol/jsonrpc.h"
#include "protocol/position.h"

using namespace shardlens::protocol;

namespace {

std::vector<MessageReader::Event> drain(MessageReader& r) {
  std::vector<MessageReader::Event> out;
  MessageReader::Event e;
  while (r.next(e)) out.push_back(e);
  return out;
}

}  // namespace

TEST_CASE("framing: messages split at every byte and packed together come out whole and in order") {
  std::string stream = frame(R"({"a":1})") + frame(R"({"b":"é"})") + frame("");
  MessageReader r;
  std::vector<std::string> bodies;
  for (char c : stream) {
    r.feed(std::string_view(&c, 1));
    for (auto& e : drain(r)) {
      REQUIRE(e.kind == MessageReader::Event::Message);
      bodies.push_back(e.text);
    }
  }
  REQUIRE(bodies == std::vector<std::string>{R"({"a":1})", R"({"b":"é"})", ""});
  MessageReader together;
  together.feed(stream);
  REQUIRE(drain(together).size() == 3);
}

TEST_CASE("framing: header names are case-insensitive and Content-Type is accepted") {
  MessageReader r;
  r.feed("content-length: 2\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}");
  auto events = drain(r);
  REQUIRE(events.size() == 1);
  CHECK(events[0].kind == MessageReader::Event::Message);
  CHECK(events[0].text == "{}");
}

TEST_CASE("framing: a bad header is reported and the next message still arrives") {
  for (std::string bad : {"Content-Type: x\r\n\r\n{\"orphan\":1}", "Content-Length: abc\r\n\r\n", "Content-Length: -5\r\n\r\n",
                          "garbage line\r\n\r\n", "Content-Length: 3\r\nContent-Length: 3\r\n\r\n{}}",
                          "Content-Length: 2\r\nContent-Type: text/plain; charset=latin1\r\n\r\n{}"}) {
    CAPTURE(bad);
    MessageReader r;
    r.feed(bad + frame(R"({"ok":true})"));
    auto events = drain(r);
    REQUIRE(events.size() == 2);
    CHECK(events[0].kind == MessageReader::Event::Error);
    CHECK(events[1].kind == MessageReader::Event::Message);
    CHECK(events[1].text == R"({"ok":true})");
  }
}

TEST_CASE("framing: an oversized body is skipped without buffering it") {
  MessageReader r(1024);
  r.feed("Content-Length: 5000\r\n\r\n");
  r.feed(std::string(3000, 'x'));
  auto first = drain(r);
  REQUIRE(first.size() == 1);
  CHECK(first[0].kind == MessageReader::Event::Error);
  CHECK(first[0].text.find("5000") != std::string::npos);
  r.feed(std::string(2000, 'x') + frame("{}"));
  auto next = drain(r);
  REQUIRE(next.size() == 1);
  CHECK(next[0].text == "{}");
}

TEST_CASE("framing: a header block that never ends is dropped after 8 KiB") {
  MessageReader r;
  r.feed("X-Long: " + std::string(9000, 'y'));
  auto events = drain(r);
  REQUIRE(events.size() == 1);
  CHECK(events[0].kind == MessageReader::Event::Error);
  r.feed("\r\n\r\n" + frame("{}"));
  auto rest = drain(r);
  REQUIRE(!rest.empty());
  CHECK(rest.back().kind == MessageReader::Event::Message);
  CHECK(rest.back().text == "{}");
}

TEST_CASE("jsonrpc: requests, notifications, responses and invalid messages") {
  bool parse_error = false;
  std::string why;
  auto req = classify(R"({"jsonrpc":"2.0","id":7,"method":"x","params":{}})", parse_error, why);
  CHECK((req.kind == Incoming::Request && req.id == 7 && req.method == "x"));
  auto note = classify(R"({"jsonrpc":"2.0","method":"y"})", parse_error, why);
  CHECK(note.kind == Incoming::Notification);
  auto resp = classify(R"({"jsonrpc":"2.0","id":"s-1","result":null})", parse_error, why);
  CHECK((resp.kind == Incoming::Response && resp.id == "s-1"));
  for (std::string bad : {R"([1])", R"("x")", R"({"id":1,"method":"x"})", R"({"jsonrpc":"2.0","id":1.5,"method":"x"})",
                          R"({"jsonrpc":"2.0","id":1,"method":3})", R"({"jsonrpc":"2.0","id":1,"method":"x","params":5})",
                          R"({"jsonrpc":"2.0","id":null,"method":"x"})"}) {
    CAPTURE(bad);
    auto in = classify(bad, parse_error, why);
    CHECK(!parse_error);
    CHECK(in.kind == Incoming::Invalid);
  }
  classify("{\"jsonrpc\":\"2.0\",\"method\":\"\xff\xfe\"}", parse_error, why);
  CHECK(parse_error);
  classify("{not json", parse_error, why);
  CHECK(parse_error);
  // Well-formed, but a number no double holds: a parse error too, not an exception.
  why.clear();
  classify(R"({"jsonrpc":"2.0","id":1,"method":"x","params":{"n":1E400}})", parse_error, why);
  CHECK(parse_error);
  CHECK(why.find("number overflow") != std::string::npos);
  // Replies never throw on invalid UTF-8 coming back from analysis text.
  CHECK(serialize(make_error(nullptr, error_code::kParseError, "bad \xff byte")).find("bad") != std::string::npos);
}

TEST_CASE("jsonrpc: \"params\": null is a method without params (shutdown and exit from some clients)") {
  bool parse_error = false;
  std::string why;
  auto shutdown = classify(R"({"jsonrpc":"2.0","id":3,"method":"shutdown","params":null})", parse_error, why);
  CHECK(!parse_error);
  CHECK((shutdown.kind == Incoming::Request && shutdown.method == "shutdown" && shutdown.params.is_null()));
  auto exit = classify(R"({"jsonrpc":"2.0","method":"exit","params":null})", parse_error, why);
  CHECK((exit.kind == Incoming::Notification && exit.method == "exit" && exit.params.is_null()));
}

TEST_CASE("jsonrpc: nesting deeper than kMaxJsonDepth is a parse error, not a stack overflow") {
  auto nested = [](size_t depth, const std::string& open, const std::string& close) {
    std::string s;
    for (size_t i = 0; i < depth; ++i) s += open;
    s += "0";
    for (size_t i = 0; i < depth; ++i) s += close;
    return s;
  };
  bool parse_error = false;
  std::string why;
  // Valid JSON 90,000 levels deep: copying it into the message recursed once per level.
  for (auto [open, close] : {std::pair{"[", "]"}, std::pair{"{\"a\":", "}"}}) {
    std::string body = R"({"jsonrpc":"2.0","id":1,"method":"x","params":[)" + nested(90000, open, close) + "]}";
    auto in = classify(body, parse_error, why);
    CHECK(parse_error);
    CHECK(why.find("nested deeper than 512") != std::string::npos);
    CHECK(in.kind == Incoming::Invalid);
  }
  // Up to the limit (the message object and params count) it is an ordinary message.
  std::string body = R"({"jsonrpc":"2.0","id":1,"method":"x","params":[)" + nested(kMaxJsonDepth - 2, "[", "]") + "]}";
  auto in = classify(body, parse_error, why);
  CHECK(!parse_error);
  CHECK(in.kind == Incoming::Request);
  CHECK(nested_deeper_than(body, kMaxJsonDepth - 1));
  // Brackets inside strings (escaped quotes too) are text.
  CHECK(!nested_deeper_than(R"({"s":"[[[[\"[[[["})", 2));
  CHECK(nested_deeper_than("[[[", 2));
}

TEST_CASE("positions: UTF-16 counts astral characters twice, UTF-8 counts bytes") {
  std::string text = "a = 1\n# é𝔘x\r\nlast";
  LineIndex index(text);
  REQUIRE(index.line_count() == 3);
  size_t x = text.find('x');
  // "# " (2) + é (1 unit, 2 bytes) + 𝔘 (2 units, 4 bytes) = 5 units before x.
  CHECK(index.offset(text, {1, 5}, PositionEncoding::Utf16) == x);
  CHECK(index.position(text, x, PositionEncoding::Utf16) == Position{1, 5});
  CHECK(index.offset(text, {1, 8}, PositionEncoding::Utf8) == x);
  CHECK(index.position(text, x, PositionEncoding::Utf8) == Position{1, 8});
  // Inside the surrogate pair: the start of the character; past the line: before its \r\n.
  CHECK(index.offset(text, {1, 4}, PositionEncoding::Utf16) == text.find("𝔘"));
  CHECK(index.offset(text, {1, 99}, PositionEncoding::Utf16) == text.find('\r'));
  CHECK(index.offset(text, {7, 0}, PositionEncoding::Utf16) == text.size());
  CHECK(index.offset(text, {2, 2}, PositionEncoding::Utf16) == text.find("st"));
  // Inside a UTF-8 sequence: moved back to its start.
  CHECK(index.offset(text, {1, 3}, PositionEncoding::Utf8) == text.find("é"));
  // Invalid bytes count one unit each, never two.
  std::string bad = "\xff\xfez";
  LineIndex bad_index(bad);
  CHECK(bad_index.offset(bad, {0, 2}, PositionEncoding::Utf16) == 2);
}
