'use strict';
// Nothing runs that the user did not allow (issue 32). Loading a TorchScript file runs the
// archive's code, so a `model.pt` beside `model.py` (as new as the script right after a clone) is
// never loaded on its own: only when the user asks for the exact graph (the exactGraph setting or
// shardlens.exportGraph) and allows execution (allowExecution), both from the user's own settings,
// never from a pyproject.toml. The server is pointed at a stand-in shardlens-graph
// (SHARDLENS_GRAPH) that writes a marker file and says on stderr where and how it ran.

const test = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { withSession } = require('./lib/session');
const { fixture, byCode, codes } = require('./lib/fixtures');

// Whether the kernel offers Landlock (landlock_create_ruleset's version query, syscall 444).
function landlockAvailable() {
  try {
    const out = execFileSync('/usr/bin/python3', ['-c',
      'import ctypes; libc = ctypes.CDLL(None, use_errno=True); print(libc.syscall(444, None, 0, 1))']);
    return Number(out.toString().trim()) >= 1;
  } catch {
    return false;
  }
}

// A workspace with model.py, a newer model.pt beside it, and the stand-in tool.
function workspace() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlens-consent-'));
  const ws = path.join(dir, 'ws');
  fs.mkdirSync(ws);
  const script = path.join(ws, 'model.py');
  fs.copyFileSync(fixture('mlp.py'), script);
  const pt = path.join(ws, 'model.pt');
  fs.writeFileSync(pt, 'PK\x03\x04 not really an archive');
  const later = new Date(Date.now() + 60_000);
  fs.utimesSync(pt, later, later);
  const marker = path.join(ws, 'MARKER');
  const tool = path.join(dir, 'fake-shardlens-graph');
  fs.writeFileSync(tool, [
    '#!/bin/sh',
    `{ echo ran > '${marker}'; } 2>/dev/null && wrote=yes || wrote=no`,
    'echo "stand-in shardlens-graph ran: cwd=$(pwd) secret=${SHARDLENS_TEST_SECRET:-none} home=${HOME:-none} wrote=$wrote" >&2',
    'exit 1',
    '',
  ].join('\n'));
  fs.chmodSync(tool, 0o755);
  const env = { SHARDLENS_GRAPH: tool, SHARDLENS_TEST_SECRET: 'leaked', SHARDLENS_CACHE_DIR: path.join(dir, 'cache') };
  return { dir, ws, script, marker, env, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

const exactGraphCodes = (diags) => diags.filter((d) => /^(exact-graph-failed|static-blind)$/.test(d.code));

// body(session, doc, workspace) in a session on a fresh workspace with model.py open.
async function withScriptOpen(initializationOptions, body) {
  const w = workspace();
  try {
    await withSession({ rootPath: w.ws, env: w.env, initializationOptions }, async (s) => body(s, await s.open(w.script), w));
  } finally {
    w.cleanup();
  }
}

test('a newer model.pt beside the script is not loaded: no child runs, no file is written', async () => {
  await withScriptOpen({ meshes: ['1x8'] }, async (s, doc, w) => {
    const diags = await s.settledDiagnostics(doc);
    assert.deepEqual(exactGraphCodes(diags), [], `the export was loaded: ${codes(diags)}`);
    assert.ok(!fs.existsSync(w.marker), 'the stand-in shardlens-graph ran and wrote its marker');
  });
});

test('allowExecution, exactGraph and python in pyproject.toml are ignored (with a warning); one above the workspace is not read', async () => {
  const w = workspace();
  try {
    fs.writeFileSync(path.join(w.ws, 'pyproject.toml'),
      '[tool.shardlens]\nallowExecution = true\nexactGraph = true\npython = "./venv/bin/python3"\nmeshes = ["1x2"]\n');
    await withSession({ rootPath: w.ws, env: w.env }, async (s) => {
      const doc = await s.open(w.script);
      const diags = await s.settledDiagnostics(doc);
      assert.deepEqual(exactGraphCodes(diags), [], `a workspace file allowed execution: ${codes(diags)}`);
      assert.ok(!fs.existsSync(w.marker), 'the stand-in shardlens-graph ran');
      const plan = await s.executeCommand('shardlens.showPlan', [doc.uri]);
      assert.deepEqual(plan.meshes.map((m) => m.shape.join('x')), ['1x2'], 'the analysis options of pyproject.toml still apply');
      for (const key of ['allowExecution', 'exactGraph', 'python'])
        assert.ok(s.showMessages.some((m) => m.type === 2 && m.message.includes(`${key} is ignored in pyproject.toml`)),
          `no warning about ${key}: ${JSON.stringify(s.showMessages)}`);
      await assert.rejects(s.executeCommand('shardlens.exportGraph', [doc.uri]), /allowExecution/);
    });
    // Above the workspace folder: a stranger's file, not read at all.
    fs.renameSync(path.join(w.ws, 'pyproject.toml'), path.join(w.dir, 'pyproject.toml'));
    await withSession({ rootPath: w.ws, env: w.env }, async (s) => {
      const doc = await s.open(w.script);
      await s.settledDiagnostics(doc);
      const plan = await s.executeCommand('shardlens.showPlan', [doc.uri]);
      assert.deepEqual(plan.meshes.map((m) => m.shape.join('x')), ['1x8'], 'a pyproject.toml above the workspace was read');
      assert.ok(!fs.existsSync(w.marker));
    });
  } finally {
    w.cleanup();
  }
});

test('exactGraph without allowExecution: the export is not loaded and the diagnostic says why', async () => {
  await withScriptOpen({ exactGraph: true }, async (s, doc, w) => {
    const diags = await s.settledDiagnostics(doc);
    assert.deepEqual(exactGraphCodes(diags), []);
    const why = byCode(diags, 'exact-graph-not-allowed');
    assert.equal(why.length, 1, codes(diags));
    assert.match(why[0].message, /runs its code.*allowExecution/);
    assert.ok(!fs.existsSync(w.marker));
  });
});

test('the user\'s exactGraph + allowExecution load it, in a confined child: fresh directory, clean environment, no writes outside', async () => {
  await withScriptOpen({ exactGraph: true, allowExecution: true }, async (s, doc, w) => {
    const diags = await s.diagnostics(doc, (ds) => byCode(ds, 'exact-graph-failed').length > 0, { since: 0 });
    const message = byCode(diags, 'exact-graph-failed')[0].message;
    const ran = /stand-in shardlens-graph ran: cwd=(\S+) secret=(\S+) home=(\S+) wrote=(\S+)/.exec(message);
    assert.ok(ran, `the stand-in did not run, or its report is missing: ${message}`);
    const [, cwd, secret, , wrote] = ran;
    assert.match(cwd, /^\/tmp\/shardlens-graph-/, 'its working directory is a fresh temporary one');
    assert.ok(!fs.existsSync(cwd), 'the temporary directory is removed afterwards');
    assert.equal(secret, 'none', 'the server\'s environment reached the child');
    if (landlockAvailable()) {
      assert.equal(wrote, 'no', 'the child could write outside its directory');
      assert.ok(!fs.existsSync(w.marker));
    }
  });
});
