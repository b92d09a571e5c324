#!/usr/bin/env python3
"""Protocol tests of `shardlens serve`: raw bytes over stdio, Python 3 standard library only.

Usage: python3 tests/lsp/protocol_test.py [SHARDLENS] [unittest options]
       (SHARDLENS defaults to $SHARDLENS, then build/shardlens)

Every test runs its own server. Everything the server writes on stdout is parsed with a strict
framer (header lines `Name: value`, a numeric Content-Length, a UTF-8 JSON object with
"jsonrpc": "2.0" as body): anything else fails the test. Every request id must get exactly one
reply; after every bad input the server must still answer a valid request.
"""

import json
import os
import queue
import subprocess
import sys
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
FIXTURES = os.environ.get("SHARDLENS_FIXTURES", os.path.join(REPO, "..", "shared", "fixtures"))
SCALE = float(os.environ.get("SHARDLENS_LSP_TIMEOUT_SCALE", "4" if os.environ.get("ASAN_OPTIONS") else "1"))
BINARY = None  # set in main()

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
SERVER_NOT_INITIALIZED, REQUEST_CANCELLED = -32002, -32800


def fixture_uri(name):
    return "file://" + os.path.abspath(os.path.join(FIXTURES, name))


def read_fixture(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as f:
        return f.read()


def frame(body):
    if isinstance(body, str):
        body = body.encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class Server:
    """One `shardlens serve` process and a strict reader of its stdout."""

    def __init__(self, args=()):
        self.proc = subprocess.Popen([BINARY, "serve", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, bufsize=0)
        self.messages = queue.Queue()
        self.framing_errors = []
        self.reply_count = {}      # id (as JSON text) -> number of replies
        self.null_id_errors = []   # error replies with id null
        self.server_requests = []
        self.notifications = []
        self.stderr = b""
        self.next_id = 1000
        self.stdout_closed = threading.Event()
        self.leftover = b""
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._read_stdout, daemon=True),
                         threading.Thread(target=self._read_stderr, daemon=True)]
        for t in self._threads:
            t.start()

    # -- reading ------------------------------------------------------------------------------

    def _read_stderr(self):
        while True:
            b = self.proc.stderr.read(65536)
            if not b:
                return
            self.stderr += b

    def _fail(self, what, data):
        self.framing_errors.append("%s: %r" % (what, data[:300]))

    def _read_stdout(self):
        fd = self.proc.stdout.fileno()
        buf = b""

        def more():
            nonlocal buf
            b = os.read(fd, 1 << 20)
            if not b:
                return False
            buf += b
            return True

        try:
            while True:
                while b"\r\n\r\n" not in buf:
                    if not more():
                        self.leftover = buf
                        return
                head, buf = buf.split(b"\r\n\r\n", 1)
                length = None
                for line in head.split(b"\r\n"):
                    name, sep, value = line.partition(b":")
                    if not sep:
                        return self._fail("header line without ':'", head)
                    name = name.strip().lower()
                    if name == b"content-length":
                        v = value.strip()
                        if not v.isdigit():
                            return self._fail("non-numeric Content-Length", head)
                        length = int(v)
                    elif name == b"content-type":
                        if b"utf-8" not in value.lower() and b"utf8" not in value.lower():
                            return self._fail("Content-Type that is not utf-8", head)
                    else:
                        return self._fail("unknown header", head)
                if length is None:
                    return self._fail("no Content-Length", head)
                while len(buf) < length:
                    if not more():
                        return self._fail("stdout ended inside a message body", buf)
                body, buf = buf[:length], buf[length:]
                try:
                    msg = json.loads(body.decode("utf-8"))
                except (UnicodeDecodeError, ValueError) as e:
                    return self._fail("body is not UTF-8 JSON (%s)" % e, body)
                if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
                    return self._fail("body is not a JSON-RPC 2.0 object", body)
                self._dispatch(msg)
        finally:
            self.stdout_closed.set()

    def _dispatch(self, msg):
        if "method" in msg and "id" in msg:
            # a request from the server: answer it as a minimal client would
            self.server_requests.append(msg)
            result = None
            if msg["method"] == "workspace/configuration":
                result = [None] * len(msg.get("params", {}).get("items", []))
            self.send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
            return
        if "method" in msg:
            self.notifications.append(msg)
            return
        if "id" not in msg or (("result" in msg) == ("error" in msg)):
            self.framing_errors.append("malformed response: %r" % (msg,))
        key = json.dumps(msg.get("id"))
        with self._lock:
            self.reply_count[key] = self.reply_count.get(key, 0) + 1
        if msg.get("id") is None:
            self.null_id_errors.append(msg)
        self.messages.put(msg)

    # -- writing ------------------------------------------------------------------------------

    def send_raw(self, data):
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except (BrokenPipeError, ConnectionResetError, ValueError):
            pass

    def send(self, obj):
        self.send_raw(frame(json.dumps(obj)))

    def request(self, method, params=None, id=None):
        if id is None:
            self.next_id += 1
            id = self.next_id
        msg = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return id

    def notify(self, method, params=None):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    # -- waiting ------------------------------------------------------------------------------

    def replies(self, id):
        return self.reply_count.get(json.dumps(id), 0)

    def wait_reply(self, id, timeout=10.0):
        """The reply to `id`; replies to other ids seen meanwhile are kept in self.others."""
        deadline = time.time() + timeout * SCALE
        while True:
            left = deadline - time.time()
            if left <= 0:
                raise AssertionError("no reply to id %r within %.0f s; stderr tail:\n%s"
                                     % (id, timeout * SCALE, self.stderr[-2000:].decode("utf-8", "replace")))
            try:
                msg = self.messages.get(timeout=min(left, 0.2))
            except queue.Empty:
                if self.stdout_closed.is_set() and self.messages.empty():
                    raise AssertionError("stdout closed while waiting for id %r (exit %r); stderr tail:\n%s"
                                         % (id, self.proc.poll(), self.stderr[-2000:].decode("utf-8", "replace")))
                continue
            if msg.get("id") == id and type(msg.get("id")) is type(id):
                return msg
            self.others.append(msg)

    others = None

    def drain(self, seconds):
        """Collect whatever replies arrive within `seconds`."""
        got = []
        deadline = time.time() + seconds * SCALE
        while time.time() < deadline:
            try:
                got.append(self.messages.get(timeout=0.05))
            except queue.Empty:
                pass
        return got

    def wait_exit(self, timeout=5.0):
        try:
            return self.proc.wait(timeout=timeout * SCALE)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return None

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        # The readers end at EOF now that the process is gone. Only then may the pipes be closed:
        # a reader still in read(2) on a closed descriptor would read from whatever pipe the next
        # server gets under the same number, and swallow that server's messages.
        for t in self._threads:
            t.join(timeout=10)
        for f in (self.proc.stdout, self.proc.stderr):
            try:
                f.close()
            except OSError:
                pass


