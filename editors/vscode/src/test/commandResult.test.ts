import * as assert from 'node:assert/strict';
import { test } from 'node:test';

import { advertisedCommands, commandErrorMessage, insertMessage, isUnknownCommand, outputOf, serverVersion } from '../commandResult';

test('outputOf: {path} and {uri}', () => {
  assert.deepEqual(outputOf({ path: '/w/sharding_analysis.md' }, 'report'), { kind: 'file', path: '/w/sharding_analysis.md' });
  assert.deepEqual(outputOf({ uri: 'file:///w/sharding_analysis.md', path: '/ignored' }, 'report'), {
    kind: 'uri',
    uri: 'file:///w/sharding_analysis.md',
  });
  assert.deepEqual(outputOf({ file: '/w/graph.svg' }, 'graph'), { kind: 'file', path: '/w/graph.svg' });
  assert.deepEqual(outputOf({ output: 'file:///w/graph.mmd' }, 'graph'), { kind: 'uri', uri: 'file:///w/graph.mmd' });
});

test('outputOf: bare strings and Markdown text', () => {
  assert.deepEqual(outputOf('/w/r.md', 'report'), { kind: 'file', path: '/w/r.md' });
  assert.deepEqual(outputOf('file:///w/r.md', 'report'), { kind: 'uri', uri: 'file:///w/r.md' });
  assert.deepEqual(outputOf('# Sharding analysis\n\nbody', 'report'), { kind: 'text', text: '# Sharding analysis\n\nbody' });
  assert.deepEqual(outputOf({ markdown: '# R' }, 'report'), { kind: 'text', text: '# R' });
});

test('outputOf: nothing to open', () => {
  for (const r of [null, undefined, '', {}, { applied: true }, 42]) {
    const o = outputOf(r, 'generating the report');
    assert.equal(o.kind, 'none');
    if (o.kind === 'none') assert.match(o.message, /generating the report finished but returned nothing to open/);
  }
});

test('commandErrorMessage: a command the server does not know', () => {
  const fromThisServer = { code: -32602, message: "unknown command 'shardlens.generateReport'" };
  assert.ok(isUnknownCommand(fromThisServer));
  assert.equal(
    commandErrorMessage('shardlens.generateReport', fromThisServer, '0.1.0'),
    "Shardlens: this shardlens server (0.1.0) does not provide 'shardlens.generateReport' yet. Update shardlens, or set shardlens.server.path to a newer build.",
  );
  assert.match(commandErrorMessage('shardlens.exportGraph', { code: -32601, message: 'Unhandled method' }) ?? '', /does not provide 'shardlens.exportGraph' yet/);
});

test('commandErrorMessage: other failures, cancellation', () => {
  assert.equal(commandErrorMessage('shardlens.showPlan', { code: -32803, message: 'no model found in tiny.py' }), 'Shardlens: shardlens.showPlan failed: no model found in tiny.py');
  assert.equal(commandErrorMessage('shardlens.showPlan', new Error('connection closed')), 'Shardlens: shardlens.showPlan failed: connection closed');
  assert.equal(commandErrorMessage('shardlens.showPlan', 'boom'), 'Shardlens: shardlens.showPlan failed: boom');
  assert.equal(commandErrorMessage('shardlens.showPlan', { code: -32800, message: 'cancelled' }), undefined);
  assert.equal(commandErrorMessage('x', { code: -32603, message: '' }), 'Shardlens: x failed: no reason given');
});

test('advertisedCommands and serverVersion from the initialize result', () => {
  const init = {
    capabilities: { executeCommandProvider: { commands: ['shardlens.showPlan', 'shardlens.setMeshes', 3] } },
    serverInfo: { name: 'shardlens', version: '0.1.0' },
  };
  assert.deepEqual(advertisedCommands(init), ['shardlens.showPlan', 'shardlens.setMeshes']);
  assert.equal(serverVersion(init), '0.1.0');
  assert.equal(advertisedCommands({ capabilities: {} }), undefined);
  assert.equal(advertisedCommands(undefined), undefined);
  assert.equal(serverVersion({}), undefined);
});

test('insertMessage: silent when applied', () => {
  assert.equal(insertMessage({ applied: true }, 'Insert load_shard_spec()'), undefined);
  assert.match(insertMessage({ applied: false }, 'Insert load_shard_spec()') ?? '', /^Shardlens: Insert load_shard_spec\(\) was not applied/);
  assert.ok(insertMessage(null, 'x'));
});
