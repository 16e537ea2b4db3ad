import { Command } from 'commander';
import { FORMATS } from '../../format/types.js';
import { COLLECTIONS, RELATIONSHIPS, TABLES } from '../../schema/catalog.js';
import { type CommandNode, commandTree } from '../command-tree.js';
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import { examples } from './shared.js';

/** Shells a completion script is made for. */
export const SHELLS = ['bash', 'zsh', 'fish', 'powershell'] as const;
export type Shell = (typeof SHELLS)[number];

/** One flag as completion sees it. */
export interface FlagSpec {
  names: string[];
  takesValue: boolean;
}

/** One command (and its subcommands) as completion sees it. */
export interface CommandSpec {
  name: string;
  aliases: string[];
  flags: FlagSpec[];
  subcommands: CommandSpec[];
}

/** Everything the generated script knows: the command tree and, per collection, its fields. */
export interface CompletionSpec {
  root: CommandSpec;
  collections: string[];
  fields: Record<string, string[]>;
  /** Boolean fields per collection (FIELD=true|false). */
  booleans: Record<string, string[]>;
  /** Collections each collection can embed (for --select). */
  embeds: Record<string, string[]>;
}

/** Flags whose value is a field name (or a comma-separated list of them). */
const FIELD_FLAGS = ['--where', '-w', '--or', '--select', '-s', '--order', '--on-conflict'];
/** Flags whose value is a file or directory. */
const FILE_FLAGS = ['--file', '-f', '--rejects', '--data'];
/** Fixed value lists. */
const VALUE_LISTS: Record<string, readonly string[]> = {
  '-o': FORMATS,
  '--output': FORMATS,
  '--format': ['csv', 'json', 'ndjson', 'yaml'],
  '--role': ['reader', 'editor', 'admin'],
};

/** Verbs whose words are FIELD=VALUE pairs (offered as `field=`). */
const SETTING_VERBS = ['add', 'update'];
/** Verbs whose word is a file. */
const FILE_VERBS = ['import', 'export'];
/** Fields the service sets, not offered to add or update. */
const SERVICE_FIELDS = ['created', 'updated'];

/** What a command's tree node tells completion: names, aliases and flags. */
function specOf(node: CommandNode): CommandSpec {
  return {
    name: node.name,
    aliases: node.aliases,
    flags: node.options.map((o) => ({ names: o.names, takesValue: o.takesValue })),
    subcommands: node.subcommands.map(specOf),
  };
}

/** The visible commands and flags of a commander tree (read by commandTree, as the man page is). */
export function commandSpec(cmd: Command): CommandSpec {
  return specOf(commandTree(cmd));
}

/** The completion spec of a program: its tree, plus field names from the schema (so completion needs no network). */
export function completionSpec(program: Command): CompletionSpec {
  const fields: Record<string, string[]> = {};
  const booleans: Record<string, string[]> = {};
  const embeds: Record<string, string[]> = {};
  for (const t of TABLES) {
    fields[t.name] = t.columns.map((c) => c.name);
    booleans[t.name] = t.columns.filter((c) => c.type === 'boolean').map((c) => c.name);
    embeds[t.name] = [...new Set(RELATIONSHIPS.filter((r) => r.from === t.name).map((r) => r.to))];
  }
  return { root: commandSpec(program), collections: [...COLLECTIONS], fields, booleans, embeds };
}

// ---------------------------------------------------------------------------------------------
// The shared POSIX part: one candidates function that bash, zsh and fish (through sh) all call.

const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
const words = (xs: readonly string[]) => xs.map(q).join(' ');

