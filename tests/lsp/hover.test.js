'use strict';
// textDocument/hover: layers, parameters, config fields and classes get Markdown that names the
// layout and the collectives; whitespace gets null.

const test = require('node:test');
const assert = require('node:assert/strict');
const { withSession } = require('./lib/session');
const { fixture, example, assertRangeInDocument } = require('./lib/fixtures');

const COLLECTIVE = /all[-_ ]?reduce|all[-_ ]?gather|reduce[-_ ]?scatter|all[-_ ]?to[-_ ]?all/i;

function markdown(h, what) {
  assert.ok(h, `${what}: hover is null`);
  const c = h.contents;
  assert.ok(c && typeof c === 'object' && !Array.isArray(c) && c.kind === 'markdown',
    `${what}: contents must be MarkupContent of kind markdown (the client offers markdown first), got ${JSON.stringify(c).slice(0, 200)}`);
  assert.ok(c.value.trim().length > 0, `${what}: empty hover`);
  return c.value;
}

// Position of `needle` (+ delta characters) in doc.
function at(doc, needle, delta = 0, occurrence = 0) {
  const r = doc.rangeOf(needle, { occurrence });
  return { line: r.start.line, character: r.start.character + delta };
}

function assertHoverRange(doc, h, pos, what) {
  if (!h.range) return;
  assertRangeInDocument(doc, h.range, `${what} hover range`);
  const inside = (h.range.start.line < pos.line || (h.range.start.line === pos.line && h.range.start.character <= pos.character)) &&
    (h.range.end.line > pos.line || (h.range.end.line === pos.line && h.range.end.character >= pos.character));
  assert.ok(inside, `${what}: hover range ${JSON.stringify(h.range)} does not contain the position ${JSON.stringify(pos)}`);
}

