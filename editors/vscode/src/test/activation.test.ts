// extension.ts itself, activated under plain Node with a stand-in `vscode` module (fake-vscode.ts)
// and the real vscode-languageclient, talking to the real `shardlens serve` (SHARDLENS=path;
// skipped when no binary is found): the status bar, Select mesh, settings changes and restarts,
// commands and their errors, the code lens command, workspace trust, a missing binary.
/* eslint-disable @typescript-eslint/no-explicit-any */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import Module = require('node:module');
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';

import { createFakeVscode } from './fake-vscode';

const ROOT = path.resolve(__dirname, '../..');
const SHARDLENS = path.resolve(process.env.SHARDLENS || path.resolve(ROOT, '../../build/shardlens'));
const available = fs.existsSync(SHARDLENS);
const SCALE = process.env.ASAN_OPTIONS ? 4 : 1;
const skip = !available && `no shardlens at ${SHARDLENS}`;

const MODEL = `import torch
import torch.nn as nn


class MLP(nn.Module):
    def __init__(self, hidden=1024, inner=4096):
        super().__init__()
        self.up = nn.Linear(hidden, inner, bias=False)
        self.down = nn.Linear(inner, hidden, bias=False)

    def forward(self, x):
        return self.down(torch.relu(self.up(x)))


class Net(nn.Module):
    def __init__(self, layers=4, hidden=1024):
        super().__init__()
        self.blocks = nn.ModuleList([MLP(hidden) for _ in range(layers)])

    def forward(self, x):
        for b in self.blocks:
            x = x + b(x)
        return x


model = Net()
`;

const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlens-activation-'));
const options: any = { manifest, workspaceFolder: dir, trusted: true, settings: {} };
const { module: vscode, control } = createFakeVscode(options);
const modelFile = path.join(dir, 'model.py');
fs.writeFileSync(modelFile, MODEL);

// `require('vscode')` anywhere (extension.ts, vscode-languageclient) gets the stand-in.
const M = Module as any;
const resolve = M._resolveFilename;
M._resolveFilename = function (request: string, ...rest: any[]) {
  return request === 'vscode' ? 'vscode' : resolve.call(this, request, ...rest);
};
require.cache.vscode = { id: 'vscode', filename: 'vscode', loaded: true, exports: vscode } as any;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const extension = require('../extension');

let context: { subscriptions: { dispose(): any }[] } | undefined;

async function activate(): Promise<void> {
  context = { subscriptions: [] };
  await extension.activate(context);
}

async function deactivate(): Promise<void> {
  await extension.deactivate();
  for (const d of context?.subscriptions ?? []) d.dispose();
  context = undefined;
}