/** What the script's functions are made of, worked out from the spec once. */
interface ScriptParts {
  spec: CompletionSpec;
  /** Every flag that takes a value, in any command. */
  valueFlags: string[];
  rootFlags: string[];
  /** Below the root the global flags still apply, but --version does not and --help is the command's own. */
  globals: string[];
  top: CommandSpec[];
  collections: CommandSpec[];
  /** Top-level commands that are not collections (serve, schema, token…). */
  others: CommandSpec[];
  verbs: CommandSpec[];
  /** Long flags of each verb, over every collection. */
  verbFlags: Map<string, Set<string>>;
  /** Each verb's name and its aliases (`list`: list, ls). */
  verbNames: Map<string, string[]>;
  /** SETTING_VERBS and FILE_VERBS with their aliases. */
  settingVerbs: string[];
  fileVerbs: string[];
}

const flagNames = (c: CommandSpec) => c.flags.flatMap((f) => f.names.filter((n) => n.startsWith('--')));

function scriptParts(spec: CompletionSpec): ScriptParts {
  const all = (c: CommandSpec): CommandSpec[] => [c, ...c.subcommands.flatMap(all)];
  const valueFlags = [...new Set(all(spec.root).flatMap((c) => c.flags.filter((f) => f.takesValue).flatMap((f) => f.names)))].sort();
  const rootFlags = flagNames(spec.root);
  const globals = rootFlags.filter((n) => n !== '--version' && n !== '--help');
  const top = spec.root.subcommands;
  const collections = top.filter((c) => spec.collections.includes(c.name));
  const others = top.filter((c) => !spec.collections.includes(c.name));
  const verbs = collections[0]?.subcommands ?? [];
  const verbFlags = new Map<string, Set<string>>();
  for (const coll of collections) for (const v of coll.subcommands) for (const f of flagNames(v)) (verbFlags.get(v.name) ?? verbFlags.set(v.name, new Set()).get(v.name)!).add(f);
  const verbNames = new Map(verbs.map((v) => [v.name, [v.name, ...v.aliases]]));
  const named = (names: string[]) => names.flatMap((n) => verbNames.get(n) ?? [n]);
  return { spec, valueFlags, rootFlags, globals, top, collections, others, verbs, verbFlags, verbNames, settingVerbs: named(SETTING_VERBS), fileVerbs: named(FILE_VERBS) };
}

/** What the word after a command that is not a collection completes to, when it is not a flag: its subcommands, a shell, a directory. */
function positional(c: CommandSpec): { mode: 'words'; words: readonly string[] } | { mode: 'files' } | null {
  if (c.subcommands.length) return { mode: 'words', words: c.subcommands.map((s) => s.name) };
  if (c.name === 'completion') return { mode: 'words', words: SHELLS };
  if (c.name === 'seed') return { mode: 'files' };
  return null;
}

/** One sh function definition, followed by a blank line. */
const shFunction = (name: string, body: string[]): string[] => [`${name}() {`, ...body.map((l) => `  ${l}`), '}', ''];

/** The lookup functions: word filtering and what the schema knows (fields, embeds, booleans). */
function lookupFunctions({ spec, valueFlags }: ScriptParts): string[] {
  const bools = Object.entries(spec.booleans).flatMap(([t, fs]) => fs.map((f) => `${t}:${f}`));
  return [
    ...shFunction('_catalog_filter', [
      '# _catalog_filter PREFIX CUR WORD...: the words that start with CUR, each after PREFIX',
      '_cf_pre=$1; _cf_cur=$2; shift 2',
      'for _cf_w in "$@"; do case $_cf_w in "$_cf_cur"*) printf \'%s%s\\n\' "$_cf_pre" "$_cf_w" ;; esac; done',
    ]),
    ...shFunction('_catalog_takes_value', [`case $1 in ${valueFlags.join('|') || '--'}) return 0 ;; esac`, 'return 1']),
    ...shFunction('_catalog_fields', [
      'case $1 in',
      ...Object.entries(spec.fields).map(([t, fs]) => `  ${t}) printf '%s\\n' ${words(fs)} ;;`),
      'esac',
    ]),
    ...shFunction('_catalog_embeds', ['case $1 in', ...Object.entries(spec.embeds).filter(([, e]) => e.length).map(([t, e]) => `  ${t}) printf '%s\\n' ${words(e)} ;;`), 'esac']),
    ...shFunction('_catalog_is_boolean', [`case $1:$2 in ${bools.join('|') || '-'}) return 0 ;; esac`, 'return 1']),
  ];
}

