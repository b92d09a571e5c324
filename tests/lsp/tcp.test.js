'use strict';
// `shardlens serve --listen 127.0.0.1:0`: one client over TCP on loopback; the port is read from
// stderr; stdout stays empty.

const test = require('node:test');
const assert = require('node:assert/strict');
const { withSession, Session, ServerProcess, T } = require('./lib/session');
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
