'use strict';
// Source actions "Insert Shardy annotations (tt-xla)" and "Insert load_shard_spec()": listed
// without an edit, resolved, applied here with UTF-16 positions, parsed by Python, idempotent,
// and executed under real PyTorch (meta device) with a recording torch_xla: exactly the weights
// shardlens.showPlan shards, with its specs (tests/lsp/harness/run_sharded.py, with the
// emitters' torch_xla stand-in tests/emit/fake_xla).

const test = require('node:test');
const assert = require('node:assert/strict');
const { withSession } = require('./lib/session');
const { fixture, example, read, codes } = require('./lib/fixtures');
const { parses, runSharded, compareMarks, isSharded, normSpec } = require('./lib/python');
const { editsForDocument } = require('./lib/text');

const TT = { kind: 'source.shardlens.insertAnnotations', title: 'Insert Shardy annotations (tt-xla)',
  begin: '# >>> shardlens tt-xla sharding >>>', end: '# <<< shardlens tt-xla sharding <<<' };
const SPEC = { kind: 'source.shardlens.insertLoadShardSpec', title: 'Insert load_shard_spec()',
  begin: '# >>> shardlens load_shard_spec >>>', end: '# <<< shardlens load_shard_spec <<<' };

const count = (text, s) => text.split(s).length - 1;

async function sourceAction(s, doc, which) {
  const range = { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } };
  const actions = await s.codeActions(doc, range, { diagnostics: [], only: ['source'], triggerKind: 1 });
  assert.ok(Array.isArray(actions), `codeAction result: ${JSON.stringify(actions)}`);
  const a = actions.find((x) => x.kind === which.kind);
  assert.ok(a, `no ${which.kind} action among ${JSON.stringify(actions.map((x) => [x.kind, x.title]))}`);
  assert.equal(a.title, which.title);
  assert.equal(a.edit, undefined, 'source actions come back without edit (filled by codeAction/resolve)');
  assert.notEqual(a.data, undefined, 'source actions carry data for resolve');
  for (const x of actions) assert.ok(!x.kind || x.kind === 'source' || x.kind.startsWith('source.'), `only: ["source"] returned ${x.kind}`);
  const r = await s.resolveCodeAction(a);
  assert.ok(r && r.edit, `codeAction/resolve gave no edit: ${JSON.stringify(r).slice(0, 500)}`);
  assert.equal(r.kind, which.kind);
  return r;
}

// Resolves and applies the action to doc (as the editor does: apply, then didChange). Returns
// the new text.
async function applyAction(s, doc, which) {
  const r = await sourceAction(s, doc, which);
  const edits = editsForDocument(r.edit, doc);
  assert.ok(edits.length > 0, 'the edit changes nothing');
  s.applyEditsAndNotify(doc, edits);
  return doc.text;
}

function assertBlock(text, which, what) {
  assert.equal(count(text, which.begin), 1, `${what}: one begin marker`);
  assert.equal(count(text, which.end), 1, `${what}: one end marker`);
  assert.ok(text.indexOf(which.begin) < text.indexOf(which.end), `${what}: markers in order`);
  const p = parses(text);
  assert.ok(p.ok, `${what}: the file no longer parses:\n${p.error}`);
}

function blockOf(text, which) {
  return text.slice(text.indexOf(which.begin), text.indexOf(which.end) + which.end.length);
}

