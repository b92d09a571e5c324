// Mesh names as `shardlens` accepts them (analysis/plan/target.cpp: RxC or a system preset), and the
// choices `Shardlens: Select mesh` offers. No `vscode` import: unit-tested under plain Node.

export interface Mesh {
  rows: number;
  cols: number;
  preset?: string; // the preset name when the text named one
}

// The server's presets (lower case), with their shapes.
export const PRESETS: Readonly<Record<string, readonly [number, number]>> = {
  n150: [1, 1],
  p150: [1, 1],
  n300: [1, 2],
  p300: [1, 2],
  quietbox: [1, 4],
  qb2: [1, 4],
  t3k: [1, 8],
  't3k-1x8': [1, 8],
  't3k-2x4': [2, 4],
  galaxy: [8, 4],
  'galaxy-4x8': [4, 8],
};

export const ACCEPTED =
  'RxC with positive integers (rows = "batch" axis, columns = "model" axis), e.g. 1x8 or 8x4, or a preset: ' +
  Object.keys(PRESETS).join(', ');

export type MeshParse = { ok: true; mesh: Mesh } | { ok: false; error: string };

// Same rules as the server's parse_mesh: case-insensitive preset, or 1-4 digits 'x' 1-4 digits, both > 0.
export function parseMesh(text: string): MeshParse {
  const t = text.trim().toLowerCase();
  const preset = PRESETS[t];
  if (preset) return { ok: true, mesh: { rows: preset[0], cols: preset[1], preset: t } };
  const m = /^(\d{1,4})x(\d{1,4})$/.exec(t);
  if (!m) return { ok: false, error: `mesh '${text}' is not understood; accepted: ${ACCEPTED}` };
  const rows = Number(m[1]);
  const cols = Number(m[2]);
  if (rows <= 0 || cols <= 0) return { ok: false, error: `mesh '${text}' has an empty axis; accepted: ${ACCEPTED}` };
  return { ok: true, mesh: { rows, cols } };
}

export function shapeText(rows: number, cols: number): string {
  return `${rows}x${cols}`;
}

export type MeshListParse = { ok: true; meshes: string[] } | { ok: false; error: string };

// What the custom entry of the mesh picker accepts: one or more meshes separated by commas or spaces.
export function parseMeshList(text: string): MeshListParse {
  const parts = text
    .split(/[,\s]+/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  if (parts.length === 0) return { ok: false, error: `enter a mesh: ${ACCEPTED}` };
  const meshes: string[] = [];
  for (const p of parts) {
    const r = parseMesh(p);
    if (!r.ok) return r;
    if (!meshes.includes(p)) meshes.push(p);
  }
  return { ok: true, meshes };
}

export interface MeshPick {
  label: string; // what the quick pick shows
  description: string;
  detail?: string;
  meshes?: string[]; // the value written to `shardlens.meshes`; absent for the custom entry
}

// The picker: the systems people have, then a free-form entry.
export function meshPicks(current: readonly string[] | undefined): MeshPick[] {
  const picks: MeshPick[] = [
    { label: 'n300', description: '1x2 · 2 devices', detail: 'n300 / p300 card: two chips in a line', meshes: ['1x2'] },
    { label: 't3k', description: '1x8 · 8 devices', detail: 'T3000 (LoudBox): eight Wormhole chips, ring on the model axis', meshes: ['1x8'] },
    { label: 'galaxy', description: '8x4 · 32 devices', detail: 'Galaxy: 32 chips, rings on both axes', meshes: ['8x4'] },
    { label: 'Custom…', description: 'RxC, a preset, or several separated by commas (e.g. 1x8, 8x4)' },
  ];
  const now = current && current.length ? current.join(', ') : undefined;
  for (const p of picks) {
    if (p.meshes && now !== undefined && sameMeshes(p.meshes, current ?? [])) p.description += ' · current';
  }
  return picks;
}

// Two mesh lists name the same shapes in the same order ("t3k" equals "1x8").
export function sameMeshes(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; ++i) {
    const x = parseMesh(a[i]);
    const y = parseMesh(b[i]);
    if (!x.ok || !y.ok) {
      if (a[i].trim().toLowerCase() !== b[i].trim().toLowerCase()) return false;
      continue;
    }
    if (x.mesh.rows !== y.mesh.rows || x.mesh.cols !== y.mesh.cols) return false;
  }
  return true;
}
