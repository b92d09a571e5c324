import * as assert from 'node:assert/strict';
import { test } from 'node:test';

import { explicitValue, keysDroppedSinceStart, meshesTarget, SERVER_KEYS, ServerKey, settingValue, toServerSettings } from '../settings';

const from = (values: Partial<Record<ServerKey, unknown>>) => (key: ServerKey) => values[key];

test('explicitValue: folder over workspace over user; the default is not a value', () => {
  assert.equal(explicitValue({ defaultValue: 'a' }), undefined);
  assert.equal(explicitValue({ defaultValue: 'a', globalValue: 'b' }), 'b');
  assert.equal(explicitValue({ globalValue: 'b', workspaceValue: 'c' }), 'c');
  assert.equal(explicitValue({ globalValue: 'b', workspaceValue: 'c', workspaceFolderValue: 'd' }), 'd');
  assert.equal(explicitValue({ globalValue: null as unknown as string }), undefined);
  assert.equal(explicitValue(undefined), undefined);
});

test('toServerSettings: nothing set sends nothing (pyproject.toml still applies)', () => {
  assert.deepEqual(toServerSettings(from({})), { settings: {}, problems: [] });
});

test('toServerSettings: every server setting, under the server names', () => {
  const r = toServerSettings(
    from({ meshes: ['t3k', ' 8x4'], strategy: 'tensor', batch: 4, seq: 128, inputs: [' input_ids=1x128:int64', 't=1', 'x=1,3,64,64'], phase: 'prefill', dtype: 'bfp8', hardware: 'blackhole', model: ' GPT(GPTConfig()) ',
           pythonPath: [' src ', ''], allowExecution: true, exactGraph: false, python: ' /usr/bin/python3 ', memoryBudgetMiB: 512 }),
  );
  assert.deepEqual(r.problems, []);
  assert.deepEqual(r.settings, {
    meshes: ['t3k', '8x4'],
    strategy: 'tensor',
    batch: 4,
    seq: 128,
    inputs: ['input_ids=1x128:int64', 't=1', 'x=1,3,64,64'],
    phase: 'prefill',
    dtype: 'bfp8',
    hardware: 'blackhole',
    model: 'GPT(GPTConfig())',
    pythonPath: ['src'],
    allowExecution: true,
    exactGraph: false,
    python: '/usr/bin/python3',
    memoryBudgetMiB: 512,
  });
  assert.deepEqual(Object.keys(r.settings).sort(), [...SERVER_KEYS].sort());
});

test('toServerSettings: inputs must be NAME=SHAPE[:DTYPE]', () => {
  const r = toServerSettings(from({ inputs: ['x=1x'] }));
  assert.deepEqual(r.settings, {});
  assert.equal(r.problems.length, 1);
  assert.match(r.problems[0], /shardlens\.inputs must be a list of NAME=SHAPE\[:DTYPE\]/);
});

test('toServerSettings: a memory budget must be a positive integer; pythonPath a list of folders', () => {
  assert.deepEqual(toServerSettings(from({ memoryBudgetMiB: 0, pythonPath: 3 })).problems, [
    'shardlens.memoryBudgetMiB must be a positive integer, not 0',
    'shardlens.pythonPath must be a list of folders, not 3',
  ]);
});

test('settingValue: the memory budget only from the user settings (a repository cannot raise it)', () => {
  assert.equal(settingValue('memoryBudgetMiB', { workspaceValue: 100000 }, true), undefined);
  assert.equal(settingValue('memoryBudgetMiB', { globalValue: 512, workspaceValue: 100000 }, true), 512);
  assert.equal(settingValue('memoryBudgetMiB', { globalValue: 512 }, false), undefined);
});

test('toServerSettings: a single mesh string becomes a list; an empty model is left out', () => {
  assert.deepEqual(toServerSettings(from({ meshes: 'galaxy', model: '  ' })).settings, { meshes: ['galaxy'] });
});