async function waitFor<T>(what: string, check: () => T | undefined | false, ms = 15000 * SCALE): Promise<T> {
  const start = Date.now();
  for (;;) {
    const v = check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() - start > ms) throw new Error(`timed out waiting for ${what}; status: ${JSON.stringify(control.statusItem()?.text)}, errors: ${JSON.stringify(control.log.errors)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const statusText = (re: RegExp) => waitFor(`status ${re}`, () => re.test(control.statusItem()?.text ?? '') && control.statusItem().text);

before(() => {
  control.open(modelFile, 'python', MODEL);
});

after(async () => {
  if (context) await deactivate();
  M._resolveFilename = resolve;
  delete require.cache.vscode;
  fs.rmSync(dir, { recursive: true, force: true });
});

test('a server path that is not an executable: one error, a warning status, no client', async () => {
  control.values['shardlens.server.path'] = { globalValue: path.join(dir, 'no-such-shardlens') };
  await activate();
  assert.equal(control.log.errors.length, 1);
  assert.match(control.log.errors[0], /no-such-shardlens' is not an executable file/);
  assert.equal(control.statusItem().text, '$(warning) 1x8 · no plan');
  assert.ok(control.statusItem().visible);
  assert.ok(control.commands.has('shardlens.client.selectMesh'));
  assert.ok(!control.commands.has('shardlens.showPlan'), 'no server, so no server commands');
  control.log.errors.length = 0;
  await control.commands.get('shardlens.client.generateReport')!();
  assert.match(control.log.errors[0] ?? '', /the server is not running/);
  await deactivate();
  assert.ok(!control.commands.has('shardlens.client.selectMesh'), 'commands are disposed with the extension');
  control.log.errors.length = 0;
});

test('the status bar shows the first mesh and its collectives; the settings reach the server', { skip }, async () => {
  control.values['shardlens.server.path'] = { globalValue: SHARDLENS };
  control.values['shardlens.meshes'] = { globalValue: ['t3k', '8x4'] };
  await activate();
  assert.equal(await statusText(/collectives/), '$(circuit-board) 1x8 · 4 collectives (+1 mesh)');
  assert.match(control.statusItem().tooltip, /Shardlens plan for Net \(per forward\):\n {2}1x8: 4 collectives/);
  assert.equal(control.statusItem().command, 'shardlens.client.selectMesh');
  // The client registered the server's commands next to the extension's own, without a clash.
  for (const id of ['shardlens.showPlan', 'shardlens.insertAnnotations', 'shardlens.client.showPlan', 'shardlens.client.insertAnnotations'])
    assert.ok(control.commands.has(id), id);
  assert.deepEqual(control.log.errors, []);
  assert.deepEqual(control.log.warnings, []);
});

test('Select mesh: a preset, then a custom list; the status follows', { skip }, async () => {
  control.script.quickPick = (items) => items.find((i: any) => i.label === 'galaxy');
  await control.commands.get('shardlens.client.selectMesh')!();
  assert.deepEqual(control.values['shardlens.meshes'].workspaceValue, ['8x4']);
  assert.equal(await statusText(/^\$\(circuit-board\) 8x4/), '$(circuit-board) 8x4 · 4 collectives');

  control.script.quickPick = (items) => items.find((i: any) => i.label.startsWith('Custom'));
  control.script.inputBox = () => 'n300, 1x8';
  await control.commands.get('shardlens.client.selectMesh')!();
  assert.deepEqual(control.values['shardlens.meshes'].workspaceValue, ['n300', '1x8']);
  assert.equal(await statusText(/^\$\(circuit-board\) 1x2/), '$(circuit-board) 1x2 · 4 collectives (+1 mesh)');

  control.script.inputBox = () => '2y3'; // rejected by the input box's validation: nothing changes
  await control.commands.get('shardlens.client.selectMesh')!();
  assert.deepEqual(control.values['shardlens.meshes'].workspaceValue, ['n300', '1x8']);
});

test('unsetting a setting the server started with restarts it, back to the default', { skip }, async () => {
  const before = control.log.output.filter((l) => l.includes('starting ')).length;
  control.values['shardlens.meshes'] = {};
  control.setUserSetting('shardlens.meshes', undefined);
  await waitFor('a restart', () => control.log.output.filter((l) => l.includes('starting ')).length > before);
  assert.equal(await statusText(/^\$\(circuit-board\) 1x8 · \d+ collectives$/), '$(circuit-board) 1x8 · 4 collectives');
});

test('an invalid setting is reported once and not sent', { skip }, async () => {
  control.setUserSetting('shardlens.batch', 0);
  await waitFor('the warning', () => control.log.warnings.length > 0);
  assert.deepEqual(control.log.warnings, ['Shardlens: shardlens.batch must be a positive integer, not 0 (ignored)']);
  control.setUserSetting('shardlens.phase', 'prefill');
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(control.log.warnings.length, 1, 'not repeated');
  control.setUserSetting('shardlens.batch', 2);
  control.log.warnings.length = 0;
});

test('commands on the active file: insert annotations, show plan (palette and code lens), generate report', { skip }, async () => {
  await control.commands.get('shardlens.client.insertAnnotations')!();
  assert.equal(control.log.applied.length, 1);
  assert.ok(control.log.applied[0].edits.some((e) => /shardlens tt-xla sharding/.test(e.newText ?? '')));

  await control.commands.get('shardlens.client.showPlan')!();
  const lensUri = vscode.Uri.file(modelFile).toString();
  await control.commands.get('shardlens.showPlan')!(lensUri); // what a code lens runs
  const plans = control.log.opened.filter((o) => o.language === 'json').map((o) => JSON.parse(o.content));
  assert.equal(plans.length, 2);
  for (const p of plans) assert.equal(p.model, 'Net');

  control.log.errors.length = 0;
  for (const [id, server] of [['shardlens.client.generateReport', 'shardlens.generateReport'], ['shardlens.client.exportGraph', 'shardlens.exportGraph']]) {
    const opened = control.log.executed.length + control.log.opened.length;
    await control.commands.get(id)!();
    const error = control.log.errors.find((e) => e.includes(server));
    // exportGraph runs the user's script: the server refuses it until shardlens.allowExecution is set.
    const expected = server === 'shardlens.exportGraph' ? /allowExecution/ : new RegExp(`does not provide '${server.replace('.', '\\.')}' yet`);
    if (error) assert.match(error, expected);
    else assert.ok(control.log.executed.length + control.log.opened.length > opened, `${id} opened its result`);
  }
  assert.deepEqual(control.log.warnings, []);
  await deactivate();
});

test('untrusted workspace: the workspace cannot choose the server; trusting it restarts with its settings', { skip }, async () => {
  // `shardlens` on PATH is this build's binary.
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(bin, { recursive: true });
  fs.symlinkSync(SHARDLENS, path.join(bin, 'shardlens'));
  const savedPath = process.env.PATH;
  process.env.PATH = `${bin}${path.delimiter}${savedPath}`;
  try {
    options.trusted = false;
    control.values['shardlens.server.path'] = { workspaceValue: './workspace-shardlens' };
    control.values['shardlens.server.args'] = { workspaceValue: ['--log-level', 'debug'] };
    // The workspace's "server": leaves a mark when run, then is the real one.
    const marker = path.join(dir, 'workspace-server-ran');
    fs.writeFileSync(path.join(dir, 'workspace-shardlens'), `#!/bin/sh\ntouch '${marker}'\nexec '${SHARDLENS}' "$@"\n`, { mode: 0o755 });
    control.log.info.length = 0;
    await activate();
    assert.ok(control.log.output.some((l) => l.includes(`starting ${path.join(bin, 'shardlens')} serve`) && !l.includes('debug')));
    assert.equal(control.log.info.length, 2);
    assert.match(control.log.info[0], /restricted mode.*server\.path from the workspace settings is ignored/);
    await statusText(/\d+ collectives?$/);
    assert.ok(!fs.existsSync(marker), 'the workspace server did not run');

    control.log.output.length = 0;
    control.trust();
    await waitFor('the restart with the workspace path', () => control.log.output.some((l) => l.includes(`starting ${path.join(dir, 'workspace-shardlens')} serve --log-level debug`)));
    await waitFor('the workspace server', () => fs.existsSync(marker));
    await statusText(/\d+ collectives?$/);
  } finally {
    process.env.PATH = savedPath;
    options.trusted = true;
    await deactivate();
  }
});

