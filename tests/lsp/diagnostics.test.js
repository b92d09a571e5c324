'use strict';
// publishDiagnostics: planner diagnostics at the config field that causes them, annotation
// checks at the call, and incremental edits (UTF-16 and UTF-8 positions, non-ASCII text) that
// move them.

const test = require('node:test');
const assert = require('node:assert/strict');
const { withSession } = require('./lib/session');
const { fixture, read, byCode, codes, assertWellFormedDiagnostics, assertRangeInDocument, textIn } = require('./lib/fixtures');
const { parses } = require('./lib/python');
const { editsForDocument } = require('./lib/text');

const PLANNER_CODES = /^(divisibility-|memory-|unknown-op)/;

// The line of the dataclass field `name: ... = value` (0-based).
const fieldLine = (doc, name) => doc.lineOf(new RegExp(`(^|;)\\s*${name}\\s*:`));

// A diagnostic range that points at the field on `line` and covers its value.
function assertCoversField(doc, d, line, value) {
  assertRangeInDocument(doc, d.range, d.code);
  assert.equal(d.range.start.line, line, `${d.code} starts on line ${d.range.start.line}, the field is on line ${line}: ${JSON.stringify(d.range)}`);
  assert.equal(d.range.end.line, line, `${d.code} should end on the field's line ${line}: ${JSON.stringify(d.range)}`);
  const covered = textIn(doc, d.range);
  assert.ok(covered.includes(value), `${d.code} range covers ${JSON.stringify(covered)}, not the value ${value} of ${JSON.stringify(doc.line(line))}`);
}

test('gpt.py: a head count that does not divide the mesh is reported at n_head, and moves with edits', async () => {
  await withSession({ initializationOptions: { meshes: ['1x8'] } }, async (s) => {
    const doc = await s.open(fixture('gpt.py'));
    const clean = await s.diagnostics(doc, () => true, { since: 0 });
    assertWellFormedDiagnostics(doc, clean);
    assert.deepEqual(clean.filter((d) => PLANNER_CODES.test(d.code)).map((d) => d.code), [],
      'the unedited fixture plans cleanly on 1x8 (16 heads / 8)');

    // 12 heads (n_embd 1536 keeps the script's own assert true): 12 % 8 != 0.
    await s.replaceMany(doc, [['n_head: int = 16', 'n_head: int = 12'], ['n_embd: int = 2048', 'n_embd: int = 1536']]);
    let diags = await s.diagnostics(doc, (ds) => byCode(ds, 'divisibility-heads').length > 0);
    assertWellFormedDiagnostics(doc, diags);
    let [d] = byCode(diags, 'divisibility-heads');
    assert.equal(byCode(diags, 'divisibility-heads').length, 1, `one divisibility-heads: ${codes(diags)}`);
    assert.equal(d.severity, 2, 'divisibility is a warning');
    assert.match(d.message, /12/, 'message names the head count');
    assert.match(d.message, /\b8\b/, 'message names the axis size');
    assertCoversField(doc, d, fieldLine(doc, 'n_head'), '12');

    // Non-ASCII comment lines above: "é" is 1 UTF-16 unit / 2 bytes, "𝔘" 2 units / 4 bytes.
    const before = d.range.start.line;
    await s.insertLines(doc, 1, '# é — naïve 𝔘 comment\n# 𝔘𝔘𝔘 é\n');
    diags = await s.diagnostics(doc, (ds) => byCode(ds, 'divisibility-heads').some((x) => x.range.start.line === before + 2));
    [d] = byCode(diags, 'divisibility-heads');
    assertCoversField(doc, d, fieldLine(doc, 'n_head'), '12');

    // Non-ASCII text before the edited span on the same line: a dataclass field with a string
    // default goes in front of n_head, then the value 12 behind it is edited through a range in
    // UTF-16 units (a server counting bytes or code points would edit the wrong characters).
    const line = fieldLine(doc, 'n_head');
    await s.replace(doc, 'n_head: int = 12', '_doc: str = "é𝔘"; n_head: int = 12');
    diags = await s.diagnostics(doc, (ds) => byCode(ds, 'divisibility-heads').length > 0);
    [d] = byCode(diags, 'divisibility-heads');
    assertCoversField(doc, d, line, '12');
    assert.ok(textIn(doc, d.range).startsWith('n_head') || d.range.start.character >= doc.line(line).indexOf('n_head'),
      `range starts at the field, after the non-ASCII prefix: ${JSON.stringify(d.range)} on ${JSON.stringify(doc.line(line))}`);
    await s.replace(doc, 'n_head: int = 12', 'n_head: int = 4');
    assert.equal(doc.line(line), '    _doc: str = "é𝔘"; n_head: int = 4');
    diags = await s.diagnostics(doc, (ds) => byCode(ds, 'divisibility-heads').some((x) => /\b4\b/.test(x.message) && !/\b12\b/.test(x.message)));
    [d] = byCode(diags, 'divisibility-heads');
    assertCoversField(doc, d, line, '4');
    assert.equal(byCode(diags, 'syntax-error').length, 0, `the edit landed where it should: ${codes(diags)}`);

    // Delete the two comment lines: the diagnostic moves back up.
    await s.change(doc, [{ range: { start: { line: 1, character: 0 }, end: { line: 3, character: 0 } }, text: '' }]);
    diags = await s.diagnostics(doc, (ds) => byCode(ds, 'divisibility-heads').some((x) => x.range.start.line === before));
    [d] = byCode(diags, 'divisibility-heads');
    assertCoversField(doc, d, fieldLine(doc, 'n_head'), '4');

    // 16 heads again: the diagnostic goes away.
    await s.replace(doc, '_doc: str = "é𝔘"; n_head: int = 4', 'n_head: int = 16');
    diags = await s.diagnostics(doc, (ds) => byCode(ds, 'divisibility-heads').length === 0);
    assertWellFormedDiagnostics(doc, diags);
    // the server's copy equals ours: the plan it reports is for this text
    assert.ok(parses(doc.text).ok);
  });
});