// One whole check of the tt-xla action on one script.
async function ttXlaSession({ file, meshes = ['1x8'], devices = 8, loop, instance = /^model = /m }) {
  await withSession({ initializationOptions: { meshes } }, async (s) => {
    const doc = await s.open(file);
    await s.diagnostics(doc, () => true, { since: 0 });
    const plan = await s.executeCommand('shardlens.showPlan', [doc.uri]);
    assert.ok(plan && Array.isArray(plan.meshes) && plan.meshes.length === meshes.length,
      `showPlan result: ${JSON.stringify(plan).slice(0, 300)}`);
    const shape = meshes[0].split('x').map(Number);
    assert.deepEqual(plan.meshes[0].shape, shape);
    assert.deepEqual(plan.meshes[0].axes, ['batch', 'model']);
    const sharded = plan.meshes[0].parameters.filter((p) => isSharded(normSpec(p.spec)));
    assert.ok(sharded.length > 0, 'the plan shards something (else the check below proves nothing)');

    const original = doc.text;
    const once = await applyAction(s, doc, TT);
    assertBlock(once, TT, 'after one insertion');
    const block = blockOf(once, TT);
    const instLine = original.split('\n').findIndex((l) => instance.test(l));
    assert.ok(instLine >= 0);
    assert.ok(once.indexOf(TT.begin) > once.indexOf(original.split('\n')[instLine]),
      'the block goes after the model instantiation');
    for (const needle of ['CONVERT_SHLO_TO_SHARDY', 'use_spmd()', 'Mesh(', 'xs.mark_sharding(']) {
      assert.ok(block.includes(needle), `the block has ${needle}:\n${block}`);
    }
    if (loop) assert.match(block, loop, `repeated blocks are marked in a loop:\n${block}`);
    // the rest of the file is untouched
    const squeeze = (t) => t.replace(/\n+/g, '\n').trim();
    assert.equal(squeeze(once.replace(block, '')), squeeze(original), 'the insertion changes nothing outside its block (blank lines aside)');

    // The server's own annotations agree with its plan.
    const diags = await s.diagnostics(doc, () => true);
    assert.deepEqual(diags.filter((d) => /^annotation-/.test(d.code)).map((d) => `${d.code}@${d.range.start.line}: ${d.message}`), [],
      'the inserted annotations are flagged by the server itself');

    // Again: replaced, not duplicated.
    const twice = await applyAction(s, doc, TT);
    assertBlock(twice, TT, 'after a second insertion');
    assert.equal(twice, once, 'inserting again must give the same file');

    // The command does the same through workspace/applyEdit.
    const before = s.serverRequests.filter((r) => r.method === 'workspace/applyEdit').length;
    const res = await s.executeCommand('shardlens.insertAnnotations', [doc.uri]);
    assert.deepEqual(res, { applied: true }, `shardlens.insertAnnotations result: ${JSON.stringify(res)}`);
    assert.equal(s.serverRequests.filter((r) => r.method === 'workspace/applyEdit').length, before + 1,
      'the command sends one workspace/applyEdit');
    assert.equal(doc.text, once, 'the command\'s edit gives the same file as the action');

    // Run it: exactly the plan's sharded weights, with its specs.
    const run = runSharded(doc.text, { devices });
    assert.deepEqual(compareMarks(run, plan), [], 'marks recorded under torch vs shardlens.showPlan');
    // (the stand-in rejects a mark before xr.use_spmd() or without CONVERT_SHLO_TO_SHARDY=1)
    assert.equal(run.use_spmd, true, 'xr.use_spmd() ran');
    assert.ok(run.meshes.some((m) => JSON.stringify(m.shape) === JSON.stringify(shape)), `a ${meshes[0]} mesh was built: ${JSON.stringify(run.meshes)}`);
  });
}

test('gpt.py: tt-xla block after the instance, loops over model.h, marks what the plan shards', async () => {
  await ttXlaSession({ file: fixture('gpt.py'), loop: /for \w+ in model\.h\b/ });
});

test('llama.py: tt-xla block', async () => {
  await ttXlaSession({ file: fixture('llama.py'), loop: /for \w+ in model\.layers\b/ });
});

test('moe.py: tt-xla block (experts inside layers)', async () => {
  await ttXlaSession({ file: fixture('moe.py'), loop: /for \w+ in model\.layers\b/ });
});

test('mlp.py: tt-xla block', async () => {
  await ttXlaSession({ file: fixture('mlp.py') });
});

test('examples/mistral_7b.py: tt-xla block', async () => {
  await ttXlaSession({ file: example('mistral_7b.py'), loop: /for \w+ in model\.layers\b/ });
});

test('llama.py on galaxy (8x4): tt-xla block for 32 devices', async () => {
  await ttXlaSession({ file: fixture('llama.py'), meshes: ['8x4'], devices: 32 });
});