/** `_catalog_values`: the values of a flag (field names, fixed lists, files), and `_catalog_verb_flags`. */
function valueFunctions({ verbFlags, verbNames }: ScriptParts): string[] {
  return [
    ...shFunction('_catalog_values', [
      '# _catalog_values FLAG COLLECTION PREFIX CUR: the values of a flag',
      'case $1 in',
      `  ${FIELD_FLAGS.join('|')})`,
      '    echo nospace',
      '    case $4 in *,*) _cv_head="${4%,*},"; _cv_last=${4##*,} ;; *) _cv_head=; _cv_last=$4 ;; esac',
      '    { _catalog_fields "$2"; case $1 in --select|-s) _catalog_embeds "$2" ;; esac; } | while IFS= read -r _cv_f; do',
      '      case $_cv_f in "$_cv_last"*) printf \'%s%s%s\\n\' "$3" "$_cv_head" "$_cv_f" ;; esac',
      '    done ;;',
      ...Object.entries(VALUE_LISTS).map(([f, vs]) => `  ${f}) echo words; _catalog_filter "$3" "$4" ${words(vs)} ;;`),
      `  ${FILE_FLAGS.join('|')}) echo files ;;`,
      '  *) echo none ;;',
      'esac',
    ]),
    ...shFunction('_catalog_verb_flags', [
      'case $1 in',
      ...[...verbFlags].map(([v, fs]) => `  ${(verbNames.get(v) ?? [v]).join('|')}) _catalog_filter '' "$2" ${words([...fs].sort())} ;;`),
      'esac',
    ]),
  ];
}

/** The `case` arms of `_catalog_command_words` for one command that is not a collection. */
function commandArms(c: CommandSpec, globals: string[]): string[] {
  const subs = c.subcommands.map((s) => s.name);
  const own = flagNames(c);
  const out = [`  ${c.name}:-*)`, '    echo words'];
  if (subs.length) {
    out.push('    case $2 in');
    for (const s of c.subcommands) out.push(`      ${s.name}) _catalog_filter '' "$3" ${words(flagNames(s))} ;;`);
    out.push(`      *) _catalog_filter '' "$3" ${words(own)} ;;`, '    esac');
  } else out.push(`    _catalog_filter '' "$3" ${words(own)}`);
  out.push(`    _catalog_filter '' "$3" ${words(globals)} ;;`);
  const next = positional(c);
  if (next?.mode === 'words') out.push(`  ${c.name}:*) if [ -z "$2" ]; then echo words; _catalog_filter '' "$3" ${words(next.words)}; else echo none; fi ;;`);
  else if (next?.mode === 'files') out.push(`  ${c.name}:*) echo files ;;`);
  return out;
}

/** `_catalog_command_words`: flags or arguments of a command that is not a collection. */
function commandWordsFunction({ others, globals, top }: ScriptParts): string[] {
  return shFunction('_catalog_command_words', [
    '# _catalog_command_words COMMAND SUB CUR: flags or arguments of a command that is not a collection',
    'case $1:$3 in',
    ...others.flatMap((c) => commandArms(c, globals)),
    `  help:*) echo words; _catalog_filter '' "$3" ${words(top.map((c) => c.name))} ;;`,
    '  *) echo none ;;',
    'esac',
  ]);
}