test('llama.py on 1x32: divisibility-kv-heads at n_kv_heads', async () => {
  await withSession({ initializationOptions: { meshes: ['1x32'] } }, async (s) => {
    const doc = await s.open(fixture('llama.py'));
    const diags = await s.diagnostics(doc, (ds) => byCode(ds, 'divisibility-kv-heads').length > 0, { since: 0 });
    assertWellFormedDiagnostics(doc, diags);
    const [d] = byCode(diags, 'divisibility-kv-heads');
    assertCoversField(doc, d, fieldLine(doc, 'n_kv_heads'), '8');
    assert.equal(byCode(diags, 'divisibility-heads').length, 0, '32 query heads divide 32');
  });
});

// mlp.py with an annotation block appended after `model = MLP()`.
const MESH_LINES = [
  'import numpy as np',
  'import torch_xla.distributed.spmd as xs',
  'mesh = xs.Mesh(np.arange(8), (1, 8), ("batch", "model"))',
];
function mlpWith(lines) {
  return `${read(fixture('mlp.py'))}\n${[...MESH_LINES, ...lines].join('\n')}\n`;
}

test('annotations: agreeing, disagreeing, unknown axis, wrong rank, unknown tensor', async () => {
  await withSession({ initializationOptions: { meshes: ['1x8'] } }, async (s) => {
    const agree = 'xs.mark_sharding(model.fc1.weight, mesh, ("model", None))';
    const disagree = 'xs.mark_sharding(model.fc2.weight, mesh, ("model", None))';
    const doc = await s.open(fixture('mlp.py'), { text: mlpWith([agree, disagree]) });
    let diags = await s.diagnostics(doc, (ds) => byCode(ds, 'annotation-disagrees').length > 0, { since: 0 });
    assertWellFormedDiagnostics(doc, diags);
    const agreeLine = doc.lineOf(agree);
    const disLine = doc.lineOf(disagree);
    assert.deepEqual(diags.filter((d) => d.range.start.line === agreeLine).map((d) => d.code), [],
      'an annotation that agrees with the plan is not reported');
    let dis = byCode(diags, 'annotation-disagrees');
    assert.equal(dis.length, 1, `one annotation-disagrees: ${codes(diags)}`);
    assert.equal(dis[0].range.start.line, disLine, `annotation-disagrees on the call's line ${disLine}: ${JSON.stringify(dis[0].range)}`);
    assert.match(dis[0].message, /all[-_ ]?reduce|all[-_ ]?gather|reduce[-_ ]?scatter|all[-_ ]?to[-_ ]?all/i, `message names a collective: ${dis[0].message}`);
    assert.match(dis[0].message, /\d\s*(bytes|B|KiB|MiB|GiB|KB|MB|GB)\b/, `message names the bytes: ${dis[0].message}`);

    // The quick fix replaces the spec with the plan's; after it the diagnostic is gone.
    const actions = await s.codeActions(doc, dis[0].range, { diagnostics: [dis[0]], only: ['quickfix'] });
    assert.ok(Array.isArray(actions) && actions.length > 0, `quick fixes for annotation-disagrees: ${JSON.stringify(actions)}`);
    let fix = actions.find((a) => a.kind === 'quickfix' && a.diagnostics?.some((x) => x.code === 'annotation-disagrees'));
    assert.ok(fix, `a quickfix tied to the diagnostic: ${JSON.stringify(actions).slice(0, 800)}`);
    if (!fix.edit) fix = await s.resolveCodeAction(fix);
    assert.ok(fix.edit, `the quick fix has an edit after resolve: ${JSON.stringify(fix).slice(0, 500)}`);
    s.applyEditsAndNotify(doc, editsForDocument(fix.edit, doc));
    assert.ok(parses(doc.text).ok, `after the quick fix the file parses:\n${doc.text}`);
    assert.match(doc.text, /xs\.mark_sharding\(model\.fc2\.weight, mesh, \(None, ["']model["']\)\)/,
      `the quick fix writes the plan's row spec (None, "model"):\n${doc.text.split('\n').slice(-4).join('\n')}`);
    diags = await s.diagnostics(doc, (ds) => byCode(ds, 'annotation-disagrees').length === 0);
    assertWellFormedDiagnostics(doc, diags);

    // An axis the mesh does not have, on a line with non-ASCII text before the call.
    const prefix = 'print("⚙ é 𝔘"); ';
    const fc1Line = doc.lineOf(agree);
    await s.change(doc, [{ range: { start: { line: fc1Line, character: 0 }, end: { line: fc1Line, character: 0 } }, text: prefix }]);
    // edit the axis name behind the non-ASCII prefix (range in UTF-16 units)
    await s.replace(doc, '("model", None))', '("modle", None))');
    assert.equal(doc.line(fc1Line), `${prefix}xs.mark_sharding(model.fc1.weight, mesh, ("modle", None))`);
    diags = await s.diagnostics(doc, (ds) => byCode(ds, 'annotation-unknown-axis').length > 0);
    assertWellFormedDiagnostics(doc, diags);
    const [ua] = byCode(diags, 'annotation-unknown-axis');
    assert.equal(ua.range.start.line, fc1Line);
    assert.ok(ua.range.start.character >= prefix.length, `range starts inside the non-ASCII prefix (UTF-16 col ${prefix.length} is where the call starts): ${JSON.stringify(ua.range)}`);
    assert.ok(textIn(doc, ua.range).includes('modle'), `range covers ${JSON.stringify(textIn(doc, ua.range))}, which should include the bad axis "modle"`);
    assert.match(ua.message, /modle/, 'message names the unknown axis');

    // Wrong number of dims; a target that is not a parameter of the model.
    const rank = 'xs.mark_sharding(model.fc2.weight, mesh, ("model",))';
    const unknownT = 'xs.mark_sharding(model.fc9.weight, mesh, (None, "model"))';
    const end = doc.lineCount - 1; // the text ends with a newline: insert before the empty last line
    await s.change(doc, [{ range: { start: { line: end, character: 0 }, end: { line: end, character: 0 } }, text: `${rank}\n${unknownT}\n` }]);
    diags = await s.diagnostics(doc, (ds) => byCode(ds, 'annotation-rank').length > 0 && byCode(ds, 'annotation-unknown-tensor').length > 0);
    assertWellFormedDiagnostics(doc, diags);
    assert.equal(byCode(diags, 'annotation-rank')[0].range.start.line, doc.lineOf(rank));
    assert.equal(byCode(diags, 'annotation-unknown-tensor')[0].range.start.line, doc.lineOf(unknownT));
    // the unknown-axis one is still where it was
    assert.equal(byCode(diags, 'annotation-unknown-axis')[0]?.range.start.line, fc1Line, `still reported: ${codes(diags)}`);

    // Every annotation-* diagnostic has a quick fix.
    for (const code of ['annotation-unknown-axis', 'annotation-rank', 'annotation-unknown-tensor']) {
      const [dg] = byCode(diags, code);
      const acts = await s.codeActions(doc, dg.range, { diagnostics: [dg], only: ['quickfix'] });
      assert.ok((acts || []).some((a) => a.kind === 'quickfix'), `no quick fix for ${code}: ${JSON.stringify(acts)}`);
    }
  });
});

test('annotations: a sharded dim that does not divide the axis → annotation-indivisible', async () => {
  await withSession({ initializationOptions: { meshes: ['1x8'] } }, async (s) => {
    const call = 'xs.mark_sharding(model.fc1.weight, mesh, ("model", None))';
    const text = mlpWith([call]).replace('model = MLP()', 'model = MLP(ff=16380)'); // 16380 % 8 == 4
    const doc = await s.open(fixture('mlp.py'), { text });
    const diags = await s.diagnostics(doc, (ds) => byCode(ds, 'annotation-indivisible').length > 0, { since: 0 });
    assertWellFormedDiagnostics(doc, diags);
    assert.equal(byCode(diags, 'annotation-indivisible')[0].range.start.line, doc.lineOf(call));
  });
});

test('utf-8 position encoding: ranges and edits count bytes', async () => {
  await withSession({ encodings: ['utf-8', 'utf-16'], initializationOptions: { meshes: ['1x8'] } }, async (s) => {
    assert.equal(s.encoding, 'utf-8');
    const prefix = 'print("⚙ é 𝔘"); ';
    const call = 'xs.mark_sharding(model.fc1.weight, mesh, ("model", None))';
    const doc = await s.open(fixture('mlp.py'), { text: mlpWith([prefix + call]) });
    await s.diagnostics(doc, () => true, { since: 0 });
    const line = doc.lineOf(call);
    await s.replace(doc, '("model", None))', '("modle", None))'); // range in bytes
    const diags = await s.diagnostics(doc, (ds) => byCode(ds, 'annotation-unknown-axis').length > 0);
    assertWellFormedDiagnostics(doc, diags);
    const [ua] = byCode(diags, 'annotation-unknown-axis');
    assert.equal(ua.range.start.line, line);
    assert.ok(ua.range.start.character >= Buffer.byteLength(prefix), `utf-8 range starts inside the prefix: ${JSON.stringify(ua.range)}`);
    assert.ok(textIn(doc, ua.range).includes('modle'), `range covers ${JSON.stringify(textIn(doc, ua.range))}`);
  });
});

test('syntax errors are reported on their line and the rest still plans', async () => {
  await withSession({ initializationOptions: { meshes: ['1x8'] } }, async (s) => {
    const doc = await s.open(fixture('gpt.py'), { text: read(fixture('gpt.py')).replace('n_head: int = 16', 'n_head: int = 4') });
    await s.diagnostics(doc, (ds) => byCode(ds, 'divisibility-heads').length > 0, { since: 0 });
    const at = doc.lineOf('class FeedForward');
    await s.insertLines(doc, at, 'def broken(:\n    pass\n\n\n');
    const diags = await s.diagnostics(doc, (ds) => byCode(ds, 'syntax-error').length > 0);
    assertWellFormedDiagnostics(doc, diags);
    assert.equal(byCode(diags, 'syntax-error')[0].range.start.line, at, `syntax-error on the broken line: ${codes(diags)}`);
    assert.equal(byCode(diags, 'divisibility-heads')[0]?.range.start.line, fieldLine(doc, 'n_head'), `the planner still runs: ${codes(diags)}`);
    await s.change(doc, [{ range: { start: { line: at, character: 0 }, end: { line: at + 4, character: 0 } }, text: '' }]);
    await s.diagnostics(doc, (ds) => byCode(ds, 'syntax-error').length === 0);
  });
});

test('a script without a model gets one no-model information diagnostic', async () => {
  await withSession({}, async (s) => {
    const doc = await s.open(fixture('mlp.py'), { text: 'import torch\n\nx = torch.zeros(3)\n', uri: 'file:///tmp/shardlens-lsp-no-model.py' });
    const diags = await s.diagnostics(doc, () => true, { since: 0 });
    assertWellFormedDiagnostics(doc, diags);
    const nm = byCode(diags, 'no-model');
    assert.equal(nm.length, 1, `no-model: ${codes(diags)}`);
    assert.equal(nm[0].severity, 3, 'no-model is information');
  });
});
