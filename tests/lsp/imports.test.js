'use strict';
// A loader that imports its model from a package beside it: the server follows the imports, and
// an edit to an imported file (an open buffer, or a change on disk) re-analyses the documents that
// import it.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { withSession, REPO, lsp } = require('./lib/session');
const { byCode, codes } = require('./lib/fixtures');

// A copy of tests/workspaces/imports_package: the test edits files on disk.
function workspaceCopy() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlens-imports-'));
  fs.cpSync(path.join(REPO, 'tests', 'workspaces', 'imports_package'), dir, { recursive: true });
  return dir;
}

test('imports: the model built by an imported package is planned, and editing the package re-plans its importer', async () => {
  const dir = workspaceCopy();
  try {
    await withSession({ initializationOptions: { meshes: ['1x8'] } }, async (s) => {
      const loader = await s.open(path.join(dir, 'load_model.py'));
      // TinyConfig.small() sets 6 heads: 6 does not divide the 8 devices.
      let diags = await s.diagnostics(loader, (ds) => byCode(ds, 'divisibility-heads').length > 0);
      assert.deepEqual(byCode(diags, 'no-model'), [], `the model is found through the imports: ${codes(diags)}`);
      const [d] = byCode(diags, 'divisibility-heads');
      assert.match(d.message, /6 attention heads/);
      assert.match(d.message, /tinylm\/model\.py:\d+/, 'the message says where in the imported file');

      // The config module, opened and edited in the editor (not saved): 16 heads divide the axis.
      const config = await s.open(path.join(dir, 'tinylm', 'config.py'));
      await s.replace(config, 'cls(dim=96, n_head=6', 'cls(dim=96, n_head=16');
      diags = await s.diagnostics(loader, (ds) => byCode(ds, 'divisibility-heads').length === 0, { since: 0, what: 'loader re-planned' });
      assert.deepEqual(byCode(diags, 'divisibility-heads'), [], `after the edit: ${codes(diags)}`);

      // Closed without saving: the disk's 6 heads are back for the loader.
      await s.conn.sendNotification(lsp.DidCloseTextDocumentNotification.type, { textDocument: { uri: config.uri } });
      diags = await s.diagnostics(loader, (ds) => byCode(ds, 'divisibility-heads').length > 0, { what: 'disk text again' });
      assert.equal(byCode(diags, 'divisibility-heads').length, 1);

      // A change on disk, announced by workspace/didChangeWatchedFiles.
      const file = path.join(dir, 'tinylm', 'config.py');
      fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('n_head=6', 'n_head=8'));
      await s.conn.sendNotification(lsp.DidChangeWatchedFilesNotification.type,
        { changes: [{ uri: require('node:url').pathToFileURL(file).href, type: 2 }] });
      diags = await s.diagnostics(loader, (ds) => byCode(ds, 'divisibility-heads').length === 0, { what: 'disk change seen' });
      assert.deepEqual(byCode(diags, 'divisibility-heads'), []);
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

// The `python` setting (the user's own): imports are searched in that interpreter's site-packages
// too, after shardlens' library models. The interpreter here is a stand-in that answers `-I -c`
// with its sys.path; pyproject.toml cannot name one.
test('imports: the python setting adds its site-packages; a repository cannot set it', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlens-site-'));
  try {
    const site = path.join(dir, 'venv', 'lib', 'python3.11', 'site-packages');
    fs.mkdirSync(path.join(site, 'sitelib'), { recursive: true });
    fs.writeFileSync(path.join(site, 'sitelib', '__init__.py'),
      'import torch.nn as nn\n\n\nclass Wide(nn.Module):\n    def __init__(self):\n        super().__init__()\n' +
      '        self.up = nn.Linear(64, 256)\n        self.down = nn.Linear(256, 64)\n\n    def forward(self, x):\n' +
      '        return self.down(self.up(x).relu())\n');
    const python = path.join(dir, 'venv', 'bin', 'python3');
    fs.mkdirSync(path.dirname(python), { recursive: true });
    fs.writeFileSync(python, `#!/bin/sh\n[ "$1" = -I ] || exit 3\necho /usr/lib/python3.11\necho ${site}\n`, { mode: 0o755 });
    const project = path.join(dir, 'project');
    fs.mkdirSync(project);
    fs.writeFileSync(path.join(project, 'pyproject.toml'), `[tool.shardlens]\npython = "${python}"\n`);
    fs.writeFileSync(path.join(project, 'load_model.py'), 'from sitelib import Wide\n\nmodel = Wide()\n');
    // The repository's pyproject.toml names the interpreter: ignored, the import stays missing.
    await withSession({ initializationOptions: { meshes: ['1x8'] } }, async (s) => {
      const doc = await s.open(path.join(project, 'load_model.py'));
      const diags = await s.diagnostics(doc, (ds) => ds.length > 0);
      assert.ok(byCode(diags, 'no-model').length > 0 || diags.some((d) => /sitelib/.test(d.message)),
        `without the user's python setting, sitelib is not found: ${codes(diags)}`);
    });
    await withSession({ initializationOptions: { meshes: ['1x8'], python } }, async (s) => {
      const doc = await s.open(path.join(project, 'load_model.py'));
      const diags = await s.diagnostics(doc, (ds) => !ds.some((d) => /sitelib/.test(d.message)) && byCode(ds, 'no-model').length === 0,
        { what: 'the model found in site-packages' });
      assert.deepEqual(byCode(diags, 'no-model'), [], `found through the user's interpreter: ${codes(diags)}`);
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
