'use strict';
// The exact graph in the editor: shardlens.exportGraph runs the user's script only when
// allowExecution is set; after the export the server plans that script on the exact graph and says
// where the static analysis was blind (static-blind). An export beside the script is otherwise
// loaded only with the user's exactGraph and allowExecution (loading it runs its code; see
// execution_consent.test.js). Needs shardlens-graph (LibTorch) next to the server binary and
// /usr/bin/python3 with torch.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { withSession, REPO } = require('./lib/session');

const graphTool = path.join(path.dirname(process.env.SHARDLENS || path.join(REPO, 'build', 'shardlens')), 'shardlens-graph');

test('exportGraph: refused without allowExecution; with it, the exact graph replaces the static plan', { skip: !fs.existsSync(graphTool) && 'no shardlens-graph' }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlens-exact-'));
  const script = path.join(dir, 'dispatch_attention.py');
  fs.copyFileSync(path.join(REPO, 'tests', 'torch', 'dispatch_attention.py'), script);
  try {
    await withSession({ initializationOptions: { meshes: ['1x8'] } }, async (s) => {
      const doc = await s.open(script);
      await s.diagnostics(doc, () => true, { since: 0 });
      await assert.rejects(s.executeCommand('shardlens.exportGraph', [doc.uri]), /allowExecution/);
      assert.ok(!fs.existsSync(path.join(dir, 'dispatch_attention.pt')), 'nothing exported without permission');
    });
    await withSession({ initializationOptions: { meshes: ['1x8'], allowExecution: true, python: '/usr/bin/python3' } }, async (s) => {
      const doc = await s.open(script);
      await s.diagnostics(doc, () => true, { since: 0 });
      const staticPlan = await s.executeCommand('shardlens.showPlan', [doc.uri]);
      const mark = s.publishes.length;
      const result = await s.executeCommand('shardlens.exportGraph', [doc.uri]);
      assert.equal(result.path, path.join(dir, 'dispatch_attention.pt'));
      assert.ok(fs.existsSync(result.path));
      const pub = await s.diagnostics(doc, (d) => d.some((x) => x.code === 'static-blind'), { since: mark, ms: 60000 });
      const diags = pub;
      const blind = diags.filter((x) => x.code === 'static-blind');
      assert.ok(blind.length > 0 && blind.every((d) => d.range.start.line >= 0));
      const exactPlan = await s.executeCommand('shardlens.showPlan', [doc.uri]);
      const allReduces = (p) => p.meshes[0].collectives.filter((c) => c.kind === 'all_reduce').reduce((n, c) => n + c.count, 0);
      // Megatron pairs through the attention the static analysis could not see: 2 all-reduce per block.
      assert.equal(allReduces(exactPlan), 4, `exact plan: ${JSON.stringify(exactPlan.meshes[0].collectives.map((c) => [c.kind, c.count, c.at]))}`);
      assert.notDeepEqual(exactPlan.meshes[0].totals, staticPlan.meshes[0].totals, 'the exact graph changed the plan');
    });
    // A later session: the fresh export beside the script is used only when the user asks for it.
    await withSession({ initializationOptions: { meshes: ['1x8'], allowExecution: true } }, async (s) => {
      const doc = await s.open(script);
      const diags = await s.settledDiagnostics(doc);
      assert.deepEqual(diags.filter((x) => x.code === 'static-blind'), [], 'the export was loaded without exactGraph');
    });
    await withSession({ initializationOptions: { meshes: ['1x8'], allowExecution: true, exactGraph: true } }, async (s) => {
      const doc = await s.open(script);
      await s.diagnostics(doc, (d) => d.some((x) => x.code === 'static-blind'), { since: 0, ms: 60000 });
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