/** `_catalog_candidates`: finds the command, verb and current word on the line, then asks the functions above. */
function candidatesFunction({ rootFlags, top, collections, verbs, globals, settingVerbs, fileVerbs }: ScriptParts): string[] {
  return shFunction('_catalog_candidates', [
    '# _catalog_candidates CWORD WORD...: candidates for word number CWORD (0 is the command itself)',
    '_cc_cword=$1; shift',
    '_cc_i=0; _cc_cur=; _cc_prev=; _cc_cmd=; _cc_sub=; _cc_skip=0',
    'for _cc_w in "$@"; do',
    '  if [ "$_cc_i" -eq "$_cc_cword" ]; then _cc_cur=$_cc_w; break; fi',
    '  if [ "$_cc_i" -gt 0 ]; then',
    '    if [ "$_cc_skip" = 1 ]; then _cc_skip=0',
    '    else',
    '      case $_cc_w in',
    '        --*=*) ;;',
    '        -*) if _catalog_takes_value "$_cc_w"; then _cc_skip=1; fi ;;',
    '        *) if [ -z "$_cc_cmd" ]; then _cc_cmd=$_cc_w; elif [ -z "$_cc_sub" ]; then _cc_sub=$_cc_w; fi ;;',
    '      esac',
    '    fi',
    '  fi',
    '  _cc_prev=$_cc_w',
    '  _cc_i=$((_cc_i + 1))',
    'done',
    '# --flag=value: complete the value after the =',
    'case $_cc_cur in --*=*) _catalog_values "${_cc_cur%%=*}" "$_cc_cmd" "${_cc_cur%%=*}=" "${_cc_cur#*=}"; return ;; esac',
    'if [ "$_cc_skip" = 1 ]; then _catalog_values "$_cc_prev" "$_cc_cmd" \'\' "$_cc_cur"; return; fi',
    'if [ -z "$_cc_cmd" ]; then',
    '  echo words',
    `  case $_cc_cur in -*) _catalog_filter '' "$_cc_cur" ${words(rootFlags)} ;; *) _catalog_filter '' "$_cc_cur" ${words(top.map((c) => c.name))} ;; esac`,
    '  return',
    'fi',
    `case $_cc_cmd in ${collections.map((c) => c.name).join('|') || '-'}) ;; *) _catalog_command_words "$_cc_cmd" "$_cc_sub" "$_cc_cur"; return ;; esac`,
    'if [ -z "$_cc_sub" ]; then',
    '  echo words',
    `  case $_cc_cur in -*) _catalog_filter '' "$_cc_cur" --help ;; *) _catalog_filter '' "$_cc_cur" ${words(verbs.map((v) => v.name))} ;; esac`,
    '  return',
    'fi',
    'case $_cc_cur in',
    `  -*) echo words; _catalog_verb_flags "$_cc_sub" "$_cc_cur"; _catalog_filter '' "$_cc_cur" ${words(globals)} ;;`,
    '  *=*)',
    '    # FIELD=VALUE: only booleans have values worth offering',
    '    _cc_f=${_cc_cur%%=*}',
    '    if _catalog_is_boolean "$_cc_cmd" "$_cc_f"; then echo words; _catalog_filter "$_cc_f=" "${_cc_cur#*=}" true false; else echo none; fi ;;',
    '  *)',
    '    case $_cc_sub in',
    `      ${settingVerbs.join('|')})`,
    '        echo nospace',
    '        _catalog_fields "$_cc_cmd" | while IFS= read -r _cc_f; do',
    `          case $_cc_f in ${SERVICE_FIELDS.join('|')}) ;; "$_cc_cur"*) printf '%s=\\n' "$_cc_f" ;; esac`,
    '        done ;;',
    `      ${fileVerbs.join('|')}) echo files ;;`,
    '      *) echo none ;;',
    '    esac ;;',
    'esac',
  ]);
}

/**
 * The POSIX sh functions that compute candidates: `_catalog_candidates CWORD WORD...` prints a
 * mode line (`words`, `nospace`, `files` or `none`) and then one candidate per line. Only
 * portable constructs, so bash, zsh and sh (for fish) run the same code.
 */
export function posixFunctions(spec: CompletionSpec): string {
  const parts = scriptParts(spec);
  return [...lookupFunctions(parts), ...valueFunctions(parts), ...commandWordsFunction(parts), ...candidatesFunction(parts)].join('\n');
}

