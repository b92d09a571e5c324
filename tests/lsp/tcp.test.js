'use strict';
// `shardlens serve --listen 127.0.0.1:0`: one client over TCP on loopback; the port and the token
// are read from stderr; stdout stays empty. Any local process can connect to the port: only a
// client that sends the token in initializationOptions gets a session.

const test = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const { withSession, Session, ServerProcess, listeningLine, T } = require('./lib/session');
const { fixture, byCode } = require('./lib/fixtures');

test('a whole session over TCP', async () => {
  await withSession({ transport: 'tcp', initializationOptions: { meshes: ['1x32'] } }, async (s) => {
    assert.ok(s.port > 0);
    const doc = await s.open(fixture('gpt.py'));
    const diags = await s.diagnostics(doc, (ds) => byCode(ds, 'divisibility-heads').length > 0, { since: 0 });
    assert.equal(byCode(diags, 'divisibility-heads')[0].range.start.line, doc.lineOf(/^\s*n_head\s*:/));
    await s.replace(doc, 'n_head: int = 16', 'n_head: int = 32');
    await s.diagnostics(doc, (ds) => byCode(ds, 'divisibility-heads').length === 0);
    const h = await s.hover(doc, { line: doc.lineOf('self.proj = nn.Linear'), character: 13 });
    assert.ok(h && h.contents, 'hover over TCP');
  });
});

test('over TCP, a client that hangs up without shutdown: exit code 1', async () => {
  const s = await Session.start({ transport: 'tcp' });
  try {
    s.socket.destroy();
    const ex = await s.server.waitExit(T(5000));
    assert.ok(ex, 'the server did not exit after the client hung up');
    assert.equal(ex.code, 1);
  } finally {
    await s.kill();
  }
});

test('--listen refuses a non-loopback address', async () => {
  const sp = ServerProcess.spawn(['--listen', '0.0.0.0:0']);
  const ex = await sp.waitExit(T(5000));
  assert.ok(ex, `serve --listen 0.0.0.0:0 is still running (it must only listen on loopback); stderr: ${sp.stderr}`);
  assert.notEqual(ex.code, 0, 'serve --listen 0.0.0.0:0 must fail');
  assert.doesNotMatch(sp.stderr, /listening on 0\.0\.0\.0/);
});

// A raw connection: sends framed JSON-RPC, collects the replies and whether the server hung up.
function rawClient(host, port) {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port });
    const c = { socket, messages: [], closed: false, buffer: Buffer.alloc(0) };
    c.send = (msg) => {
      const body = Buffer.from(JSON.stringify(msg), 'utf8');
      socket.write(Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`), body]));
    };
    socket.on('data', (d) => {
      c.buffer = Buffer.concat([c.buffer, d]);
      for (;;) {
        const end = c.buffer.indexOf('\r\n\r\n');
        if (end < 0) break;
        const m = /Content-Length: (\d+)/i.exec(c.buffer.subarray(0, end).toString());
        const length = Number(m[1]);
        if (c.buffer.length < end + 4 + length) break;
        c.messages.push(JSON.parse(c.buffer.subarray(end + 4, end + 4 + length).toString('utf8')));
        c.buffer = c.buffer.subarray(end + 4 + length);
      }
    });
    c.ended = new Promise((r) => socket.on('close', () => { c.closed = true; r(); }));
    socket.on('error', () => {});
    socket.once('connect', () => resolve(c));
    socket.once('error', reject);
  });
}

async function within(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), ms); });
  try { return await Promise.race([promise, timeout]); } finally { clearTimeout(timer); }
}

const initialize = (id, initializationOptions) => ({
  jsonrpc: '2.0', id, method: 'initialize', params: { processId: null, rootUri: null, capabilities: {}, initializationOptions },
});

test('over TCP, a client without the token is refused and hung up on; the server waits for the one with it', async () => {
  const sp = ServerProcess.spawn(['--listen', '127.0.0.1:0']);
  try {
    const deadline = Date.now() + T(5000);
    let at;
    while (!(at = listeningLine(sp.stderr)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.ok(at, `no token and address on stderr: ${sp.stderr}`);
    assert.match(at.token, /^[0-9a-f]{32}$/);
    // A port scanner: connects and hangs up.
    const scanner = await rawClient(at.host, at.port);
    scanner.socket.end();
    await within(scanner.ended, T(5000), 'the scanner connection to close');
    // No token, a wrong token, the token under the wrong key, exit before initialize: each is
    // refused or dropped, and none ends the server.
    for (const [what, options] of [['no token', { meshes: ['1x8'] }], ['a wrong token', { token: '0'.repeat(32) }],
                                   ['a token prefix', { token: at.token.slice(0, 16) }], ['a number', { token: 42 }]]) {
      const c = await rawClient(at.host, at.port);
      c.send(initialize(1, options));
      await within(c.ended, T(5000), `the server to hang up on ${what}`);
      assert.equal(c.messages.length, 1, `${what}: one reply, then the connection closes: ${JSON.stringify(c.messages)}`);
      assert.equal(c.messages[0].id, 1);
      assert.equal(c.messages[0].error && c.messages[0].error.code, -32600, `${what}: ${JSON.stringify(c.messages[0])}`);
      assert.match(c.messages[0].error.message, /token/);
    }
    const quitter = await rawClient(at.host, at.port);
    quitter.send({ jsonrpc: '2.0', method: 'exit' });
    await within(quitter.ended, T(5000), 'the server to hang up on exit without the token');
    assert.equal(sp.proc.exitCode, null, 'a client without the token ended the server');
    // The client with the token gets the session (under the `shardlens` key as well).
    const c = await rawClient(at.host, at.port);
    c.send(initialize(1, { shardlens: { token: at.token, meshes: ['1x8'] } }));
    c.send({ jsonrpc: '2.0', method: 'initialized', params: {} });
    c.send({ jsonrpc: '2.0', id: 2, method: 'shutdown' });
    c.send({ jsonrpc: '2.0', method: 'exit' });
    const ex = await sp.waitExit(T(5000));
    assert.ok(ex, 'the server did not exit after shutdown + exit');
    assert.equal(ex.code, 0);
    await within(c.ended, T(5000), 'the session connection to close');
    assert.ok(c.messages[0].result && c.messages[0].result.capabilities, `initialize with the token: ${JSON.stringify(c.messages[0])}`);
    assert.deepEqual(c.messages.find((m) => m.id === 2), { jsonrpc: '2.0', id: 2, result: null });
  } finally {
    if (sp.proc.exitCode === null) sp.proc.kill('SIGKILL');
  }
});

test('--listen [::1]:0 binds ::1 and prints [::1]:PORT', async () => {
  await withSession({ transport: 'tcp', listen: '[::1]:0' }, async (s) => {
    assert.equal(s.printedHost, '[::1]');
    assert.equal(s.socket.remoteAddress, '::1');
    const doc = await s.open(fixture('mlp.py'));
    await s.diagnostics(doc, () => true, { since: 0 });
  });
});
