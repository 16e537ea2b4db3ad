import type { Row, RowWriter, WriterOptions } from './types.js';

const STRINGIFY = { lineWidth: 0, minContentWidth: 0 } as const;

/** YAML: a sequence streamed one item at a time (or one mapping with `single`). Loads `yaml` on first use. */
export async function yamlWriter(opts: WriterOptions): Promise<RowWriter> {
  const { stringify } = await import('yaml');
  let count = 0;
  return {
    async write(row: Row) {
      count++;
      await opts.out.write(stringify(opts.single ? row : [row], STRINGIFY));
    },
    async end() {
      if (count === 0) await opts.out.write(opts.single ? '{}\n' : '[]\n');
    },
  };
}
