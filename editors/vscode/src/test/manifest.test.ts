// package.json against the code: commands, settings, trust, pins; and no `vscode` import outside
// extension.ts (the other modules must run under plain Node, as these tests do).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';

import { ENUMS, EXECUTION_KEYS, SERVER_KEYS } from '../settings';

const ROOT = path.resolve(__dirname, '../..');
const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const extensionJs = fs.readFileSync(path.join(ROOT, 'out/extension.js'), 'utf8');

// What `shardlens serve` advertises today (server/README.md) plus what it will (issue 6).
const SERVER_COMMAND_IDS = [
  'shardlens.insertAnnotations',
  'shardlens.insertLoadShardSpec',
  'shardlens.showPlan',
  'shardlens.setMeshes',
  'shardlens.generateReport',
  'shardlens.exportGraph',
];

test('engine, activation, entry point, pinned client', () => {
  assert.equal(manifest.engines.vscode, '^1.82.0');
  assert.deepEqual(manifest.activationEvents, ['onLanguage:python']);
  assert.equal(manifest.main, './out/extension.js');
  assert.equal(manifest.dependencies['vscode-languageclient'], '9.0.1');
  assert.equal(manifest.devDependencies['@types/vscode'], '1.82.0');
  assert.match(manifest.devDependencies['@vscode/vsce'], /^3\.9\.\d+$/);
  for (const [name, version] of Object.entries({ ...manifest.dependencies, ...manifest.devDependencies }))
    assert.match(String(version), /^\d+\.\d+\.\d+$/, `${name} is pinned exactly`);
  const lock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8'));
  assert.equal(lock.lockfileVersion, 3);
  assert.equal(lock.packages['node_modules/vscode-languageclient'].version, '9.0.1');
});

test('client commands: shardlens.client.*, titled, registered, never a server command ID', () => {
  const commands: { command: string; title: string; category: string }[] = manifest.contributes.commands;
  const ids = commands.map((c) => c.command);
  for (const want of ['generateReport', 'insertAnnotations', 'insertLoadShardSpec', 'exportGraph', 'selectMesh'])
    assert.ok(ids.includes(`shardlens.client.${want}`), want);
  for (const c of commands) {
    assert.match(c.command, /^shardlens\.client\.[A-Za-z]+$/);
    assert.ok(!SERVER_COMMAND_IDS.includes(c.command));
    assert.equal(c.category, 'Shardlens');
    assert.ok(c.title.length > 0);
    assert.ok(extensionJs.includes(`'${c.command}'`), `${c.command} is registered in extension.ts`);
  }
  for (const m of manifest.contributes.menus.commandPalette) assert.ok(ids.includes(m.command));
});

test('settings mirror the server names, enums and defaults', () => {
  const props = manifest.contributes.configuration.properties;
  for (const key of SERVER_KEYS) assert.ok(props[`shardlens.${key}`], key);
  for (const [key, values] of Object.entries(ENUMS)) assert.deepEqual(props[`shardlens.${key}`].enum, values, key);
  assert.deepEqual(props['shardlens.meshes'].default, ['1x8']);
  assert.equal(props['shardlens.meshes'].items.type, 'string');
  assert.equal(props['shardlens.model'].type, 'string');
  assert.equal(props['shardlens.batch'].type, 'integer');
  assert.equal(props['shardlens.seq'].type, 'integer');
  assert.equal(props['shardlens.server.path'].default, 'shardlens');
  assert.equal(props['shardlens.server.args'].type, 'array');
  const known = new Set([...SERVER_KEYS.map((k) => `shardlens.${k}`), 'shardlens.server.path', 'shardlens.server.args']);
  for (const key of Object.keys(props)) assert.ok(known.has(key), `unexpected setting ${key}`);
});

test('limited in untrusted workspaces', () => {
  const u = manifest.capabilities.untrustedWorkspaces;
  assert.equal(u.supported, 'limited');
  assert.deepEqual(u.restrictedConfigurations, [
    'shardlens.server.path', 'shardlens.server.args', ...EXECUTION_KEYS.map((k) => `shardlens.${k}`),
  ]);
});

test('the settings that let the server run code are machine-scoped (a workspace cannot set them), off by default', () => {
  const props = manifest.contributes.configuration.properties;
  for (const key of EXECUTION_KEYS) assert.equal(props[`shardlens.${key}`].scope, 'machine', key);
  assert.equal(props['shardlens.allowExecution'].type, 'boolean');
  assert.equal(props['shardlens.allowExecution'].default, false);
  assert.equal(props['shardlens.exactGraph'].default, false);
  assert.equal(props['shardlens.python'].type, 'string');
  assert.match(props['shardlens.allowExecution'].markdownDescription, /runs the archive's own code/);
});

test('client options: python documents, settings section, server commands it calls', () => {
  assert.ok(extensionJs.includes("configurationSection: exports.SECTION") || extensionJs.includes("configurationSection: SECTION"));
  assert.ok(extensionJs.includes("language: 'python'"));
  for (const id of ['shardlens.generateReport', 'shardlens.exportGraph', 'shardlens.insertAnnotations', 'shardlens.insertLoadShardSpec', 'shardlens.showPlan'])
    assert.ok(extensionJs.includes(`'${id}'`), id);
});

test('only extension.js imports vscode', () => {
  const outDir = path.join(ROOT, 'out');
  for (const f of fs.readdirSync(outDir).filter((f) => f.endsWith('.js'))) {
    const text = fs.readFileSync(path.join(outDir, f), 'utf8');
    const imports = /require\("vscode(-languageclient[^"]*)?"\)/.test(text);
    assert.equal(imports, f === 'extension.js', f);
  }
});
