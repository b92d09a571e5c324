// The extension's pure modules against the real `shardlens serve` (SHARDLENS=path; skipped when no
// binary is found): the command line it builds starts the server, the settings it sends are
// accepted without warnings, the status text comes from a real `shardlens.showPlan`, the server's
// commands do not clash with the extension's, and an unknown command's error is recognised.
import * as assert from 'node:assert/strict';
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import * as lsp from 'vscode-languageserver-protocol/node';

import { advertisedCommands, commandErrorMessage, insertMessage, isUnknownCommand, outputOf, serverVersion } from '../commandResult';
import { serverLaunch } from '../serverCommand';
import { ServerSettings, toServerSettings } from '../settings';
import { planStatus } from '../status';

const ROOT = path.resolve(__dirname, '../..');
const SHARDLENS = process.env.SHARDLENS || path.resolve(ROOT, '../../build/shardlens');
const available = fs.existsSync(SHARDLENS);
const SCALE = process.env.ASAN_OPTIONS ? 4 : 1;

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

let proc: ChildProcess;
let conn: lsp.ProtocolConnection;
let dir: string;
let uri: string;
let settings: ServerSettings = {};
let initResult: lsp.InitializeResult;
const warnings: string[] = [];
const publishes: lsp.PublishDiagnosticsParams[] = [];
const applied: lsp.ApplyWorkspaceEditParams[] = [];

function waitFor<T>(what: string, check: () => T | undefined, ms = 10000 * SCALE): Promise<T> {
  return new Promise((resolve, reject) => {
    const start = Date.now();
    const tick = () => {
      const v = check();
      if (v !== undefined) return resolve(v);
      if (Date.now() - start > ms) return reject(new Error(`timed out waiting for ${what}`));
      setTimeout(tick, 20);
    };
    tick();
  });
}

const execute = (command: string, args: unknown[]) => conn.sendRequest(lsp.ExecuteCommandRequest.type, { command, arguments: args });

// As the extension does on a settings change: push the object, then answer the pull with it.
async function changeSettings(next: ServerSettings): Promise<void> {
  settings = next;
  const count = publishes.length;
  await conn.sendNotification(lsp.DidChangeConfigurationNotification.type, { settings: { shardlens: settings } });
  await waitFor('diagnostics after the settings change', () => (publishes.length > count ? true : undefined));
}

before(async () => {
  if (!available) return;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlens-vscode-'));
  const file = path.join(dir, 'tiny.py');
  fs.writeFileSync(file, MODEL);
  uri = pathToFileURL(file).href;

  const launch = serverLaunch({ path: { globalValue: SHARDLENS }, args: { globalValue: ['--log-level', 'error'] } }, { trusted: true, workspaceFolder: dir });
  assert.ok(launch.ok);
  if (!launch.ok) return;
  assert.deepEqual(launch.args, ['serve', '--log-level', 'error']);
  proc = spawn(launch.command, launch.args, { stdio: ['pipe', 'pipe', 'inherit'] });
  conn = lsp.createProtocolConnection(new lsp.StreamMessageReader(proc.stdout!), new lsp.StreamMessageWriter(proc.stdin!));
  conn.onNotification(lsp.ShowMessageNotification.type, (p) => {
    if (p.type <= lsp.MessageType.Warning) warnings.push(p.message);
  });
  conn.onNotification(lsp.PublishDiagnosticsNotification.type, (p) => {
    if (p.uri === uri) publishes.push(p);
  });
  conn.onRequest(lsp.ConfigurationRequest.type, (p) => p.items.map((i) => (i.section === 'shardlens' ? settings : null)));
  conn.onRequest(lsp.ApplyWorkspaceEditRequest.type, (p) => {
    applied.push(p);
    return { applied: true };
  });
  conn.onRequest(lsp.WorkDoneProgressCreateRequest.type, () => null);
  conn.onRequest(lsp.RegistrationRequest.type, () => null);
  conn.onRequest(lsp.CodeLensRefreshRequest.type, () => null);
  conn.listen();

  // Every setting, as a user would write them in settings.json, through the extension's mapping.
  const user: Record<string, unknown> = { meshes: ['t3k', '8x4'], strategy: 'auto', batch: 1, seq: 2048, phase: 'decode', dtype: 'bf16',
    hardware: 'wormhole', model: 'Net()', allowExecution: false, exactGraph: false, python: '/usr/bin/python3' };
  const mapped = toServerSettings((k) => user[k]);
  assert.deepEqual(mapped.problems, []);
  settings = mapped.settings;
  const exited = new Promise<never>((_, reject) =>
    proc.once('exit', (code, signal) => reject(new Error(`${launch.command} ${launch.args.join(' ')} exited (${signal ?? code}) before answering initialize`))),
  );
  exited.catch(() => undefined);
  initResult = await Promise.race([exited, conn.sendRequest(lsp.InitializeRequest.type, {
    processId: process.pid,
    rootUri: pathToFileURL(dir).href,
    workspaceFolders: [{ uri: pathToFileURL(dir).href, name: 'w' }],
    initializationOptions: settings,
    capabilities: {
      workspace: { configuration: true, applyEdit: true, didChangeConfiguration: { dynamicRegistration: true }, workspaceEdit: { documentChanges: true } },
      textDocument: { publishDiagnostics: { versionSupport: true } },
    },
  })]);
  await conn.sendNotification(lsp.InitializedNotification.type, {});
  await conn.sendNotification(lsp.DidOpenTextDocumentNotification.type, { textDocument: { uri, languageId: 'python', version: 1, text: MODEL } });
  await waitFor('the first diagnostics', () => (publishes.length ? true : undefined));
});

