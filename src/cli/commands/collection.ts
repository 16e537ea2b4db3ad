import { Command } from 'commander';
import type { TableDef } from '../../schema/catalog.js';
import type { Context } from '../context.js';
import { defineAdd } from './add.js';
import { defineDescribe } from './describe.js';
import { defineGet } from './get.js';
import { defineList } from './list.js';
import { defineRemove } from './remove.js';
import { collectionDescription, examples, titleField } from './shared.js';
import { defineUpdate } from './update.js';

/** Commands another engineer's module adds per collection (import, export). */
export type CollectionExtension = (ctx: Context, table: TableDef) => Command;

/** `catalog <collection>` with its verbs, generated from the table description. */
export function defineCollection(ctx: Context, table: TableDef, extensions: CollectionExtension[] = []): Command {
  const cmd = new Command(table.name).description(collectionDescription(table));
  for (const define of [defineList, defineGet, defineAdd, defineUpdate, defineRemove, defineDescribe, ...extensions]) {
    cmd.addCommand(define(ctx, table));
  }
  const title = titleField(table);
  return examples(cmd, [
    `catalog ${table.name} list --where '${title}~*love*' --order ${title} --limit 20`,
    `catalog ${table.name} add ${title}='Example'`,
    `catalog ${table.name} export ${table.name}.csv`,
  ]);
}