/** The bash script: the POSIX functions plus a wrapper that reads the line as typed (URLs and FIELD=VALUE keep their `:` and `=`). */
export function bashScript(spec: CompletionSpec): string {
  return `# catalog completion for bash. Load it with: source <(catalog completion bash)
${posixFunctions(spec)}
_catalog() {
  local -a words=()
  local cword
  if [[ -n \${COMP_LINE-} ]]; then
    # Split the line ourselves: bash's COMP_WORDS breaks words at = and : (FIELD=VALUE, URLs).
    local line=\${COMP_LINE:0:\${COMP_POINT:-\${#COMP_LINE}}}
    read -r -a words <<< "$line"
    if [[ -z $line || $line == *[[:space:]] ]]; then words+=(""); fi
    cword=$(( \${#words[@]} - 1 ))
  else
    words=("\${COMP_WORDS[@]}")
    cword=$COMP_CWORD
  fi
  local cur=\${words[cword]} out mode rest c pre=""
  out=$(_catalog_candidates "$cword" "\${words[@]}")
  mode=\${out%%$'\\n'*}
  rest=""
  [[ $out == *$'\\n'* ]] && rest=\${out#*$'\\n'}
  # Bash replaces only its own current word, which may begin after a = or : of ours.
  local bw=\${COMP_WORDS[COMP_CWORD]-}
  if [[ -n $bw && $cur == *"$bw" ]]; then pre=\${cur%"$bw"}; elif [[ -z $bw ]]; then pre=$cur; fi
  COMPREPLY=()
  case $mode in
    files)
      compopt -o filenames 2>/dev/null
      while IFS= read -r c; do COMPREPLY+=("$c"); done < <(compgen -f -- "$bw")
      ;;
    words|nospace)
      while IFS= read -r c; do [[ -n $c ]] && COMPREPLY+=("\${c#"$pre"}"); done <<< "$rest"
      [[ $mode == nospace ]] && compopt -o nospace 2>/dev/null
      ;;
  esac
  return 0
}
complete -F _catalog catalog
`;
}

/** The zsh script: the same POSIX functions under a native zsh completion function. */
export function zshScript(spec: CompletionSpec): string {
  return `#compdef catalog
# catalog completion for zsh. Put it on $fpath as _catalog, or: source <(catalog completion zsh)
${posixFunctions(spec)}
_catalog() {
  local out mode
  local -a cands
  out=$(_catalog_candidates $((CURRENT - 1)) "\${words[@]}")
  mode=\${out%%$'\\n'*}
  cands=()
  [[ $out == *$'\\n'* ]] && cands=("\${(@f)\${out#*$'\\n'}}")
  case $mode in
    files) _files ;;
    nospace) compadd -Q -S '' -- "\${cands[@]}" ;;
    words) compadd -Q -- "\${cands[@]}" ;;
  esac
}
if [ "$funcstack[1]" = "_catalog" ]; then
  _catalog "$@"
else
  compdef _catalog catalog
fi
`;
}

/** The fish script: fish cannot run sh functions, so it hands the line to sh with the same functions. */
export function fishScript(spec: CompletionSpec): string {
  const sh = `${posixFunctions(spec)}\n_catalog_candidates "$@"\n`;
  const fishQuoted = `'${sh.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  return `# catalog completion for fish. Save it as ~/.config/fish/completions/catalog.fish
set -g __catalog_completion_sh ${fishQuoted}
function __catalog_complete
    set -l tokens (commandline -opc)
    set -l cur (commandline -ct)
    set -l out (sh -c $__catalog_completion_sh catalog (count $tokens) $tokens "$cur")
    switch $out[1]
        case files
            __fish_complete_path "$cur"
        case words nospace
            for c in $out[2..-1]
                echo $c
            end
    end
end
complete -c catalog -f -a '(__catalog_complete)'
`;
}

// ---------------------------------------------------------------------------------------------
// PowerShell cannot run the sh functions (Windows has no sh): its completer makes the same
// decisions as _catalog_candidates, step for step, over tables written from the same parts.

/** A PowerShell single-quoted string. */
const psq = (s: string) => `'${s.replace(/'/g, "''")}'`;
const psList = (xs: readonly string[]) => `@(${xs.map(psq).join(', ')})`;
/** A hashtable literal, one entry a line, at the completer's indentation. */
const psTable = (entries: Array<[string, string]>, indent = '    ') =>
  entries.length ? `@{\n${entries.map(([k, v]) => `${indent}    ${psq(k)} = ${v}`).join('\n')}\n${indent}}` : '@{}';

