import * as assert from 'node:assert/strict';
import { test } from 'node:test';

import { meshPicks, parseMesh, parseMeshList, PRESETS, sameMeshes } from '../mesh';

test('parseMesh: RxC shapes', () => {
  assert.deepEqual(parseMesh('1x8'), { ok: true, mesh: { rows: 1, cols: 8 } });
  assert.deepEqual(parseMesh(' 8X4 '), { ok: true, mesh: { rows: 8, cols: 4 } });
  assert.deepEqual(parseMesh('1024x1'), { ok: true, mesh: { rows: 1024, cols: 1 } });
});

test('parseMesh: presets, case-insensitive, with their shapes', () => {
  assert.deepEqual(parseMesh('t3k'), { ok: true, mesh: { rows: 1, cols: 8, preset: 't3k' } });
  assert.deepEqual(parseMesh('Galaxy'), { ok: true, mesh: { rows: 8, cols: 4, preset: 'galaxy' } });
  assert.deepEqual(parseMesh('n300'), { ok: true, mesh: { rows: 1, cols: 2, preset: 'n300' } });
  assert.deepEqual(PRESETS['galaxy-4x8'], [4, 8]);
});

test('parseMesh: rejects what the server rejects', () => {
  for (const bad of ['', '8', 'x8', '1x', '1x8x2', '12345x1', '-1x8', '1 x 8', 'tk3', '1.5x2']) {
    const r = parseMesh(bad);
    assert.equal(r.ok, false, bad);
    if (!r.ok) assert.match(r.error, /not understood; accepted: RxC/);
  }
  const zero = parseMesh('0x8');
  assert.equal(zero.ok, false);
  if (!zero.ok) assert.match(zero.error, /empty axis/);
});

test('parseMeshList: commas and spaces, duplicates dropped, first error wins', () => {
  assert.deepEqual(parseMeshList('1x8, 8x4'), { ok: true, meshes: ['1x8', '8x4'] });
  assert.deepEqual(parseMeshList('t3k galaxy t3k'), { ok: true, meshes: ['t3k', 'galaxy'] });
  const empty = parseMeshList('  , ');
  assert.equal(empty.ok, false);
  const bad = parseMeshList('1x8, 2y3');
  assert.equal(bad.ok, false);
  if (!bad.ok) assert.match(bad.error, /'2y3'/);
});

test('meshPicks: n300, t3k, galaxy and a custom entry; the current one is marked', () => {
  const picks = meshPicks(['t3k']);
  assert.deepEqual(picks.map((p) => p.label), ['n300', 't3k', 'galaxy', 'Custom…']);
  assert.deepEqual(picks.map((p) => p.meshes), [['1x2'], ['1x8'], ['8x4'], undefined]);
  assert.match(picks[1].description, /current/);
  assert.doesNotMatch(picks[0].description, /current/);
  assert.ok(picks.every((p) => !p.meshes || p.meshes.every((m) => parseMesh(m).ok)));
  assert.ok(!meshPicks(undefined).some((p) => p.description.includes('current')));
});

test('sameMeshes compares shapes', () => {
  assert.ok(sameMeshes(['t3k'], ['1x8']));
  assert.ok(sameMeshes(['galaxy', 'n300'], ['8x4', '1x2']));
  assert.ok(!sameMeshes(['1x8'], ['8x1']));
  assert.ok(!sameMeshes(['1x8'], ['1x8', '8x4']));
});
