import * as assert from 'node:assert/strict';
import { test } from 'node:test';

import { busyStatus, errorStatus, formatBytes, formatMicros, ICON, planStatus } from '../status';

// The shape of `shardlens plan --format json` (trimmed).
const mesh = (shape: [number, number], collectives: number, extra: Record<string, unknown> = {}) => ({
  shape,
  axes: ['batch', 'model'],
  memory_fallback: false,
  totals: { collectives, bytes: 297216, est_time_us: 2802.8, ccl_us: 1480.7 },
  ...extra,
});

test('planStatus: first mesh and its collective total', () => {
  const v = planStatus({ model: 'GPT', meshes: [mesh([1, 8], 49)] }, ['1x8']);
  assert.equal(v.kind, 'plan');
  assert.equal(v.text, `${ICON} 1x8 · 49 collectives`);
  assert.match(v.tooltip, /^Shardlens plan for GPT \(per forward\):\n {2}1x8: 49 collectives, 290\.3 KiB, est\. 2\.80 ms\nClick to choose the mesh\.$/);
});

test('planStatus: several meshes; singular; memory fallback in the tooltip', () => {
  const two = planStatus({ meshes: [mesh([1, 8], 1), mesh([8, 4], 3, { memory_fallback: true })] });
  assert.equal(two.text, `${ICON} 1x8 · 1 collective (+1 mesh)`);
  assert.match(two.tooltip, /8x4: 3 collectives, 290\.3 KiB, est\. 2\.80 ms, memory fallback/);
  const three = planStatus({ meshes: [mesh([1, 2], 0), mesh([1, 8], 3), mesh([8, 4], 3)] });
  assert.equal(three.text, `${ICON} 1x2 · 0 collectives (+2 meshes)`);
});

test('planStatus: no plan, or a plan without totals', () => {
  for (const p of [null, undefined, 'x', {}, { meshes: [] }, { meshes: [{ shape: [1, 8] }] }]) {
    const v = planStatus(p, ['t3k']);
    assert.equal(v.kind, 'none');
    assert.equal(v.text, `${ICON} t3k · no plan`);
  }
  assert.equal(planStatus({}).text, `${ICON} 1x8 · no plan`);
});

test('busy and error states name the configured mesh', () => {
  assert.equal(busyStatus(['galaxy']).text, '$(sync~spin) galaxy');
  const e = errorStatus('no model found\nsecond line', ['8x4']);
  assert.equal(e.kind, 'error');
  assert.equal(e.text, '$(warning) 8x4 · no plan');
  assert.match(e.tooltip, /^Shardlens: no model found\n/);
});

test('formatBytes and formatMicros', () => {
  assert.equal(formatBytes(0), '0 B');
  assert.equal(formatBytes(1023), '1023 B');
  assert.equal(formatBytes(8192), '8.0 KiB');
  assert.equal(formatBytes(8 * 1024 * 1024), '8.0 MiB');
  assert.equal(formatBytes(3 * 1024 ** 3), '3.0 GiB');
  assert.equal(formatMicros(121.06), '121.1 µs');
  assert.equal(formatMicros(2802.8), '2.80 ms');
  assert.equal(formatMicros(1.5e6), '1.50 s');
});