/** The completer's tables: what the sh functions' `case` arms hold. */
function psTables({ spec, valueFlags, rootFlags, globals, top, collections, others, verbs, verbFlags, verbNames, settingVerbs, fileVerbs }: ScriptParts): string[] {
  const other = (c: CommandSpec): string => {
    const next = positional(c);
    const then = next === null ? '$null' : next.mode === 'files' ? "@{ mode = 'files' }" : `@{ mode = 'words'; words = ${psList(next.words)} }`;
    const subs = c.subcommands.length ? `[ordered]${psTable(c.subcommands.map((s) => [s.name, psList(flagNames(s))]), '            ')}` : '[ordered]@{}';
    return `@{\n            flags = ${psList(flagNames(c))}\n            subs = ${subs}\n            next = ${then}\n        }`;
  };
  const byVerb = [...verbFlags].flatMap(([v, fs]) => (verbNames.get(v) ?? [v]).map((n): [string, string] => [n, psList([...fs].sort())]));
  const lists = Object.entries(VALUE_LISTS).map(([f, vs]): [string, string] => [f, psList(vs)]);
  return [
    `    $valueFlags = ${psList(valueFlags)}`,
    `    $rootFlags = ${psList(rootFlags)}`,
    `    $globalFlags = ${psList(globals)}`,
    `    $topNames = ${psList(top.map((c) => c.name))}`,
    `    $collections = ${psList(collections.map((c) => c.name))}`,
    `    $verbs = ${psList(verbs.map((v) => v.name))}`,
    `    $verbFlags = ${psTable(byVerb)}`,
    `    $others = ${psTable(others.map((c) => [c.name, other(c)]))}`,
    `    $fields = ${psTable(Object.entries(spec.fields).map(([t, fs]) => [t, psList(fs)]))}`,
    `    $embeds = ${psTable(Object.entries(spec.embeds).map(([t, e]) => [t, psList(e)]))}`,
    `    $booleans = ${psTable(Object.entries(spec.booleans).map(([t, b]) => [t, psList(b)]))}`,
    `    $fieldFlags = ${psList(FIELD_FLAGS)}`,
    `    $fileFlags = ${psList(FILE_FLAGS)}`,
    `    $valueLists = ${psTable(lists)}`,
    `    $settingVerbs = ${psList(settingVerbs)}`,
    `    $fileVerbs = ${psList(fileVerbs)}`,
    `    $serviceFields = ${psList(SERVICE_FIELDS)}`,
  ];
}

/**
 * The completer's decisions, as _catalog_candidates makes them: each step answers a table
 * `@{ mode; words }` with the sh mode (words, nospace, files, none). Comparisons are
 * case-sensitive (-ceq, -ccontains): PowerShell's own ignore case, and -h is not -H.
 */
