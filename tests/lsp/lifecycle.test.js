'use strict';
// Lifecycle and the capabilities server/README.md documents.

const test = require('node:test');
const assert = require('node:assert/strict');
const { withSession, Session, lsp } = require('./lib/session');
const { fixture } = require('./lib/fixtures');

test('initialize advertises the documented capabilities (utf-16 client)', async () => {
  await withSession({}, async (s) => {
    const caps = s.initializeResult.capabilities;
    assert.equal(caps.positionEncoding ?? 'utf-16', 'utf-16', 'a utf-16-only client gets utf-16');
    const sync = caps.textDocumentSync;
    assert.equal(typeof sync, 'object', `textDocumentSync must be the options object, got ${JSON.stringify(sync)}`);
    assert.equal(sync.openClose, true);
    assert.equal(sync.change, 2, 'incremental sync');
    assert.deepEqual(sync.save, { includeText: false });
    assert.ok(caps.hoverProvider === true || typeof caps.hoverProvider === 'object', 'hoverProvider');
    assert.equal(caps.codeLensProvider?.resolveProvider, false, `codeLensProvider ${JSON.stringify(caps.codeLensProvider)}`);
    const ca = caps.codeActionProvider;
    assert.equal(ca?.resolveProvider, true, `codeActionProvider ${JSON.stringify(ca)}`);
    for (const k of ['source.shardlens.insertAnnotations', 'source.shardlens.insertLoadShardSpec', 'quickfix']) {
      assert.ok(ca.codeActionKinds?.includes(k), `codeActionKinds lacks ${k}: ${JSON.stringify(ca.codeActionKinds)}`);
    }
    const cmds = caps.executeCommandProvider?.commands || [];
    for (const c of ['shardlens.insertAnnotations', 'shardlens.insertLoadShardSpec', 'shardlens.showPlan', 'shardlens.setMeshes']) {
      assert.ok(cmds.includes(c), `executeCommandProvider.commands lacks ${c}: ${JSON.stringify(cmds)}`);
    }
  });
});

test('utf-8 is chosen when the client offers it', async () => {
  await withSession({ encodings: ['utf-8', 'utf-16'] }, async (s) => {
    assert.equal(s.initializeResult.capabilities.positionEncoding, 'utf-8');
  });
});

test('a client that names no encodings gets utf-16', async () => {
  await withSession({ encodings: undefined }, async (s) => {
    assert.equal(s.initializeResult.capabilities.positionEncoding ?? 'utf-16', 'utf-16');
  });
});

test('a session with documents ends with exit code 0 and one reply per request', async () => {
  await withSession({}, async (s) => {
    const doc = await s.open(fixture('mlp.py'));
    await s.diagnostics(doc, () => true, { since: 0 });
    await Promise.all([s.hover(doc, { line: 0, character: 0 }), s.codeLens(doc), s.hover(doc, { line: 9, character: 14 })]);
    await s.close(doc);
  });
});

test('exit without shutdown ends with exit code 1', async () => {
  const s = await Session.start({});
  try {
    await s.conn.sendNotification(lsp.ExitNotification.type);
    const ex = await s.server.waitExit();
    assert.ok(ex, 'server did not exit after exit');
    assert.equal(ex.code, 1);
  } finally {
    await s.kill();
  }
});
