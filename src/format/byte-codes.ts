/**
 * The one home of the byte values the CSV and JSON byte readers compare against (the tokenizer in
 * csv-tokens.ts, the codecs' jsonb check, the JSON depth check and splitter, the formula guard):
 * named once here instead of `const QUOTE = 34` in every reader.
 */

/** `"` */
export const QUOTE = 34;
/** `,` */
export const COMMA = 44;
/** `\n` */
export const LF = 10;
/** `\r` */
export const CR = 13;
/** `\` */
export const BACKSLASH = 92;
