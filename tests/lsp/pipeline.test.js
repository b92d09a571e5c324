'use strict';
// A pipeline declared in pyproject.toml (issue 37, item 1): a document that is one of its models is
// planned on the mesh shape the pipeline shares, and a `pipeline-shape` diagnostic says which model
// set it. Our own three models (tests/models/pipeline): a 12-head text encoder cannot run under 1x8,
// so the pipeline falls back from the DiT's best shape.

const test = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { withSession, SHARDLENS } = require('./lib/session');
const { byCode, codes } = require('./lib/fixtures');

const MODELS = path.join(__dirname, '..', 'models', 'pipeline');

function workspace(encoderModel) {
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlens-pipeline-'));
  for (const f of ['text_encoder.py', 'dit.py', 'vae_decoder.py']) fs.copyFileSync(path.join(MODELS, f), path.join(ws, f));
  fs.writeFileSync(path.join(ws, 'pyproject.toml'), [
    '[tool.shardlens]', 'meshes = ["t3k"]', '',
    '[[tool.shardlens.pipeline]]', 'file = "text_encoder.py"', `model = "${encoderModel}"`, '',
    '[[tool.shardlens.pipeline]]', 'file = "dit.py"', '',
    '[[tool.shardlens.pipeline]]', 'file = "vae_decoder.py"', ''].join('\n'));
  return ws;
}

// What the CLI chooses for the same pipeline: the server must agree.
function cliChoice(ws) {
  const out = execFileSync(SHARDLENS, ['plan', '--pipeline', path.join(ws, 'pyproject.toml'), '--devices', '8', '--format', 'json']);
  return JSON.parse(out.toString()).pipeline;
}

for (const [label, encoder] of [['heads that divide every shape', 'TextEncoder()'], ['a 12-head encoder (fallback)', 'TextEncoder(heads=12)']]) {
  test(`a pipeline member is planned on the shared shape: ${label}`, async () => {
    const ws = workspace(encoder);
    try {
      const want = cliChoice(ws);
      await withSession({ rootPath: ws }, async (s) => {
        for (const file of ['vae_decoder.py', 'text_encoder.py']) {
          const doc = await s.open(path.join(ws, file));
          const diags = await s.settledDiagnostics(doc);
          const note = byCode(diags, 'pipeline-shape');
          assert.equal(note.length, 1, `${file}: ${codes(diags)}`);
          assert.equal(note[0].severity, 3, 'information');
          assert.match(note[0].message, new RegExp(`shared mesh ${want.shape.join('x')}, set by dit\\.py \\(DiT\\), the slowest`));
          const plan = await s.executeCommand('shardlens.showPlan', [doc.uri]);
          assert.deepEqual(plan.meshes.map((m) => m.shape), [want.shape], `${file} planned on ${JSON.stringify(plan.meshes.map((m) => m.shape))}`);
        }
        if (want.fallback) assert.notDeepEqual(want.shape, [1, 8], 'the 12-head encoder cannot run under 1x8');
      });
    } finally {
      fs.rmSync(ws, { recursive: true, force: true });
    }
  });
}

test('a file that is not in the pipeline keeps its own meshes', async () => {
  const ws = workspace('TextEncoder()');
  try {
    fs.copyFileSync(path.join(MODELS, 'dit.py'), path.join(ws, 'other.py'));
    await withSession({ rootPath: ws }, async (s) => {
      const doc = await s.open(path.join(ws, 'other.py'));
      const diags = await s.settledDiagnostics(doc);
      assert.equal(byCode(diags, 'pipeline-shape').length, 0, codes(diags));
      const plan = await s.executeCommand('shardlens.showPlan', [doc.uri]);
      assert.deepEqual(plan.meshes.map((m) => m.shape), [[1, 8]]);
    });
  } finally {
    fs.rmSync(ws, { recursive: true, force: true });
  }
});
