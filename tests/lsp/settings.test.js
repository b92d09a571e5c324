'use strict';
// Settings from initializationOptions, workspace/didChangeConfiguration, workspace/configuration
// and [tool.shardlens] in pyproject.toml; shardlens.setMeshes; invalid values.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const { withSession } = require('./lib/session');
const { fixture, read, byCode, codes, assertWellFormedDiagnostics } = require('./lib/fixtures');

const nHeadLine = (doc) => doc.lineOf(/^\s*n_head\s*:/);
const hasHeads = (ds) => byCode(ds, 'divisibility-heads').length > 0;
const noHeads = (ds) => byCode(ds, 'divisibility-heads').length === 0;

async function plan(s, doc) {
  const p = await s.executeCommand('shardlens.showPlan', [doc.uri]);
  assert.ok(p && Array.isArray(p.meshes), `showPlan: ${JSON.stringify(p).slice(0, 300)}`);
  return p;
}
const shapes = (p) => p.meshes.map((m) => m.shape.join('x'));

// showPlan until pred(plan) holds: settings that arrive by notification are applied eventually
// (the strict ordering is its own test below).
async function planWhen(s, doc, pred, what) {
  let last;
  const deadline = Date.now() + 10000;
  while (Date.now() < deadline) {
    last = await plan(s, doc);
    if (pred(last)) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail(`showPlan never showed ${what}; last workload ${JSON.stringify(last.workload)}, meshes ${shapes(last)}`);
}

test('initializationOptions meshes, then didChangeConfiguration re-plans and re-publishes', async () => {
  await withSession({ initializationOptions: { meshes: ['1x8', '8x4'] } }, async (s) => {
    const doc = await s.open(fixture('gpt.py'));
    let diags = await s.diagnostics(doc, () => true, { since: 0 });
    assert.deepEqual(byCode(diags, 'divisibility-heads'), [], '16 heads divide 8 and 4');
    assert.deepEqual(shapes(await plan(s, doc)), ['1x8', '8x4']);

    // 16 heads on a 32-wide model axis: reported at n_head, re-published without any edit.
    await s.didChangeConfiguration({ shardlens: { meshes: ['1x32'] } });
    diags = await s.diagnostics(doc, hasHeads);
    assertWellFormedDiagnostics(doc, diags);
    assert.equal(byCode(diags, 'divisibility-heads')[0].range.start.line, nHeadLine(doc));
    assert.deepEqual(shapes(await plan(s, doc)), ['1x32']);

    await s.didChangeConfiguration({ shardlens: { meshes: ['1x8'] } });
    await s.diagnostics(doc, noHeads);

    // Presets.
    await s.didChangeConfiguration({ shardlens: { meshes: ['t3k', 'galaxy'] } });
    await planWhen(s, doc, (p) => shapes(p).join() === '1x8,8x4', 'meshes t3k, galaxy as 1x8, 8x4');

    // Several meshes: the message says which (server/README.md: "[1x8] ...").
    await s.didChangeConfiguration({ shardlens: { meshes: ['1x8', '1x32'] } });
    await planWhen(s, doc, (p) => shapes(p).join() === '1x8,1x32', 'meshes 1x8, 1x32');
    diags = await s.diagnostics(doc, hasHeads);
    for (const d of diags) assert.match(d.message, /^\[\d+x\d+\] /, `with two meshes every message starts with its mesh: ${d.message}`);
    assert.ok(byCode(diags, 'divisibility-heads')[0].message.startsWith('[1x32] '));
  });
});

test('a request sent after didChangeConfiguration or didChange is answered for the new state', async () => {
  await withSession({ initializationOptions: { meshes: ['1x8'] } }, async (s) => {
    const doc = await s.open(fixture('gpt.py'));
    await s.diagnostics(doc, () => true, { since: 0 });
    await s.didChangeConfiguration({ shardlens: { meshes: ['1x8'], phase: 'prefill', batch: 2 } });
    let p = await plan(s, doc);
    assert.deepEqual([p.workload.phase, p.workload.batch], ['prefill', 2],
      'didChangeConfiguration carried phase "prefill", batch 2; the showPlan request sent after it must see them (LSP: reordering must not change results)');
    await s.replace(doc, 'n_head: int = 16', 'n_head: int = 4');
    p = await plan(s, doc);
    assert.ok((p.diagnostics || []).some((d) => d.code === 'divisibility-heads'),
      `showPlan right after an edit to n_head = 4 must plan the edited text: diagnostics ${JSON.stringify(p.diagnostics)}`);
  });
});

test('the workload settings reach the plan; model picks the root', async () => {
  await withSession({ initializationOptions: { shardlens: { meshes: ['1x8'], phase: 'prefill', batch: 4, seq: 512 } } }, async (s) => {
    const doc = await s.open(fixture('gpt.py'));
    await s.diagnostics(doc, () => true, { since: 0 });
    let p = await plan(s, doc);
    assert.equal(p.workload.phase, 'prefill', 'initializationOptions under a "shardlens" key');
    assert.equal(p.workload.batch, 4);
    assert.equal(p.workload.seq, 512);
    await s.didChangeConfiguration({ shardlens: { meshes: ['1x8'], phase: 'decode', dtype: 'fp32', strategy: 'tensor', hardware: 'blackhole' } });
    p = await planWhen(s, doc, (x) => x.workload.phase === 'decode', 'phase decode');
    assert.equal(p.workload.phase, 'decode');
    assert.equal(p.workload.dtype, 'fp32');
    assert.equal(p.workload.strategy, 'tensor');
    assert.equal(p.workload.hardware, 'blackhole');
    await s.didChangeConfiguration({ shardlens: { meshes: ['1x8'], model: 'GPT(GPTConfig(n_layer=2))' } });
    p = await planWhen(s, doc, (x) => !x.meshes[0].parameters.some((q) => q.name.startsWith('h.2.')), 'two blocks');
    const names = p.meshes[0].parameters.map((x) => x.name);
    assert.ok(names.some((n) => n.startsWith('h.1.')) && !names.some((n) => n.startsWith('h.2.')),
      `model setting GPT(GPTConfig(n_layer=2)) gives two blocks: ${names.filter((n) => n.startsWith('h.')).slice(-3)}`);
  });
});

test('invalid values: a warning message, the previous setting kept', async () => {
  await withSession({ initializationOptions: { meshes: ['1x32'] } }, async (s) => {
    const doc = await s.open(fixture('gpt.py'));
    await s.diagnostics(doc, hasHeads, { since: 0 });
    for (const [bad, word] of [[{ meshes: ['banana'] }, 'banana'], [{ strategy: 'fastest' }, 'fastest'], [{ phase: 'train' }, 'train'],
      [{ batch: -3 }, 'batch']]) {
      const n = s.showMessages.length;
      await s.didChangeConfiguration({ shardlens: { meshes: ['1x32'], ...bad } });
      const m = await s.waitFor(() => s.showMessages.slice(n).find((x) => x.message.includes(word)),
        `window/showMessage about ${word}`);
      assert.equal(m.type, 2, `invalid settings are a warning (type 2): ${JSON.stringify(m)}`);
    }
    const p = await plan(s, doc);
    assert.deepEqual(shapes(p), ['1x32'], 'an invalid meshes value is ignored');
    assert.equal(p.workload.strategy, 'auto');
  });
});

test('shardlens.setMeshes replaces the meshes and re-plans', async () => {
  await withSession({ initializationOptions: { meshes: ['1x8'] } }, async (s) => {
    const doc = await s.open(fixture('gpt.py'));
    await s.diagnostics(doc, noHeads, { since: 0 });
    s.lastChangeMark = s.publishes.length;
    await s.executeCommand('shardlens.setMeshes', [['1x32']]);
    const diags = await s.diagnostics(doc, hasHeads);
    assert.equal(byCode(diags, 'divisibility-heads')[0].range.start.line, nHeadLine(doc));
    assert.deepEqual(shapes(await plan(s, doc)), ['1x32']);
    s.lastChangeMark = s.publishes.length;
    await s.executeCommand('shardlens.setMeshes', [['1x8', '8x4']]);
    await s.diagnostics(doc, noHeads);
    const lenses = await s.codeLens(doc);
    assert.equal(lenses.filter((l) => l.range.start.line === doc.lineOf(/^class Block\b/)).length, 2, 'two lenses per class after setMeshes');
  });
});

test('workspace/configuration: the server asks the client and re-asks on a change', async () => {
  await withSession({ configuration: { meshes: ['1x32'] } }, async (s) => {
    const doc = await s.open(fixture('gpt.py'));
    const diags = await s.diagnostics(doc, hasHeads, { since: 0, what: 'divisibility-heads from meshes ["1x32"] answered to workspace/configuration' });
    assert.equal(byCode(diags, 'divisibility-heads')[0].range.start.line, nHeadLine(doc));
    const asked = s.serverRequests.filter((r) => r.method === 'workspace/configuration');
    assert.ok(asked.length >= 1, 'no workspace/configuration request');
    assert.ok(asked.every((r) => r.params.items.some((i) => i.section === 'shardlens')),
      `workspace/configuration asks for section "shardlens": ${JSON.stringify(asked.map((r) => r.params))}`);

    // The pull model: the client says "something changed" and the server asks again.
    s.settings = { meshes: ['1x8'] };
    await s.didChangeConfiguration(null);
    await s.diagnostics(doc, noHeads, { what: 'diagnostics re-published after re-asking workspace/configuration' });
    assert.ok(s.serverRequests.filter((r) => r.method === 'workspace/configuration').length > asked.length, 'asked again');
  });
});

test('a client without workspace/configuration is never asked', async () => {
  await withSession({ workspaceConfiguration: false, initializationOptions: { meshes: ['1x8'] } }, async (s) => {
    const doc = await s.open(fixture('mlp.py'));
    await s.diagnostics(doc, () => true, { since: 0 });
    await s.didChangeConfiguration({ shardlens: { meshes: ['1x8', '8x4'] } });
    await s.codeLens(doc);
    assert.deepEqual(s.serverRequests.filter((r) => r.method === 'workspace/configuration'), []);
  });
});

test('[tool.shardlens] in the nearest pyproject.toml; initializationOptions win over it', async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlens-lsp-proj-'));
  try {
    fs.writeFileSync(path.join(root, 'pyproject.toml'), '[project]\nname = "demo"\n\n[tool.shardlens]\nmeshes = ["1x32"]\nphase = "decode"\n');
    fs.mkdirSync(path.join(root, 'models', 'inner'), { recursive: true });
    fs.writeFileSync(path.join(root, 'models', 'gpt.py'), read(fixture('gpt.py')));
    fs.mkdirSync(path.join(root, 'other'));
    fs.writeFileSync(path.join(root, 'other', 'pyproject.toml'), '[tool.shardlens]\nmeshes = ["1x8"]\n');
    fs.writeFileSync(path.join(root, 'other', 'gpt.py'), read(fixture('gpt.py')));

    await withSession({ rootPath: root }, async (s) => {
      const doc = await s.open(path.join(root, 'models', 'gpt.py'));
      const diags = await s.diagnostics(doc, hasHeads, { since: 0, what: 'divisibility-heads from [tool.shardlens] meshes = ["1x32"]' });
      assert.equal(byCode(diags, 'divisibility-heads')[0].range.start.line, nHeadLine(doc));
      const near = await s.open(path.join(root, 'other', 'gpt.py'));
      const d2 = await s.settledDiagnostics(near);
      assert.deepEqual(byCode(d2, 'divisibility-heads'), [], `the nearest pyproject.toml (1x8) wins: ${codes(d2)}`);
      assert.deepEqual(shapes(await plan(s, near)), ['1x8']);
    });
    await withSession({ rootPath: root, initializationOptions: { meshes: ['1x8'] } }, async (s) => {
      const doc = await s.open(path.join(root, 'models', 'gpt.py'));
      const diags = await s.settledDiagnostics(doc);
      assert.deepEqual(byCode(diags, 'divisibility-heads'), [], `initializationOptions (1x8) win over pyproject.toml (1x32): ${codes(diags)}`);
      assert.deepEqual(shapes(await plan(s, doc)), ['1x8']);
    });
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('pyproject.toml is read up to the workspace folder only; didChangeWorkspaceFolders moves the bound', async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlens-lsp-folders-'));
  try {
    fs.writeFileSync(path.join(root, 'pyproject.toml'), '[tool.shardlens]\nmeshes = ["1x2"]\n');
    fs.mkdirSync(path.join(root, 'pkg'));
    fs.writeFileSync(path.join(root, 'pkg', 'gpt.py'), read(fixture('gpt.py')));
    await withSession({ rootPath: path.join(root, 'pkg') }, async (s) => {
      assert.deepEqual(s.initializeResult.capabilities.workspace?.workspaceFolders, { supported: true, changeNotifications: true });
      const doc = await s.open(path.join(root, 'pkg', 'gpt.py'));
      await s.diagnostics(doc, () => true, { since: 0 });
      assert.deepEqual(shapes(await plan(s, doc)), ['1x8'], 'a pyproject.toml above the workspace folder was read');
      const folder = (p) => ({ uri: pathToFileURL(p).href, name: path.basename(p) });
      await s.conn.sendNotification('workspace/didChangeWorkspaceFolders',
        { event: { added: [folder(root)], removed: [folder(path.join(root, 'pkg'))] } });
      await planWhen(s, doc, (p) => shapes(p).join() === '1x2', 'the meshes of the pyproject.toml now inside the workspace');
    });
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
