'use strict';
// $/progress: an analysis that runs longer than the threshold shows as work done progress — the
// token created by window/workDoneProgress/create first, then begin, then end (the threshold is
// 0 here so that any analysis qualifies).

const test = require('node:test');
const assert = require('node:assert/strict');
const { withSession } = require('./lib/session');
const { testModel } = require('./lib/fixtures');

test('a long analysis reports begin and end on a token the client created', async () => {
  await withSession({ args: ['--progress-after-ms', '0'], initializationOptions: { meshes: ['1x8'] } }, async (s) => {
    const events = [];
    s.conn.onUnhandledProgress((p) => events.push(p));
    const doc = await s.open(testModel('deepseek_v3.py'));  // ~0.2 s of analysis: begin arrives first
    await s.diagnostics(doc, () => true, { since: 0 });
    const deadline = Date.now() + 10000;
    while (!events.some((e) => e.value.kind === 'end') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const created = s.serverRequests.filter((r) => r.method === 'window/workDoneProgress/create').map((r) => r.params.token);
    assert.ok(created.length >= 1, 'the server created a progress token');
    const kinds = events.filter((e) => e.token === created[0]).map((e) => e.value.kind);
    assert.deepEqual(kinds, ['begin', 'end'], `progress on ${created[0]}: ${JSON.stringify(events)}`);
    for (const e of events) assert.ok(created.includes(e.token), `progress on a token the client created: ${e.token}`);
  });
});
