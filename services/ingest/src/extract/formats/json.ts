import { permanent, type Block } from '../types.js';

/** JSON as "path: value" lines, one section per top-level key so chunks keep their place. */
export function extractJson(text: string): Block[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw permanent(`The JSON file is not valid JSON: ${(err as Error).message}`);
  }
  const blocks: Block[] = [];
  const walk = (node: unknown, path: string) => {
    if (node !== null && typeof node === 'object') {
      const entries = Array.isArray(node)
        ? node.map((v, i) => [`${path}[${i}]`, v] as const)
        : Object.entries(node).map(([k, v]) => [path ? `${path}.${k}` : k, v] as const);
      for (const [p, v] of entries) walk(v, p);
    } else if (node !== null && node !== undefined && String(node).trim() !== '') {
      blocks.push({ kind: 'paragraph', text: path ? `${path}: ${String(node)}` : String(node) });
    }
  };
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    for (const [key, child] of Object.entries(value)) {
      blocks.push({ kind: 'heading', level: 1, text: key });
      walk(child, key);
    }
  } else walk(value, '');
  return blocks;
}