INIT_PARAMS = {
    "processId": None,
    "rootUri": None,
    "capabilities": {"general": {"positionEncodings": ["utf-16"]},
                     "textDocument": {"hover": {"contentFormat": ["markdown", "plaintext"]}}},
    "initializationOptions": {"meshes": ["1x8"]},
}


class ProtocolTest(unittest.TestCase):
    initialize = True

    def setUp(self):
        self.s = Server()
        self.s.others = []
        self.expected_ids = []
        if self.initialize:
            self.initialize_server()

    def tearDown(self):
        try:
            self.assertEqual(self.s.framing_errors, [], "stdout must carry only well-framed JSON-RPC messages")
            for id in self.expected_ids:
                self.assertEqual(self.s.replies(id), 1, "request id %r must get exactly one reply" % (id,))
            dup = {k: n for k, n in self.s.reply_count.items() if n > 1 and k != "null"}
            self.assertEqual(dup, {}, "ids answered more than once")
        finally:
            self.s.kill()

    # -- helpers ------------------------------------------------------------------------------

    def call(self, method, params=None, id=None, timeout=10.0):
        id = self.s.request(method, params, id)
        self.expected_ids.append(id)
        return self.s.wait_reply(id, timeout)

    def assertError(self, reply, code, what):
        self.assertIn("error", reply, "%s: expected error %d, got %r" % (what, code, reply))
        self.assertEqual(reply["error"].get("code"), code, "%s: %r" % (what, reply))
        self.assertIsInstance(reply["error"].get("message"), str, what)

    def assertResult(self, reply, what):
        self.assertNotIn("error", reply, "%s: %r" % (what, reply))
        self.assertIn("result", reply, what)
        return reply["result"]

    def initialize_server(self, init=INIT_PARAMS):
        r = self.call("initialize", init)
        caps = self.assertResult(r, "initialize")["capabilities"]
        self.s.notify("initialized", {})
        self.mlp_uri = fixture_uri("mlp.py")
        self.mlp = read_fixture("mlp.py")
        self.s.notify("textDocument/didOpen", {"textDocument": {"uri": self.mlp_uri, "languageId": "python",
                                                                "version": 1, "text": self.mlp}})
        return caps

    def ping(self, what, timeout=10.0):
        """A valid request after a bad input: hover on mlp.py's fc2 must be answered normally (how soon
        after a huge input is the benchmark's figure, not this liveness check's)."""
        line = self.mlp.split("\n").index(next(l for l in self.mlp.split("\n") if "self.fc2 =" in l))
        r = self.call("textDocument/hover", {"textDocument": {"uri": self.mlp_uri},
                                             "position": {"line": line, "character": 14}}, timeout=timeout * SCALE)
        self.assertResult(r, "valid hover after %s" % what)
        return r

    def assert_only_null_id_errors(self, codes, what, at_most=1):
        """Replies other than to our requests: at most `at_most` error with id null and a code in codes."""
        stray = [m for m in self.s.others if m.get("id") is None]
        other = [m for m in self.s.others if m.get("id") is not None]
        self.assertEqual(other, [], "%s: unexpected replies" % what)
        self.assertLessEqual(len(stray), at_most, "%s: %r" % (what, stray))
        for m in stray:
            self.assertIn("error", m, what)
            self.assertIn(m["error"]["code"], codes, "%s: %r" % (what, m))
        self.s.others.clear()