test('toServerSettings: invalid values are reported and left out, valid ones kept', () => {
  const r = toServerSettings(
    from({ meshes: ['1x8', 'tk3'], strategy: 'pipeline', batch: 0, seq: 2.5, phase: 'train', dtype: 'fp16', hardware: 'grayskull', model: 3 }),
  );
  assert.deepEqual(r.settings, {});
  assert.equal(r.problems.length, 8);
  assert.match(r.problems[0], /^shardlens\.meshes: mesh 'tk3' is not understood/);
  assert.ok(r.problems.includes('shardlens.strategy must be auto|tensor, not "pipeline"'));
  assert.ok(r.problems.includes('shardlens.batch must be a positive integer, not 0'));
  assert.ok(r.problems.includes('shardlens.seq must be a positive integer, not 2.5'));
  assert.ok(r.problems.includes('shardlens.phase must be prefill|decode, not "train"'));
  assert.ok(r.problems.includes('shardlens.dtype must be bf16|fp32|bfp8, not "fp16"'));
  assert.ok(r.problems.includes('shardlens.hardware must be wormhole|blackhole, not "grayskull"'));
  assert.ok(r.problems.includes('shardlens.model must be a string, not 3'));

  const mixed = toServerSettings(from({ meshes: [], batch: 2, seq: '5' }));
  assert.deepEqual(mixed.settings, { batch: 2 });
  assert.deepEqual(mixed.problems, ['shardlens.meshes must not be empty', 'shardlens.seq must be a positive integer, not "5"']);
  assert.deepEqual(toServerSettings(from({ meshes: [8] })).problems, ['shardlens.meshes: entries must be strings like "1x8" or "t3k", not 8']);
  assert.deepEqual(toServerSettings(from({ meshes: { a: 1 } })).problems, ['shardlens.meshes must be a list of meshes like ["1x8"], not {"a":1}']);
});

test('settingValue: execution settings only from the user settings, and not in an untrusted workspace', () => {
  const everywhere = { globalValue: true, workspaceValue: false, workspaceFolderValue: false };
  assert.equal(settingValue('allowExecution', everywhere, true), true);
  assert.equal(settingValue('allowExecution', { workspaceValue: true }, true), undefined, "a workspace's value is not the user's");
  assert.equal(settingValue('exactGraph', { workspaceFolderValue: true }, true), undefined);
  assert.equal(settingValue('python', { workspaceValue: './venv/bin/python3' }, true), undefined);
  for (const key of ['allowExecution', 'exactGraph', 'python'] as const)
    assert.equal(settingValue(key, { globalValue: key === 'python' ? '/usr/bin/python3' : true }, false), undefined, `${key} untrusted`);
  // Analysis settings: the most specific scope, trusted or not (VS Code applies them either way).
  assert.deepEqual(settingValue('meshes', { globalValue: ['1x8'], workspaceValue: ['t3k'] }, false), ['t3k']);
  const mapped = toServerSettings((key) => settingValue(key, { workspaceValue: key === 'meshes' ? ['t3k'] : true }, true));
  assert.deepEqual(mapped.settings, { meshes: ['t3k'] }, 'nothing execution-related from the workspace');
  assert.deepEqual(toServerSettings(from({ allowExecution: 'yes' })).problems, ['shardlens.allowExecution must be true or false, not "yes"']);
});

test('keysDroppedSinceStart: keys the server was started with that are now unset', () => {
  assert.deepEqual(keysDroppedSinceStart({ meshes: ['t3k'], batch: 2 }, { batch: 4 }), ['meshes']);
  assert.deepEqual(keysDroppedSinceStart({ meshes: ['t3k'] }, { meshes: ['8x4'], seq: 5 }), []);
  assert.deepEqual(keysDroppedSinceStart({}, {}), []);
});

test('meshesTarget: folder when set there, else workspace when open, else user', () => {
  assert.equal(meshesTarget({ workspaceFolderValue: ['1x8'] }, true, true), 'workspaceFolder');
  assert.equal(meshesTarget({ workspaceFolderValue: ['1x8'] }, true, false), 'workspace');
  assert.equal(meshesTarget({ globalValue: ['1x8'] }, true, true), 'workspace');
  assert.equal(meshesTarget({ globalValue: ['1x8'] }, false, false), 'global');
  assert.equal(meshesTarget(undefined, false, false), 'global');
});