const PS_LOGIC = String.raw`
    function Select-CatalogWords([string]$pre, [string]$typed, [object[]]$words) {
        foreach ($w in $words) {
            if ($null -ne $w -and ([string]$w).StartsWith($typed, [System.StringComparison]::Ordinal)) { $pre + $w }
        }
    }
    function Get-CatalogValues([string]$flag, [string]$coll, [string]$pre, [string]$typed) {
        if ($fieldFlags -ccontains $flag) {
            # a comma-separated list: complete its last name
            $i = $typed.LastIndexOf(',')
            $names = @($fields[$coll])
            if ($flag -ceq '--select' -or $flag -ceq '-s') { $names += @($embeds[$coll]) }
            return @{ mode = 'nospace'; words = @(Select-CatalogWords ($pre + $typed.Substring(0, $i + 1)) ($typed.Substring($i + 1)) $names) }
        }
        if ($valueLists.Contains($flag)) { return @{ mode = 'words'; words = @(Select-CatalogWords $pre $typed $valueLists[$flag]) } }
        if ($fileFlags -ccontains $flag) { return @{ mode = 'files'; words = @() } }
        return @{ mode = 'none'; words = @() }
    }
    function Get-CatalogCommandWords([string]$name, [string]$second, [string]$typed) {
        if ($name -ceq 'help') { return @{ mode = 'words'; words = @(Select-CatalogWords '' $typed $topNames) } }
        if (-not $others.Contains($name)) { return @{ mode = 'none'; words = @() } }
        $c = $others[$name]
        if ($typed.StartsWith('-')) {
            $own = $c.flags
            if ($second -ne '' -and $c.subs.Contains($second)) { $own = $c.subs[$second] }
            return @{ mode = 'words'; words = @(Select-CatalogWords '' $typed (@($own) + $globalFlags)) }
        }
        if ($null -eq $c.next) { return @{ mode = 'none'; words = @() } }
        if ($c.next.mode -ceq 'files') { return @{ mode = 'files'; words = @() } }
        if ($second -ne '') { return @{ mode = 'none'; words = @() } }
        return @{ mode = 'words'; words = @(Select-CatalogWords '' $typed $c.next.words) }
    }

    # The words before the one being completed, as typed (the command itself first).
    $done = @($commandAst.CommandElements | Where-Object { $_.Extent.EndOffset -lt $cursorPosition } | ForEach-Object { $_.Extent.Text })
    $cur = [string]$wordToComplete
    $quote = ''
    if ($cur.Length -gt 0 -and ($cur[0] -eq [char]39 -or $cur[0] -eq [char]34)) {
        $quote = $cur.Substring(0, 1)
        $cur = $cur.Substring(1).TrimEnd([char]$quote)
    }
    $cmd = ''; $sub = ''; $prev = ''; $skip = $false
    foreach ($w in @($done | Select-Object -Skip 1)) {
        if ($skip) { $skip = $false }
        elseif ($w -clike '--*=*') { }
        elseif ($w.StartsWith('-')) { if ($valueFlags -ccontains $w) { $skip = $true } }
        elseif ($cmd -eq '') { $cmd = $w }
        elseif ($sub -eq '') { $sub = $w }
        $prev = $w
    }

    $r = @{ mode = 'none'; words = @() }
    if ($cur -clike '--*=*') {
        # --flag=value: complete the value after the =
        $eq = $cur.IndexOf('=')
        $r = Get-CatalogValues ($cur.Substring(0, $eq)) $cmd ($cur.Substring(0, $eq + 1)) ($cur.Substring($eq + 1))
    } elseif ($skip) {
        $r = Get-CatalogValues $prev $cmd '' $cur
    } elseif ($cmd -eq '') {
        $list = $topNames
        if ($cur.StartsWith('-')) { $list = $rootFlags }
        $r = @{ mode = 'words'; words = @(Select-CatalogWords '' $cur $list) }
    } elseif ($collections -cnotcontains $cmd) {
        $r = Get-CatalogCommandWords $cmd $sub $cur
    } elseif ($sub -eq '') {
        $list = $verbs
        if ($cur.StartsWith('-')) { $list = @('--help') }
        $r = @{ mode = 'words'; words = @(Select-CatalogWords '' $cur $list) }
    } elseif ($cur.StartsWith('-')) {
        $r = @{ mode = 'words'; words = @(Select-CatalogWords '' $cur (@($verbFlags[$sub]) + $globalFlags)) }
    } elseif ($cur.Contains('=')) {
        # FIELD=VALUE: only booleans have values worth offering
        $f = $cur.Substring(0, $cur.IndexOf('='))
        if (@($booleans[$cmd]) -ccontains $f) { $r = @{ mode = 'words'; words = @(Select-CatalogWords ($f + '=') ($cur.Substring($f.Length + 1)) @('true', 'false')) } }
    } elseif ($settingVerbs -ccontains $sub) {
        $settable = @($fields[$cmd] | Where-Object { $null -ne $_ -and $serviceFields -cnotcontains $_ } | ForEach-Object { $_ + '=' })
        $r = @{ mode = 'nospace'; words = @(Select-CatalogWords '' $cur $settable) }
    } elseif ($fileVerbs -ccontains $sub) {
        $r = @{ mode = 'files'; words = @() }
    }

    # files: nothing, so PowerShell completes paths itself; none: an empty string, so it does not
    if ($r.mode -ceq 'files') { return }
    $found = @($r.words)
    if ($found.Count -eq 0) { return '' }
    $special = '[\s,;(){}$@''"|&<>#' + [char]96 + ']'
    foreach ($c in $found) {
        $text = $c
        if ($quote -ne '') {
            $text = $quote + $c
            if ($r.mode -ceq 'words') { $text += $quote }
        } elseif ($c -match $special) {
            $text = "'" + $c.Replace("'", "''") + "'"
        }
        $type = 'ParameterValue'
        if ($c.StartsWith('-')) { $type = 'ParameterName' }
        [System.Management.Automation.CompletionResult]::new($text, $c, $type, $c)
    }
`;