class BeforeInitialize(ProtocolTest):
    initialize = False

    def test_requests_before_initialize_get_32002(self):
        r = self.call("textDocument/hover", {"textDocument": {"uri": fixture_uri("mlp.py")},
                                             "position": {"line": 0, "character": 0}})
        self.assertError(r, SERVER_NOT_INITIALIZED, "hover before initialize")
        r = self.call("workspace/executeCommand", {"command": "shardlens.showPlan", "arguments": []})
        self.assertError(r, SERVER_NOT_INITIALIZED, "executeCommand before initialize")
        # notifications before initialize are dropped: no reply
        self.s.notify("textDocument/didOpen", {"textDocument": {"uri": "file:///x.py", "languageId": "python",
                                                                "version": 1, "text": "x = 1\n"}})
        self.initialize_server()
        self.ping("initialize after early requests")
        self.assertEqual([m for m in self.s.others], [], "the early notification got a reply")

    def test_exit_before_initialize_exits_1(self):
        self.s.notify("exit")
        self.assertEqual(self.s.wait_exit(), 1)


class Framing(ProtocolTest):
    def test_missing_content_length(self):
        self.s.send_raw(b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n")
        self.ping("a header block without Content-Length")
        self.assert_only_null_id_errors({PARSE_ERROR, INVALID_REQUEST}, "missing Content-Length")

    def test_non_numeric_content_length(self):
        self.s.send_raw(b"Content-Length: abc\r\n\r\n")
        self.ping("Content-Length: abc")
        self.assert_only_null_id_errors({PARSE_ERROR, INVALID_REQUEST}, "non-numeric Content-Length")

    def test_negative_content_length(self):
        self.s.send_raw(b"Content-Length: -5\r\n\r\n")
        self.ping("Content-Length: -5")
        self.assert_only_null_id_errors({PARSE_ERROR, INVALID_REQUEST}, "negative Content-Length")

    def test_overflowing_content_length(self):
        self.s.send_raw(b"Content-Length: 99999999999999999999999\r\n\r\n")
        self.ping("Content-Length: 10^23")
        self.assert_only_null_id_errors({PARSE_ERROR, INVALID_REQUEST}, "overflowing Content-Length")

    def test_header_line_without_colon(self):
        self.s.send_raw(b"this is not a header\r\n\r\n")
        self.ping("a header line without a colon")
        self.assert_only_null_id_errors({PARSE_ERROR, INVALID_REQUEST}, "header without colon")

    def test_extra_headers_and_lowercase_name(self):
        body = json.dumps({"jsonrpc": "2.0", "id": 77, "method": "textDocument/hover",
                           "params": {"textDocument": {"uri": self.mlp_uri}, "position": {"line": 0, "character": 0}}}).encode()
        self.s.send_raw(b"content-length: %d\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n%s" % (len(body), body))
        self.expected_ids.append(77)
        self.assertResult(self.s.wait_reply(77), "a message with a lower-case header name and a Content-Type")

    def test_message_split_across_writes(self):
        body = frame(json.dumps({"jsonrpc": "2.0", "id": 78, "method": "textDocument/hover",
                                 "params": {"textDocument": {"uri": self.mlp_uri}, "position": {"line": 0, "character": 0}}}))
        for i in range(0, len(body), 7):
            self.s.send_raw(body[i:i + 7])
            time.sleep(0.002)
        self.expected_ids.append(78)
        self.assertResult(self.s.wait_reply(78), "a message written 7 bytes at a time")

    def test_two_messages_in_one_write(self):
        a = frame(json.dumps({"jsonrpc": "2.0", "id": 81, "method": "textDocument/codeLens",
                              "params": {"textDocument": {"uri": self.mlp_uri}}}))
        b = frame(json.dumps({"jsonrpc": "2.0", "id": 82, "method": "textDocument/codeLens",
                              "params": {"textDocument": {"uri": self.mlp_uri}}}))
        self.s.send_raw(a + b)
        self.expected_ids += [81, 82]
        self.assertResult(self.s.wait_reply(81), "first of two messages in one write")
        self.assertResult(self.s.wait_reply(82), "second of two messages in one write")

    def test_50mb_message(self):
        pad = "x" * (50 * 1024 * 1024)
        t0 = time.time()
        id = self.s.request("textDocument/hover", {"textDocument": {"uri": self.mlp_uri},
                                                   "position": {"line": 0, "character": 0}, "padding": pad})
        self.expected_ids.append(id)
        r = self.s.wait_reply(id, timeout=60)
        self.assertTrue("result" in r or "error" in r)
        self.ping("a 50 MB message", timeout=60)
        self.assertLess(time.time() - t0, 60 * SCALE)

    def test_50mb_document(self):
        text = self.mlp + "# " + "y" * (50 * 1024 * 1024) + "\n"
        self.s.notify("textDocument/didOpen", {"textDocument": {"uri": "file:///tmp/shardlens-big.py", "languageId": "python",
                                                                "version": 1, "text": text}})
        self.ping("a 50 MB document", timeout=60)


class Json(ProtocolTest):
    def assert_one_parse_error(self, body, request_id, what):
        self.s.send_raw(frame(body))
        self.ping(what)
        self.assertEqual(len(self.s.null_id_errors), 1, "%s: exactly one reply: %r" % (what, self.s.others))
        self.assertError(self.s.null_id_errors[0], PARSE_ERROR, what)
        self.assertEqual(self.s.replies(request_id), 0, "%s: no reply with the id of an unparsable message" % what)
        self.s.others.clear()

    def test_bad_json_gets_32700_with_id_null(self):
        self.assert_one_parse_error(b'{"jsonrpc": "2.0", "id": 5, "method": ', 5, "truncated JSON")

    def test_a_number_too_large_for_a_double_gets_32700(self):
        self.assert_one_parse_error(b'{"jsonrpc": "2.0", "id": 9, "method": "textDocument/hover", "params": {"n": 1E400}}', 9,
                                    "a number too large for a double")

    def test_deep_nesting_gets_32700_and_the_server_lives_on(self):
        # Valid JSON 90,000 levels deep overflowed the server's stack (issue 32).
        for open_, close in (("[", "]"), ('{"a":', "}")):
            body = '{"jsonrpc": "2.0", "id": 11, "method": "textDocument/hover", "params": %s0%s}' % (
                open_ * 90000, close * 90000)
            self.assert_one_parse_error(body.encode(), 11, "JSON nested 90,000 deep in %s" % open_)
            self.s.null_id_errors.clear()
        # Ordinary nesting is not affected: a deep but reasonable value is an ordinary bad hover.
        r = self.call("textDocument/hover", {"textDocument": {"uri": self.mlp_uri}, "position": {"line": 0, "character": 0},
                                             "x": json.loads("[" * 100 + "]" * 100)})
        self.assertResult(r, "a hover with a 100-deep extra field")

    def test_invalid_utf8_in_a_string(self):
        body = (b'{"jsonrpc": "2.0", "id": 6, "method": "textDocument/hover", "params": {"textDocument": '
                b'{"uri": "file:///tmp/caf\xc3\x28\xff.py"}, "position": {"line": 0, "character": 0}}}')
        self.s.send_raw(frame(body))
        self.ping("invalid UTF-8")
        replies = self.s.null_id_errors + [m for m in self.s.others if m.get("id") == 6]
        self.assertEqual(len(replies), 1, "exactly one reply to a message with invalid UTF-8: %r" % replies)
        self.assertError(replies[0], PARSE_ERROR, "invalid UTF-8 inside a string")
        self.s.others.clear()

    def test_invalid_utf8_in_a_notification(self):
        body = (b'{"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": '
                b'{"uri": "file:///tmp/u.py", "languageId": "python", "version": 1, "text": "x = \'\xff\xfe\'\\n"}}}')
        self.s.send_raw(frame(body))
        self.ping("invalid UTF-8 in a notification")
        self.assert_only_null_id_errors({PARSE_ERROR}, "invalid UTF-8 in a notification")

    def test_non_object_messages_get_32600(self):
        for body in (b"42", b'"hello"', b"null", b"true", b"[]"):
            self.s.send_raw(frame(body))
            self.ping("the message %r" % body)
            self.assertEqual(len(self.s.null_id_errors), 1, "one reply to %r: %r" % (body, self.s.others))
            self.assertError(self.s.null_id_errors[0], INVALID_REQUEST, "message %r" % body)
            self.s.null_id_errors.clear()
            self.s.others.clear()

    def test_missing_or_wrong_jsonrpc_gets_32600(self):
        hover = {"textDocument": {"uri": self.mlp_uri}, "position": {"line": 0, "character": 0}}
        for id, msg in ((7, {"id": 7, "method": "textDocument/hover", "params": hover}),
                        (8, {"jsonrpc": "1.0", "id": 8, "method": "textDocument/hover", "params": hover}),
                        (9, {"jsonrpc": "2.0", "id": 9, "method": 5, "params": hover})):
            self.s.send(msg)
            self.expected_ids.append(id)
            self.assertError(self.s.wait_reply(id), INVALID_REQUEST, "message %r" % msg)
            self.ping("message %r" % msg)
            self.assert_only_null_id_errors(set(), "message %r" % msg, at_most=0)

    def test_id_of_a_wrong_type(self):
        self.s.send({"jsonrpc": "2.0", "id": {"a": 1}, "method": "textDocument/hover",
                     "params": {"textDocument": {"uri": self.mlp_uri}, "position": {"line": 0, "character": 0}}})
        self.ping("an object as id")
        self.assertEqual(len(self.s.null_id_errors), 1, "one reply to an object id: %r" % self.s.others)
        self.assertError(self.s.null_id_errors[0], INVALID_REQUEST, "object id")
        self.s.others.clear()

    def test_string_ids_are_echoed(self):
        r = self.call("textDocument/hover", {"textDocument": {"uri": self.mlp_uri}, "position": {"line": 0, "character": 0}},
                      id="req-ü-1")
        self.assertResult(r, "a request with a string id")


class Dispatch(ProtocolTest):
    def test_unknown_request_gets_32601(self):
        r = self.call("shardlens/doesNotExist", {})
        self.assertError(r, METHOD_NOT_FOUND, "unknown request")
        r = self.call("$/shardlens.unknownRequest", {})
        self.assertError(r, METHOD_NOT_FOUND, "unknown $/ request")
        self.ping("unknown requests")

    def test_unknown_notifications_are_ignored(self):
        self.s.notify("shardlens/doesNotExist", {"x": 1})
        self.s.notify("$/unknownNotification", {})
        self.s.notify("$/setTrace", {"value": "off"})
        self.ping("unknown notifications")
        self.assert_only_null_id_errors(set(), "unknown notifications", at_most=0)
        self.assertEqual(self.s.drain(0.3), [], "a notification got a reply")

    def test_wrong_params_get_32602(self):
        pos = {"line": 0, "character": 0}
        for params in ({"textDocument": 5, "position": pos},
                       {"textDocument": {"uri": self.mlp_uri}},
                       {"textDocument": {"uri": self.mlp_uri}, "position": {"line": "zero", "character": 0}},
                       {"textDocument": {"uri": self.mlp_uri}, "position": {"line": -1, "character": 0}},
                       [1, 2]):
            r = self.call("textDocument/hover", params)
            self.assertError(r, INVALID_PARAMS, "hover with params %r" % (params,))
            self.ping("hover with params %r" % (params,))
        r = self.call("textDocument/codeLens", {"textDocument": {}})
        self.assertError(r, INVALID_PARAMS, "codeLens without uri")
        r = self.call("workspace/executeCommand", {"arguments": []})
        self.assertError(r, INVALID_PARAMS, "executeCommand without command")
        # bad params in a notification: no reply, the server lives on
        self.s.notify("textDocument/didChange", {"textDocument": {"uri": self.mlp_uri, "version": "two"},
                                                 "contentChanges": 7})
        self.s.notify("textDocument/didOpen", {"textDocument": 3})
        self.ping("notifications with wrong params")
        self.assert_only_null_id_errors(set(), "notifications with wrong params", at_most=0)

    def test_requests_on_a_document_that_is_not_open(self):
        r = self.call("textDocument/hover", {"textDocument": {"uri": "file:///nowhere/never_opened.py"},
                                             "position": {"line": 0, "character": 0}})
        self.assertTrue("result" in r and r["result"] is None or "error" in r, r)
        self.ping("a request on a document that is not open")

    def test_second_initialize_is_rejected(self):
        r = self.call("initialize", INIT_PARAMS)
        self.assertError(r, INVALID_REQUEST, "a second initialize")
        self.ping("a second initialize")


class Lifecycle(ProtocolTest):
    def test_requests_after_shutdown_get_32600_and_exit_code_0(self):
        r = self.call("shutdown")
        self.assertIsNone(self.assertResult(r, "shutdown"))
        r = self.call("textDocument/hover", {"textDocument": {"uri": self.mlp_uri}, "position": {"line": 0, "character": 0}})
        self.assertError(r, INVALID_REQUEST, "hover after shutdown")
        r = self.call("shardlens/doesNotExist", {})
        self.assertError(r, INVALID_REQUEST, "unknown request after shutdown")
        r = self.call("shutdown")
        self.assertError(r, INVALID_REQUEST, "a second shutdown")
        self.s.notify("textDocument/didChange", {"textDocument": {"uri": self.mlp_uri, "version": 2},
                                                 "contentChanges": [{"text": "x = 1\n"}]})
        self.s.notify("exit")
        self.assertEqual(self.s.wait_exit(), 0)
        self.s.stdout_closed.wait(5)
        self.assertEqual(self.s.leftover, b"", "bytes after the last message")

    def test_shutdown_and_exit_with_params_null_exit_0(self):
        # Some clients send "params": null with methods that take none; -32600 kept the server alive.
        self.s.send({"jsonrpc": "2.0", "id": 77, "method": "shutdown", "params": None})
        self.expected_ids.append(77)
        self.assertIsNone(self.assertResult(self.s.wait_reply(77), "shutdown with params null"))
        self.s.send({"jsonrpc": "2.0", "method": "exit", "params": None})
        self.assertEqual(self.s.wait_exit(), 0)

    def test_exit_without_shutdown_exits_1(self):
        self.s.notify("exit")
        self.assertEqual(self.s.wait_exit(), 1)

    def test_client_hangs_up_exits_1(self):
        self.s.proc.stdin.close()
        self.assertEqual(self.s.wait_exit(), 1)

    def test_client_hangs_up_after_shutdown_exits_1(self):
        self.assertIsNone(self.assertResult(self.call("shutdown"), "shutdown"))
        self.s.proc.stdin.close()
        self.assertEqual(self.s.wait_exit(), 1)

    def test_stderr_only_for_logs(self):
        # --log-level debug must not put anything but protocol on stdout
        self.s.kill()
        self.s = Server(["--log-level", "debug"])
        self.s.others = []
        self.expected_ids = []
        self.initialize_server()
        self.ping("debug logging")
        self.assertEqual(self.call("shutdown").get("result", "missing"), None)
        self.s.notify("exit")
        self.assertEqual(self.s.wait_exit(), 0)


class Documents(ProtocolTest):
    def diagnostics_for(self, uri, pred, timeout=10.0, since=0):
        deadline = time.time() + timeout * SCALE
        while time.time() < deadline:
            pubs = [n for n in self.s.notifications[since:] if n["method"] == "textDocument/publishDiagnostics"
                    and n["params"]["uri"] == uri]
            if pubs and pred(pubs[-1]["params"]):
                return pubs[-1]["params"]
            time.sleep(0.02)
        pubs = [n["params"] for n in self.s.notifications if n["method"] == "textDocument/publishDiagnostics" and n["params"]["uri"] == uri]
        raise AssertionError("no matching publishDiagnostics for %s; latest: %r" % (uri, pubs[-1:] if pubs else None))

    def test_out_of_order_versions_are_ignored(self):
        uri = fixture_uri("gpt.py")
        v1 = read_fixture("gpt.py")
        v3 = v1.replace("n_head: int = 16", "n_head: int = 4")
        line = v3.split("\n").index("    n_head: int = 4")
        self.s.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": v1}})
        self.diagnostics_for(uri, lambda p: True)

        def heads_at(l):
            return lambda p: any(d.get("code") == "divisibility-heads" and d["range"]["start"]["line"] == l for d in p["diagnostics"])

        self.s.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 3}, "contentChanges": [{"text": v3}]})
        self.diagnostics_for(uri, heads_at(line))
        # an older version after a newer one: ignored
        self.s.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": v1}]})
        # an incremental change on top of version 3 (a line inserted at the top)
        mark = len(self.s.notifications)
        self.s.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 4}, "contentChanges": [
            {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "# v4\n"}]})
        p = self.diagnostics_for(uri, heads_at(line + 1), since=mark)
        if "version" in p and p["version"] is not None:
            self.assertEqual(p["version"], 4)
        self.ping("out-of-order versions")
        time.sleep(0.5 * SCALE)
        latest = self.diagnostics_for(uri, lambda p: True)
        self.assertTrue(heads_at(line + 1)(latest), "the older version 2 was applied after all: %r" % latest)

    def test_change_with_a_range_outside_the_document(self):
        self.s.notify("textDocument/didChange", {"textDocument": {"uri": self.mlp_uri, "version": 2}, "contentChanges": [
            {"range": {"start": {"line": 500, "character": 0}, "end": {"line": 900, "character": 3}}, "text": "# end\n"}]})
        self.ping("a change range past the end")

    def test_cancel_request(self):
        big = os.path.join(REPO, "tests", "models", "big_100b.py")
        uri = "file://" + big
        with open(big, encoding="utf-8") as f:
            self.s.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": f.read()}})
        ids = []
        for method, params in (("workspace/executeCommand", {"command": "shardlens.showPlan", "arguments": [uri]}),
                               ("textDocument/codeLens", {"textDocument": {"uri": uri}}),
                               ("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 5, "character": 5}}),
                               ("workspace/executeCommand", {"command": "shardlens.showPlan", "arguments": [self.mlp_uri]})):
            id = self.s.request(method, params)
            self.s.notify("$/cancelRequest", {"id": id})
            ids.append((id, method))
        for id, method in ids:
            self.expected_ids.append(id)
            r = self.s.wait_reply(id, timeout=30)
            if "error" in r:
                self.assertEqual(r["error"]["code"], REQUEST_CANCELLED, "cancelled %s: %r" % (method, r))
        # cancelling an unknown id and an answered one: no reply
        self.s.notify("$/cancelRequest", {"id": 987654})
        self.s.notify("$/cancelRequest", {"id": ids[0][0]})
        self.s.notify("$/cancelRequest", {"id": "not-a-request"})
        self.ping("cancellations")
        time.sleep(0.5 * SCALE)
        self.s.others += self.s.drain(0.2)
        self.assert_only_null_id_errors(set(), "cancellations", at_most=0)
        for id, method in ids:
            self.assertEqual(self.s.replies(id), 1, "%s (id %r) answered %d times" % (method, id, self.s.replies(id)))


def main():
    global BINARY
    argv = sys.argv[1:]
    if argv and not argv[0].startswith("-"):
        BINARY = argv.pop(0)
    BINARY = BINARY or os.environ.get("SHARDLENS") or os.path.join(REPO, "build", "shardlens")
    if not os.path.exists(BINARY):
        print("protocol_test: no shardlens binary at %s" % BINARY, file=sys.stderr)
        return 2
    unittest.main(argv=[sys.argv[0]] + argv, verbosity=2)


if __name__ == "__main__":
    sys.exit(main())