test('execution settings reach the server only from the user settings, and not in an untrusted workspace', { skip }, async () => {
  // A stand-in Python for Export graph: it says it ran (through the server's error message).
  const python = path.join(dir, 'stand-in-python3');
  fs.writeFileSync(python, '#!/bin/sh\necho \'{"ok": false, "kind": "script-raised", "message": "the stand-in python ran"}\'\nexit 4\n', { mode: 0o755 });
  const exportError = async (): Promise<string> => {
    control.log.errors.length = 0;
    await control.commands.get('shardlens.client.exportGraph')!();
    return control.log.errors.find((e) => e.includes('shardlens.exportGraph')) ?? control.log.errors.join('\n');
  };
  control.values['shardlens.server.path'] = { globalValue: SHARDLENS };
  control.values['shardlens.server.args'] = {};
  try {
    // The workspace's own settings (a cloned repository's .vscode/settings.json): not sent.
    control.values['shardlens.allowExecution'] = { workspaceValue: true };
    control.values['shardlens.python'] = { workspaceValue: python };
    await activate();
    await statusText(/\d+ collectives?$/);
    assert.match(await exportError(), /allowExecution/);
    await deactivate();
    // The user's, in an untrusted workspace: not sent either; once trusted, they are.
    options.trusted = false;
    control.values['shardlens.allowExecution'] = { globalValue: true };
    control.values['shardlens.python'] = { globalValue: python };
    await activate();
    await statusText(/\d+ collectives?$/);
    assert.match(await exportError(), /allowExecution/);
    control.log.output.length = 0;
    control.trust();
    await waitFor('the restart after trust', () => control.log.output.some((l) => l.includes('server started')));
    await statusText(/\d+ collectives?$/);
    assert.match(await exportError(), /the stand-in python ran/);
  } finally {
    options.trusted = true;
    delete control.values['shardlens.allowExecution'];
    delete control.values['shardlens.python'];
    if (context) await deactivate();
  }
});
