// The status-bar item's text and tooltip from the server's `shardlens.showPlan` result (the
// `shardlens plan --format json` object). No `vscode` import: unit-tested under plain Node.

export const ICON = '$(circuit-board)';

export interface StatusView {
  text: string;
  tooltip: string;
  kind: 'plan' | 'busy' | 'none' | 'error';
}

interface MeshTotals {
  shape: [number, number] | undefined;
  collectives: number | undefined;
  bytes: number | undefined;
  timeUs: number | undefined;
  memoryFallback: boolean;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

function meshTotals(m: unknown): MeshTotals {
  const o = isObject(m) ? m : {};
  const shape = Array.isArray(o.shape) && o.shape.length === 2 && o.shape.every((x) => num(x) !== undefined)
    ? ([o.shape[0], o.shape[1]] as [number, number])
    : undefined;
  const totals = isObject(o.totals) ? o.totals : {};
  return {
    shape,
    collectives: num(totals.collectives),
    bytes: num(totals.bytes),
    timeUs: num(totals.est_time_us),
    memoryFallback: o.memory_fallback === true,
  };
}

// 1024-based, one decimal from KiB up, like the server's lenses ("8.0 MiB").
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = bytes;
  let i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) {
    v /= 1024;
    ++i;
  }
  return i === 0 ? `${Math.round(v)} B` : `${v.toFixed(1)} ${units[i]}`;
}

export function formatMicros(us: number): string {
  if (us >= 1e6) return `${(us / 1e6).toFixed(2)} s`;
  if (us >= 1e3) return `${(us / 1e3).toFixed(2)} ms`;
  return `${us.toFixed(1)} µs`;
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

function shapeLabel(shape: [number, number] | undefined, fallback: string): string {
  return shape ? `${shape[0]}x${shape[1]}` : fallback;
}

// `configuredMeshes`: what the settings say, shown when the plan has no mesh to name.
export function planStatus(plan: unknown, configuredMeshes: readonly string[] = []): StatusView {
  const fallbackMesh = configuredMeshes[0] ?? '1x8';
  const meshes = isObject(plan) && Array.isArray(plan.meshes) ? plan.meshes.map(meshTotals) : [];
  if (meshes.length === 0 || meshes[0].collectives === undefined) {
    return {
      text: `${ICON} ${fallbackMesh} · no plan`,
      tooltip: 'Shardlens: the server returned no plan for this file.\nClick to choose the mesh.',
      kind: 'none',
    };
  }
  const first = meshes[0];
  let text = `${ICON} ${shapeLabel(first.shape, fallbackMesh)} · ${plural(first.collectives ?? 0, 'collective')}`;
  if (meshes.length > 1) text += ` (+${meshes.length - 1} ${meshes.length === 2 ? 'mesh' : 'meshes'})`;

  const model = isObject(plan) && typeof plan.model === 'string' && plan.model ? plan.model : undefined;
  const lines = [`Shardlens plan${model ? ` for ${model}` : ''} (per forward):`];
  for (const m of meshes) {
    const parts = [plural(m.collectives ?? 0, 'collective')];
    if (m.bytes !== undefined) parts.push(formatBytes(m.bytes));
    if (m.timeUs !== undefined) parts.push(`est. ${formatMicros(m.timeUs)}`);
    if (m.memoryFallback) parts.push('memory fallback');
    lines.push(`  ${shapeLabel(m.shape, '?')}: ${parts.join(', ')}`);
  }
  lines.push('Click to choose the mesh.');
  return { text, tooltip: lines.join('\n'), kind: 'plan' };
}

export function busyStatus(configuredMeshes: readonly string[] = []): StatusView {
  return {
    text: `$(sync~spin) ${configuredMeshes[0] ?? '1x8'}`,
    tooltip: 'Shardlens: planning…\nClick to choose the mesh.',
    kind: 'busy',
  };
}

// `message`: why there is no plan (the server's error text, or the client's).
export function errorStatus(message: string, configuredMeshes: readonly string[] = []): StatusView {
  const short = message.split('\n')[0];
  return {
    text: `$(warning) ${configuredMeshes[0] ?? '1x8'} · no plan`,
    tooltip: `Shardlens: ${short}\nClick to choose the mesh.`,
    kind: 'error',
  };
}