after(async () => {
  if (!available || !proc) return;
  const running = () => proc.exitCode === null && proc.signalCode === null;
  const exited = running() ? new Promise((r) => proc.once('exit', r)) : Promise.resolve();
  const timer = setTimeout(() => proc.kill('SIGKILL'), 5000 * SCALE);
  try {
    if (running()) {
      await conn.sendRequest(lsp.ShutdownRequest.type);
      await conn.sendNotification(lsp.ExitNotification.type);
    }
  } finally {
    await exited;
    clearTimeout(timer);
    conn.dispose();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  assert.equal(proc.exitCode, 0, 'the server exits with 0 after shutdown + exit');
});

test('server commands: the ones the extension calls exist, none is a client command ID', { skip: !available && `no shardlens at ${SHARDLENS}` }, () => {
  const advertised = advertisedCommands(initResult) ?? [];
  for (const id of ['shardlens.insertAnnotations', 'shardlens.insertLoadShardSpec', 'shardlens.showPlan']) assert.ok(advertised.includes(id), id);
  const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  for (const c of manifest.contributes.commands) assert.ok(!advertised.includes(c.command), c.command);
  assert.equal(typeof serverVersion(initResult), 'string');
});

test('the mapped settings are accepted: no warnings, both meshes planned', { skip: !available }, async () => {
  const plan = await execute('shardlens.showPlan', [uri]);
  const view = planStatus(plan, settings.meshes);
  assert.equal(view.text, '$(circuit-board) 1x8 · 4 collectives (+1 mesh)');
  assert.match(view.tooltip, /^Shardlens plan for Net \(per forward\):\n {2}1x8: 4 collectives, 8\.0 KiB, est\. [0-9.]+ µs\n {2}8x4: 4 collectives/);
  assert.deepEqual(warnings, []);
});

test('a settings change re-plans; the status follows', { skip: !available }, async () => {
  await changeSettings({ meshes: ['n150'] });
  const one = planStatus(await execute('shardlens.showPlan', [uri]), ['n150']);
  assert.equal(one.text, '$(circuit-board) 1x1 · 0 collectives');
  await changeSettings({ meshes: ['galaxy'], phase: 'prefill', seq: 128 });
  assert.match(planStatus(await execute('shardlens.showPlan', [uri])).text, /^\$\(circuit-board\) 8x4 · \d+ collectives$/);
  assert.deepEqual(warnings, []);
});

test('insertAnnotations: the server sends the edit, the result reads as applied', { skip: !available }, async () => {
  const result = await execute('shardlens.insertAnnotations', [uri]);
  assert.equal(insertMessage(result, 'Insert Shardy annotations'), undefined);
  assert.equal(applied.length, 1);
  assert.match(JSON.stringify(applied[0].edit), /shardlens tt-xla sharding/);
});

test('generateReport / exportGraph: a result to open, or a clean "not provided" message', { skip: !available }, async () => {
  const advertised = advertisedCommands(initResult) ?? [];
  for (const command of ['shardlens.generateReport', 'shardlens.exportGraph']) {
    try {
      const result = await execute(command, [uri]);
      assert.ok(advertised.includes(command), `${command} answered but is not advertised`);
      assert.notEqual(outputOf(result, command).kind, 'none', `${command} returned ${JSON.stringify(result)}`);
    } catch (error) {
      const e = error as lsp.ResponseError<unknown>;
      // exportGraph runs the user's script: refused (RequestFailed) until allowExecution is set.
      if (command === 'shardlens.exportGraph' && advertised.includes(command) && e.code === -32803 && /allowExecution/.test(e.message)) continue;
      if (advertised.includes(command)) throw error;
      assert.ok(isUnknownCommand(e), `${command}: ${e.code} ${e.message}`);
      assert.match(commandErrorMessage(command, e, serverVersion(initResult)) ?? '', new RegExp(`does not provide '${command.replace('.', '\\.')}' yet`));
    }
  }
});