/** The PowerShell script: a native argument completer for `catalog`, with the tables and decisions above. */
export function powershellScript(spec: CompletionSpec): string {
  return `# catalog completion for PowerShell. Load it with: catalog completion powershell | Out-String | Invoke-Expression
# (put that line in $PROFILE to keep it)
Register-ArgumentCompleter -Native -CommandName catalog -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    # What the command tree and the schema know (generated, as the bash script's functions are).
${psTables(scriptParts(spec)).join('\n')}
${PS_LOGIC}}
`;
}

/** `catalog completion bash|zsh|fish|powershell`. */
export function defineCompletion(ctx: Context): Command {
  const cmd = new Command('completion')
    .description('Print a shell completion script: commands, collections, flags and field names (no network needed)')
    .argument('<shell>', `one of ${SHELLS.join(', ')}`)
    .action(async (shell: string, _opts: unknown, self: Command) => runCompletion({ shell, program: rootOf(self) }, ctx))
    // not among the examples: those run in bash (test/e2e/help.test.ts runs each)
    .addHelpText('after', '\nPowerShell: catalog completion powershell | Out-String | Invoke-Expression\n(put that line in $PROFILE to keep it)');
  return examples(cmd, [
    'source <(catalog completion bash)            # now, in this shell; add it to ~/.bashrc to keep it',
    'catalog completion zsh > "${fpath[1]}/_catalog"  # zsh, then start a new shell',
    'catalog completion fish > ~/.config/fish/completions/catalog.fish',
  ]);
}

function rootOf(cmd: Command): Command {
  let c = cmd;
  while (c.parent) c = c.parent;
  return c;
}

/** Prints the script for one shell. */
export async function runCompletion(opts: { shell: string; program: Command }, ctx: Context): Promise<void> {
  if (!(SHELLS as readonly string[]).includes(opts.shell)) {
    throw new UsageError(`no completion for '${opts.shell}'`, `choose one of ${SHELLS.join(', ')}: catalog completion bash`);
  }
  const write: Record<Shell, (spec: CompletionSpec) => string> = { bash: bashScript, zsh: zshScript, fish: fishScript, powershell: powershellScript };
  await ctx.io.stdout.write(write[opts.shell as Shell](completionSpec(opts.program)));
}
