'use strict';
// shardlens.generateReport through the language server: the command and its source action write
// sharding_analysis.md and the SVG chart; the report's totals are the plan's (shardlens.showPlan).

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { withSession } = require('./lib/session');
const { fixture } = require('./lib/fixtures');

test('generateReport writes sharding_analysis.md beside the script; the source action runs the same command', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlens-report-'));
  const script = path.join(dir, 'gpt.py');
  fs.copyFileSync(fixture('gpt.py'), script);
  try {
    await withSession({ initializationOptions: { meshes: ['1x8'] } }, async (s) => {
      const doc = await s.open(script);
      await s.diagnostics(doc, () => true, { since: 0 });
      const actions = await s.request('textDocument/codeAction', {
        textDocument: { uri: doc.uri }, range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
        context: { diagnostics: [], only: ['source.shardlens.generateReport'] },
      });
      assert.equal(actions.length, 1, `one report action: ${JSON.stringify(actions)}`);
      assert.equal(actions[0].command.command, 'shardlens.generateReport');
      const result = await s.executeCommand(actions[0].command.command, actions[0].command.arguments);
      assert.equal(result.path, path.join(dir, 'sharding_analysis.md'));
      assert.ok(result.uri.startsWith('file:///'), result.uri);
      const md = fs.readFileSync(result.path, 'utf8');
      assert.ok(fs.existsSync(result.chart), `chart at ${result.chart}`);
      for (const section of ['Model & target', 'Architecture', 'Recommended strategy', 'CCL budget', 'Sources'])
        assert.ok(md.includes(section), `report has a "${section}" section`);
      const plan = await s.executeCommand('shardlens.showPlan', [doc.uri]);
      const total = plan.meshes[0].totals.collectives;
      const totalRow = md.split('\n').find((l) => /^\|\s*\*\*Total\*\*/.test(l));
      assert.ok(totalRow, 'the CCL budget has a Total row');
      assert.match(totalRow, new RegExp(`\\b${total}\\b`), `Total row names the plan's ${total} collectives: ${totalRow}`);
      // An explicit output path (second argument) is honoured.
      const other = path.join(dir, 'out', 'analysis.md');
      const second = await s.executeCommand('shardlens.generateReport', [doc.uri, other]);
      assert.equal(second.path, other);
      assert.ok(fs.existsSync(other));
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
