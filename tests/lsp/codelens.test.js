'use strict';
// textDocument/codeLens: one lens per configured mesh above each module class the model uses,
// naming its collectives, with the shardlens.showPlan command.

const test = require('node:test');
const assert = require('node:assert/strict');
const { withSession } = require('./lib/session');
const { fixture, assertRangeInDocument } = require('./lib/fixtures');

const COLLECTIVE = /all[-_ ]?reduce|all[-_ ]?gather|reduce[-_ ]?scatter|all[-_ ]?to[-_ ]?all/i;

function lensesByLine(lenses) {
  const m = new Map();
  for (const l of lenses) {
    const k = l.range.start.line;
    if (!m.has(k)) m.set(k, []);
    m.get(k).push(l);
  }
  return m;
}

function checkLens(doc, l) {
  assertRangeInDocument(doc, l.range, 'lens range');
  assert.ok(l.command, `lens without a command (resolveProvider is false): ${JSON.stringify(l)}`);
  assert.equal(l.command.command, 'shardlens.showPlan', `lens command: ${JSON.stringify(l.command)}`);
  assert.equal(typeof l.command.title, 'string');
  assert.ok(l.command.title.length > 0 && l.command.title.length < 200, `lens title: ${l.command.title}`);
}

test('gpt.py: lenses above SelfAttention, FeedForward, Block, GPT (not the config dataclass)', async () => {
  await withSession({ initializationOptions: { meshes: ['1x8'] } }, async (s) => {
    const doc = await s.open(fixture('gpt.py'));
    await s.diagnostics(doc, () => true, { since: 0 });
    const lenses = await s.codeLens(doc);
    assert.ok(Array.isArray(lenses), `codeLens result: ${JSON.stringify(lenses)}`);
    lenses.forEach((l) => checkLens(doc, l));
    const byLine = lensesByLine(lenses);
    for (const cls of ['SelfAttention', 'FeedForward', 'Block', 'GPT']) {
      const line = doc.lineOf(new RegExp(`^class ${cls}\\b`));
      const here = byLine.get(line) || [];
      assert.equal(here.length, 1, `one lens (one mesh) on the class ${cls} line ${line}: ${JSON.stringify(lenses.map((l) => [l.range.start.line, l.command.title]))}`);
      assert.match(here[0].command.title, COLLECTIVE, `${cls} lens names its collectives: ${here[0].command.title}`);
      assert.match(here[0].command.title, /^1x8: /, `${cls} lens starts with its mesh: ${here[0].command.title}`);
    }
    const block = byLine.get(doc.lineOf(/^class Block\b/))[0].command.title;
    assert.match(block, /\b2 all[-_ ]?reduce/i, `a Block costs 2 all-reduce per forward: ${block}`);
    assert.match(block, /24/, `the Block lens says it repeats 24 times: ${block}`);
    assert.equal(byLine.get(doc.lineOf(/^class GPTConfig\b/)), undefined, 'no lens on the config dataclass');
    assert.equal(byLine.get(doc.lineOf(/^@dataclass/)), undefined, 'no lens on the decorator');
    // lenses land only on class lines
    for (const l of lenses) assert.match(doc.line(l.range.start.line), /^\s*class\s/, `lens on a non-class line: ${doc.line(l.range.start.line)}`);
  });
});

test('two meshes: two lenses per class, mesh first; they follow edits', async () => {
  await withSession({ initializationOptions: { meshes: ['1x8', '8x4'] } }, async (s) => {
    const doc = await s.open(fixture('mlp.py'));
    await s.diagnostics(doc, () => true, { since: 0 });
    let lenses = await s.codeLens(doc);
    lenses.forEach((l) => checkLens(doc, l));
    const line = doc.lineOf(/^class MLP\b/);
    let titles = lenses.filter((l) => l.range.start.line === line).map((l) => l.command.title).sort();
    assert.equal(titles.length, 2, `two lenses on class MLP: ${JSON.stringify(titles)}`);
    assert.match(titles[0], /^1x8: /);
    assert.match(titles[1], /^8x4: /);
    assert.match(titles[0], /\b1 all[-_ ]?reduce/i, `the MLP pair costs 1 all-reduce on 1x8: ${titles[0]}`);

    // three lines inserted above: the lenses move with the class
    await s.insertLines(doc, 1, '# one\n# two é𝔘\n# three\n');
    await s.diagnostics(doc, () => true);
    lenses = await s.codeLens(doc);
    titles = lenses.filter((l) => l.range.start.line === line + 3).map((l) => l.command.title);
    assert.equal(titles.length, 2, `lenses moved to line ${line + 3}: ${JSON.stringify(lenses.map((l) => l.range.start.line))}`);
  });
});

test('moe.py: the MoE layer lens names the expert collective the plan chose', async () => {
  await withSession({ initializationOptions: { meshes: ['1x8'] } }, async (s) => {
    const doc = await s.open(fixture('moe.py'));
    await s.diagnostics(doc, () => true, { since: 0 });
    const lenses = await s.codeLens(doc);
    lenses.forEach((l) => checkLens(doc, l));
    assert.ok(lenses.length >= 3, `lenses on moe.py: ${JSON.stringify(lenses.map((l) => l.command.title))}`);
    assert.ok(lenses.some((l) => COLLECTIVE.test(l.command.title)), 'some lens names a collective');
  });
});
