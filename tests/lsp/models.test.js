'use strict';
// Every model script of the project in one session: each gets diagnostics with well-formed
// ranges, code lenses on class lines, hovers that answer; an edit at the top shifts every
// diagnostic by exactly one line.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { withSession, REPO, FIXTURES, T } = require('./lib/session');
const { assertWellFormedDiagnostics, assertRangeInDocument } = require('./lib/fixtures');

const scripts = [
  ...fs.readdirSync(FIXTURES).filter((f) => f.endsWith('.py')).map((f) => path.join(FIXTURES, f)),
  ...['examples', 'tests/models'].flatMap((d) => fs.readdirSync(path.join(REPO, d)).filter((f) => f.endsWith('.py')).sort()
    .map((f) => path.join(REPO, d, f))),
];

// A file-level diagnostic sits on line 0 from its start (e.g. plan-failed: the whole first line)
// and stays on line 0 when lines are inserted above everything.
const key = (d, shift) => {
  const fileLevel = d.range.start.line === 0 && d.range.end.line === 0 && d.range.start.character === 0;
  if (fileLevel) return `${d.code}|file`;
  return `${d.code}|${d.range.start.line + shift}:${d.range.start.character}-${d.range.end.line + shift}:${d.range.end.character}`;
};
const keys = (ds, shift = 0) => ds.map((d) => key(d, shift)).sort();

test(`all ${scripts.length} model scripts: diagnostics, lenses, hovers, a shifting edit`, { timeout: T(240000) }, async () => {
  assert.ok(scripts.length > 100, `found ${scripts.length} scripts`);
  await withSession({ initializationOptions: { meshes: ['1x8'] } }, async (s) => {
    const docs = [];
    for (const f of scripts) docs.push(await s.open(f));
    const before = new Map();
    for (const doc of docs) {
      const ds = await s.diagnostics(doc, () => true, { since: 0, ms: T(60000), what: `first publishDiagnostics for ${doc.uri}` });
      assertWellFormedDiagnostics(doc, ds);
      before.set(doc.uri, ds);
    }
    for (const doc of docs) {
      const lenses = await s.codeLens(doc);
      assert.ok(lenses === null || Array.isArray(lenses), `${doc.uri}: codeLens ${JSON.stringify(lenses)}`);
      for (const l of lenses || []) {
        assertRangeInDocument(doc, l.range, `${path.basename(doc.uri)} lens`);
        assert.match(doc.line(l.range.start.line), /^\s*class\s/, `${doc.uri}: lens on a non-class line ${l.range.start.line}: ${doc.line(l.range.start.line)}`);
        assert.equal(l.command?.command, 'shardlens.showPlan');
      }
      const hl = doc.text.split('\n').findIndex((ln) => /^\s+self\.\w+\s*=\s*nn\.\w+\(/.test(ln));
      if (hl >= 0) {
        const h = await s.hover(doc, { line: hl, character: doc.line(hl).indexOf('self.') + 5 });
        assert.ok(h === null || (h.contents && typeof h.contents === 'object'), `${doc.uri}:${hl + 1}: hover ${JSON.stringify(h)}`);
        if (h && h.range) assertRangeInDocument(doc, h.range, `${doc.uri} hover`);
      }
    }
    // One comment line at the top of every script: every diagnostic moves down one line.
    const mark = s.publishes.length;
    for (const doc of docs) await s.insertLines(doc, 0, '# shardlens e2e: é𝔘\n');
    for (const doc of docs) {
      const want = keys(before.get(doc.uri), 1);
      const ds = await s.diagnostics(doc, (d) => JSON.stringify(keys(d)) === JSON.stringify(want),
        { since: want.length ? mark : 0, ms: T(60000),
          what: `${path.basename(doc.uri)}: diagnostics one line down: want ${JSON.stringify(want)} got ${JSON.stringify(keys(s.latestDiagnostics(doc.uri).diagnostics))}` });
      assertWellFormedDiagnostics(doc, ds);
    }
  });
});

// Every script with a plan (most of tests/models/ have no forward() to trace: plan-failed): the tt-xla action resolves to an edit whose result still parses
// (one Python process checks them all) and that a second insertion leaves unchanged.
test('all model scripts: "Insert Shardy annotations (tt-xla)" keeps every file parsable and is idempotent', { timeout: T(240000) }, async () => {
  const { spawnSync } = require('node:child_process');
  const os = require('node:os');
  const { PYTHON } = require('./lib/python');
  const { editsForDocument } = require('./lib/text');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlens-lsp-all-'));
  try {
    await withSession({ initializationOptions: { meshes: ['1x8'] } }, async (s) => {
      const zero = { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } };
      const written = [];
      const problems = [];
      for (const f of scripts) {
        const doc = await s.open(f);
        const actions = await s.codeActions(doc, zero, { diagnostics: [], only: ['source.shardlens.insertAnnotations'] });
        const a = (actions || []).find((x) => x.kind === 'source.shardlens.insertAnnotations');
        if (!a) {
          // only a script without a plan may go without the action
          const ds = await s.diagnostics(doc, () => true, { since: 0, ms: T(60000) });
          if (!ds.some((d) => d.code === 'plan-failed' || d.code === 'no-model')) {
            problems.push(`${f}: planned (${ds.map((d) => d.code)}) but no insertAnnotations action`);
          }
          await s.close(doc);
          continue;
        }
        const r = await s.resolveCodeAction(a);
        if (!r || !r.edit) { problems.push(`${f}: resolve gave no edit`); continue; }
        const once = doc.applyEdits(editsForDocument(r.edit, doc));
        s.applyEditsAndNotify(doc, editsForDocument(r.edit, doc));
        const r2 = await s.resolveCodeAction((await s.codeActions(doc, zero, { diagnostics: [], only: ['source.shardlens.insertAnnotations'] }))
          .find((x) => x.kind === 'source.shardlens.insertAnnotations'));
        if (doc.applyEdits(editsForDocument(r2.edit, doc)) !== once) problems.push(`${f}: a second insertion changes the file`);
        const out = path.join(dir, `${written.length}_${path.basename(f)}`);
        fs.writeFileSync(out, once);
        written.push([out, f]);
        await s.close(doc);
      }
      assert.ok(written.length >= 20, `the action was offered for ${written.length} scripts only`);
      const check = spawnSync(PYTHON, ['-c', [
        'import ast, sys',
        'bad = []',
        'for f in sys.argv[1:]:',
        '    try: ast.parse(open(f, encoding="utf-8").read(), f)',
        '    except SyntaxError as e: bad.append("%s: %s" % (f, e))',
        'print("\\n".join(bad)); sys.exit(1 if bad else 0)'].join('\n'), ...written.map(([o]) => o)], { encoding: 'utf8' });
      if (check.status !== 0) problems.push(`files that no longer parse:\n${check.stdout}${check.stderr}`);
      assert.deepEqual(problems, []);
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
