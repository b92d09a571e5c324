import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';

import { locateExecutable, serverLaunch } from '../serverCommand';

const trusted = { trusted: true, workspaceFolder: '/w', home: '/home/u' };
const untrusted = { ...trusted, trusted: false };

test('default: shardlens serve from PATH', () => {
  assert.deepEqual(serverLaunch({ path: { defaultValue: 'shardlens' }, args: { defaultValue: [] } }, trusted), {
    ok: true,
    command: 'shardlens',
    args: ['serve'],
    notes: [],
  });
  assert.deepEqual(serverLaunch({ path: undefined, args: undefined }, untrusted), { ok: true, command: 'shardlens', args: ['serve'], notes: [] });
});

test('trusted: path and args from any scope, expanded and resolved', () => {
  const r = serverLaunch({ path: { workspaceValue: './build/shardlens' }, args: { globalValue: ['--log-level', 'debug'] } }, trusted);
  assert.deepEqual(r, { ok: true, command: '/w/build/shardlens', args: ['serve', '--log-level', 'debug'], notes: [] });
  const w = serverLaunch({ path: { workspaceFolderValue: '${workspaceFolder}/b/shardlens' }, args: { workspaceValue: ['serve', '--stdio'] } }, trusted);
  assert.deepEqual(w, { ok: true, command: '/w/b/shardlens', args: ['serve', '--stdio'], notes: [] });
  const h = serverLaunch({ path: { globalValue: '~/bin/shardlens' }, args: undefined }, trusted);
  assert.ok(h.ok && h.command === '/home/u/bin/shardlens');
  const blank = serverLaunch({ path: { globalValue: '  ' }, args: undefined }, trusted);
  assert.ok(blank.ok && blank.command === 'shardlens');
});

test('untrusted: the workspace cannot choose the server', () => {
  const r = serverLaunch({ path: { workspaceValue: './evil' }, args: { workspaceValue: ['--x'] } }, untrusted);
  assert.ok(r.ok);
  if (!r.ok) return;
  assert.equal(r.command, 'shardlens');
  assert.deepEqual(r.args, ['serve']);
  assert.equal(r.notes.length, 2);
  assert.match(r.notes[0], /ignored until the workspace is trusted/);

  // A user-level path is the user's choice, unless it resolves inside the workspace.
  const user = serverLaunch({ path: { globalValue: '/opt/shardlens/bin/shardlens', workspaceValue: '/tmp/x' }, args: { globalValue: ['--log-level', 'info'] } }, untrusted);
  assert.ok(user.ok && user.command === '/opt/shardlens/bin/shardlens');
  assert.ok(user.ok && user.args.join(' ') === 'serve --log-level info');
  for (const p of ['./build/shardlens', 'build/shardlens', '${workspaceFolder}/shardlens']) {
    const rel = serverLaunch({ path: { globalValue: p }, args: undefined }, untrusted);
    assert.ok(rel.ok && rel.command === 'shardlens', p);
    assert.ok(rel.ok && rel.notes.some((n) => n.includes('points into the workspace')), p);
  }
  const home = serverLaunch({ path: { globalValue: '~/bin/shardlens' }, args: undefined }, untrusted);
  assert.ok(home.ok && home.command === '/home/u/bin/shardlens');
});

test('bad values are errors', () => {
  assert.deepEqual(serverLaunch({ path: { globalValue: 7 }, args: undefined }, trusted), { ok: false, error: 'shardlens.server.path must be a string, not 7' });
  assert.deepEqual(serverLaunch({ path: undefined, args: { globalValue: '--x' } }, trusted), {
    ok: false,
    error: 'shardlens.server.args must be a list of strings, not "--x"',
  });
  const noFolder = serverLaunch({ path: { globalValue: 'bin/shardlens' }, args: undefined }, { trusted: true });
  assert.equal(noFolder.ok, false);
});

test('locateExecutable: absolute paths and PATH, executables only, never the current directory', { skip: process.platform === 'win32' }, () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlens-locate-'));
  const cwd = process.cwd();
  try {
    const bin = path.join(dir, 'bin');
    fs.mkdirSync(bin);
    fs.writeFileSync(path.join(bin, 'shardlens'), '#!/bin/sh\n', { mode: 0o755 });
    fs.writeFileSync(path.join(dir, 'plain'), 'not executable', { mode: 0o644 });
    fs.writeFileSync(path.join(dir, 'shardlens'), '#!/bin/sh\n', { mode: 0o755 });
    assert.equal(locateExecutable('shardlens', ['/nonexistent', bin].join(path.delimiter)), path.join(bin, 'shardlens'));
    assert.equal(locateExecutable(path.join(bin, 'shardlens'), ''), path.join(bin, 'shardlens'));
    assert.equal(locateExecutable(path.join(dir, 'plain'), ''), undefined);
    assert.equal(locateExecutable(bin, ''), undefined); // a directory
    assert.equal(locateExecutable('shardlens', undefined), undefined);
    process.chdir(dir); // dir holds an executable 'shardlens'; '' and '.' on PATH must not find it
    assert.equal(locateExecutable('shardlens', ['', '.', 'bin'].join(path.delimiter)), undefined);
    assert.equal(locateExecutable('./shardlens', ''), undefined);
  } finally {
    process.chdir(cwd);
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
