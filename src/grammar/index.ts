/** The request grammar: typed model, parser (server side), compiler (client side), headers. */
export type * from './types.js';
export { GrammarError, aggregatesNotAllowed } from './errors.js';
export { OPERATORS, IS_VALUES, operatorInfo, isFilterOp, type OperatorInfo, type OperatorValueKind } from './operators.js';
export {
  parseQuery, parseSelect, parseOrder, parseFilter, parseLogicTree, parseColumns, parseOnConflict, parseFieldPath,
  readInteger, isReservedKey,
} from './parse.js';
export {
  compileQuery, compilePairs, compileSelect, compileOrder, compileCondition, compileWhere, compileColumns, compileName, compileField,
} from './compile.js';
export { parsePrefer, renderPrefer, renderPreferenceApplied } from './prefer.js';
export { parseRange, renderRange, formatContentRange, parseContentRange } from './range.js';
export { parseAccept, parseMediaType, negotiate, MEDIA } from './media.js';
export { parseWhereExpr } from './expr.js';
export { splitQuery, decodeComponent, encodeComponent, type RawParam } from './query-string.js';