test('gpt.py hovers: row-parallel proj, per-segment qkv, a class, a config field, whitespace', async () => {
  await withSession({ initializationOptions: { meshes: ['1x8'] } }, async (s) => {
    const doc = await s.open(fixture('gpt.py'));
    await s.diagnostics(doc, () => true, { since: 0 });

    // self.proj = nn.Linear(n_embd, n_embd): row-parallel, 1 all-reduce per block
    let pos = at(doc, 'self.proj = nn.Linear', 'self.'.length + 1);
    let h = await s.hover(doc, pos);
    let md = markdown(h, 'self.proj assignment');
    assertHoverRange(doc, h, pos, 'self.proj');
    assert.match(md, /\brow\b/i, `proj hover names the row layout:\n${md}`);
    assert.match(md, /all[-_ ]?reduce/i, `proj hover names its all-reduce:\n${md}`);
    assert.match(md, /2048\D{1,6}256\b/, `proj hover gives the per-device shape [2048, 256]:\n${md}`);

    // the call `nn.Linear(` on the same line is a layer call too
    pos = at(doc, 'nn.Linear(cfg.n_embd, cfg.n_embd', 4);
    md = markdown(await s.hover(doc, pos), 'nn.Linear call of proj');
    assert.match(md, /\brow\b/i, `hover on the nn.Linear call names the layout:\n${md}`);

    // self.qkv: q, k, v concatenated → column per segment
    pos = at(doc, 'self.qkv = nn.Linear', 'self.'.length + 1);
    md = markdown(await s.hover(doc, pos), 'self.qkv assignment');
    assert.match(md, /column/i, `qkv hover names the column layout:\n${md}`);
    assert.match(md, /segment/i, `qkv hover says it is split per segment:\n${md}`);
    const qkvHover = md;

    // FeedForward.down: row → all-reduce; up: column
    md = markdown(await s.hover(doc, at(doc, 'self.down = nn.Linear', 6)), 'self.down');
    assert.match(md, /all[-_ ]?reduce/i, `down hover names its all-reduce:\n${md}`);
    md = markdown(await s.hover(doc, at(doc, 'self.up = nn.Linear', 6)), 'self.up');
    assert.match(md, /column/i, `up hover names the column layout:\n${md}`);

    // a class: the Block's collectives
    pos = at(doc, 'class Block', 'class '.length + 2);
    md = markdown(await s.hover(doc, pos), 'class Block');
    assert.match(md, COLLECTIVE, `class hover names the collectives:\n${md}`);

    // a config field
    md = markdown(await s.hover(doc, at(doc, 'n_head: int = 16', 2)), 'config field n_head');
    assert.match(md, /16/, `n_head hover mentions its value:\n${md}`);

    // whitespace: a blank line, the indentation of a body line
    const blank = doc.lineOf(/^$/);
    assert.equal(await s.hover(doc, { line: blank, character: 0 }), null, 'hover on a blank line');
    const indent = doc.lineOf('self.n_head = cfg.n_head');
    assert.equal(await s.hover(doc, { line: indent, character: 2 }), null, 'hover on indentation');

    // [6144, 2048] split per segment over 8 devices: each holds 768 rows (its share of q, k, v)
    assert.match(qkvHover, /per device \[?768\D{1,6}2048\b/, `qkv per-device shape is [768, 2048] (6144 / 8):\n${qkvHover}`);
  });
});

test('mlp.py and llama.py hovers: fc1/fc2 pair, GQA projections', async () => {
  await withSession({ initializationOptions: { meshes: ['1x8'] } }, async (s) => {
    const mlp = await s.open(fixture('mlp.py'));
    const llama = await s.open(fixture('llama.py'));
    await s.diagnostics(mlp, () => true, { since: 0 });
    await s.diagnostics(llama, () => true, { since: 0 });

    let md = markdown(await s.hover(mlp, at(mlp, 'self.fc1', 6)), 'fc1');
    assert.match(md, /column/i, `fc1 is column-parallel:\n${md}`);
    assert.match(md, /2048\D{1,6}4096\b/, `fc1 per-device shape [2048, 4096] (16384 / 8):\n${md}`);
    md = markdown(await s.hover(mlp, at(mlp, 'self.fc2', 6)), 'fc2');
    assert.match(md, /\brow\b/i, `fc2 is row-parallel:\n${md}`);
    assert.match(md, /all[-_ ]?reduce/i, `fc2 costs an all-reduce:\n${md}`);

    md = markdown(await s.hover(llama, at(llama, 'self.wk = nn.Linear', 6)), 'wk');
    assert.match(md, /column/i, `wk is column-parallel (8 KV heads / 8):\n${md}`);
    md = markdown(await s.hover(llama, at(llama, 'self.wo = nn.Linear', 6)), 'wo');
    assert.match(md, /all[-_ ]?reduce/i, `wo costs an all-reduce:\n${md}`);

  });
});

test('hover on a raw nn.Parameter and on the model instantiation', async () => {
  await withSession({ initializationOptions: { meshes: ['1x8'] } }, async (s) => {
    const mlp = await s.open(fixture('mlp.py'));
    const llama = await s.open(fixture('llama.py'));
    await s.diagnostics(mlp, () => true, { since: 0 });
    await s.diagnostics(llama, () => true, { since: 0 });
    const problems = [];
    for (const [what, doc, needle, delta, re] of [
      ['RMSNorm `self.weight = nn.Parameter(...)` (a parameter)', llama, 'self.weight = nn.Parameter', 6, /replicated/i],
      ['`model = MLP()` (the root layer\'s assignment and call), on MLP', mlp, 'model = MLP()', 'model = M'.length, COLLECTIVE],
    ]) {
      const h = await s.hover(doc, at(doc, needle, delta));
      if (!h) problems.push(`${what}: hover is null`);
      else if (!re.test(markdown(h, what))) problems.push(`${what}: hover does not match ${re}: ${h.contents.value}`);
    }
    assert.deepEqual(problems, []);
  });
});

test('mistral_7b.py and moe.py: hovers on every layer assignment answer without error', async () => {
  await withSession({}, async (s) => {
    for (const p of [example('mistral_7b.py'), fixture('moe.py')]) {
      const doc = await s.open(p);
      await s.diagnostics(doc, () => true, { since: 0 });
      const lines = doc.text.split('\n');
      let named = 0;
      for (let i = 0; i < lines.length; i++) {
        const m = /^\s*self\.(\w+) = nn\.(Linear|Embedding)\(/.exec(lines[i]);
        if (!m) continue;
        const pos = { line: i, character: lines[i].indexOf('self.') + 5 };
        const md = markdown(await s.hover(doc, pos), `${p}:${i + 1} self.${m[1]}`);
        if (COLLECTIVE.test(md) || /replicated|column|row|vocab|expert/i.test(md)) named++;
      }
      assert.ok(named > 0, `${p}: no layer hover names a layout or collective`);
    }
  });
});

// Diagnostics go out before the plan's rejected alternatives are computed; a hover sent right
// after an edit waits for them, and describes the edited text.
test('a hover right after a code edit lists the rejected alternatives of the new plan', async () => {
  await withSession({ initializationOptions: { meshes: ['1x8'] } }, async (s) => {
    const doc = await s.open(fixture('gpt.py'));
    await s.diagnostics(doc, () => true, { since: 0 });
    const collectives = (md) => Number((md.match(/(\d+) collectives/) || [])[1]);
    let md = markdown(await s.hover(doc, at(doc, 'model = GPT(GPTConfig())', 2)), 'model instantiation');
    assert.match(md, /Rejected/, `the model's hover lists rejected alternatives:\n${md}`);
    const before = collectives(md);
    assert.ok(before > 0, `the model's hover counts its collectives:\n${md}`);
    await s.replace(doc, 'n_layer: int = 24', 'n_layer: int = 12');
    md = markdown(await s.hover(doc, at(doc, 'model = GPT(GPTConfig())', 2)), 'model instantiation after the edit');
    assert.match(md, /Rejected/, `after the edit, the hover still lists rejected alternatives:\n${md}`);
    assert.ok(collectives(md) < before, `the hover describes the edited model (12 layers, fewer collectives than ${before}):\n${md}`);
  });
});