test('a script without an instance gets apply_sharding(model, mesh)', async () => {
  const text = read(fixture('mlp.py')).replace(/\nmodel = MLP\(\)\n/, '\n');
  assert.ok(!/^model = /m.test(text));
  await withSession({ initializationOptions: { meshes: ['1x8'] } }, async (s) => {
    const doc = await s.open(fixture('mlp.py'), { text, uri: 'file:///tmp/shardlens-lsp-mlp-no-instance.py' });
    await s.diagnostics(doc, () => true, { since: 0 });
    const plan = await s.executeCommand('shardlens.showPlan', [doc.uri]);
    const once = await applyAction(s, doc, TT);
    assertBlock(once, TT, 'function form');
    assert.match(blockOf(once, TT), /^def apply_sharding\(model, mesh\):/m, `function form:\n${blockOf(once, TT)}`);
    const twice = await applyAction(s, doc, TT);
    assert.equal(twice, once, 'inserting again must give the same file');
    const run = runSharded(doc.text, { applySharding: 'MLP()' });
    assert.deepEqual(compareMarks(run, plan), [], 'apply_sharding(MLP(), mesh) vs showPlan');
  });
});

for (const [name, file, devices, meshes] of [
  ['gpt.py', fixture('gpt.py'), 8, ['1x8']],
  ['moe.py', fixture('moe.py'), 8, ['1x8']],
  ['mistral_7b.py on 2x4', example('mistral_7b.py'), 8, ['2x4']],
]) {
  test(`${name}: load_shard_spec() block`, async () => {
    await withSession({ initializationOptions: { meshes } }, async (s) => {
      const doc = await s.open(file);
      await s.diagnostics(doc, () => true, { since: 0 });
      const plan = await s.executeCommand('shardlens.showPlan', [doc.uri]);
      const once = await applyAction(s, doc, SPEC);
      assertBlock(once, SPEC, 'load_shard_spec');
      assert.match(blockOf(once, SPEC), /^def load_shard_spec\(model\):/m);
      assert.match(blockOf(once, SPEC), /^def get_mesh_config\(num_devices\):/m);
      const diags = await s.diagnostics(doc, () => true);
      assert.deepEqual(diags.filter((d) => /^annotation-/.test(d.code)).map((d) => d.message), [],
        `the server flags its own load_shard_spec entries: ${codes(diags)}`);
      const twice = await applyAction(s, doc, SPEC);
      assert.equal(twice, once, 'inserting again must give the same file');
      const res = await s.executeCommand('shardlens.insertLoadShardSpec', [doc.uri]);
      assert.deepEqual(res, { applied: true });
      assert.equal(doc.text, once);
      const run = runSharded(doc.text, { devices, loadShardSpec: true });
      assert.ok(run.calls.includes('get_mesh_config'), 'get_mesh_config was used');
      assert.deepEqual(compareMarks(run, plan), [], 'load_shard_spec(model) vs showPlan');
    });
  });
}

test('both blocks in one script; an edited block is replaced whole', async () => {
  await withSession({ initializationOptions: { meshes: ['1x8'] } }, async (s) => {
    const doc = await s.open(fixture('mlp.py'));
    await s.diagnostics(doc, () => true, { since: 0 });
    await applyAction(s, doc, TT);
    const both = await applyAction(s, doc, SPEC);
    assertBlock(both, TT, 'tt-xla next to load_shard_spec');
    assertBlock(both, SPEC, 'load_shard_spec next to tt-xla');
    // the user mangles a spec inside the tt-xla block; inserting again restores it
    const m = /xs\.mark_sharding\(model\.fc2\.weight, (\w+), \(None, "model"\)\)/.exec(both);
    assert.ok(m, `fc2 is marked row-parallel in the block:\n${blockOf(both, TT)}`);
    await s.replace(doc, m[0], m[0].replace('(None, "model")', '("model", None)'));
    const diags = await s.diagnostics(doc, (ds) => ds.some((d) => d.code === 'annotation-disagrees'));
    assert.equal(diags.find((d) => d.code === 'annotation-disagrees').range.start.line, doc.lineOf('xs.mark_sharding(model.fc2.weight'));
    const again = await applyAction(s, doc, TT);
    assert.equal(again, both, 'inserting again replaces the edited block with the plan\'s');
  });
});
