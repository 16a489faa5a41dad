/**
 * String literals for the copyable code samples (Getting Started), one escaper per target language.
 *
 * Every value a sample embeds (a key id, an `alg`, an issuer, a URL …) is stored by any co-owner of the
 * application and pasted by another owner into their own code or terminal: it must come out as exactly
 * one string literal whose value is the stored value, whatever it holds — quotes, backslashes, line breaks,
 * the language's interpolation (`${…}`, `\(…)`, `$name`), NUL, U+2028/U+2029, bidi controls. Samples
 * never put a value into a comment.
 *
 * Besides what each grammar needs, every character that is invisible or moves text (Unicode categories
 * C — controls, format characters incl. bidi overrides, surrogates, private use, unassigned — and Z —
 * separators — except the plain space) is written as an escape, so what the owner reads is what runs.
 */

/** Characters written as escapes in every language: invisible, control or line/paragraph separators. */
const HIDDEN = /[\p{C}\p{Z}]/u;

/** Each code point of `value`; a lone surrogate comes out on its own. */
function codePoints(value: string): string[] {
  return Array.from(value);
}

const hex = (n: number, width: number) => n.toString(16).toUpperCase().padStart(width, '0');

/** A UTF-16 code unit as `\uXXXX`. */
const utf16Escapes = (ch: string) => Array.from({ length: ch.length }, (_, i) => `\\u${hex(ch.charCodeAt(i), 4)}`).join('');

const isLoneSurrogate = (ch: string) => ch.length === 1 && ch.charCodeAt(0) >= 0xd800 && ch.charCodeAt(0) <= 0xdfff;

/**
 * JavaScript / TypeScript: a single-quoted literal (the samples' style). Nothing interpolates inside
 * single quotes; `\uXXXX` / `\u{…}` cover every code point, lone surrogates included.
 */
export function jsString(value: string): string {
  let out = '';
  for (const ch of codePoints(value)) {
    if (ch === '\\') out += '\\\\';
    else if (ch === "'") out += "\\'";
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch !== ' ' && HIDDEN.test(ch)) out += ch.length === 1 ? utf16Escapes(ch) : `\\u{${hex(ch.codePointAt(0)!, 1)}}`;
    else out += ch;
  }
  return `'${out}'`;
}

/**
 * Swift: a double-quoted literal. Escaping `\` also disarms interpolation `\(…)`; `\u{…}` takes a
 * Unicode scalar, so a lone surrogate (which no Swift String can hold) becomes U+FFFD.
 */
export function swiftString(value: string): string {
  let out = '';
  for (const ch of codePoints(value)) {
    if (ch === '\\') out += '\\\\';
    else if (ch === '"') out += '\\"';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\0') out += '\\0';
    else if (isLoneSurrogate(ch)) out += '\\u{FFFD}';
    else if (ch !== ' ' && HIDDEN.test(ch)) out += `\\u{${hex(ch.codePointAt(0)!, 1)}}`;
    else out += ch;
  }
  return `"${out}"`;
}

/**
 * Kotlin: a double-quoted literal, `$` escaped (Kotlin templates: `$name`, `${…}`). Kotlin knows only
 * `\t \b \n \r \' \" \\ \$` and `\uXXXX` (UTF-16 code units, so a supplementary character is two).
 */
export function kotlinString(value: string): string {
  let out = '';
  for (const ch of codePoints(value)) {
    if (ch === '\\') out += '\\\\';
    else if (ch === '"') out += '\\"';
    else if (ch === '$') out += '\\$';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch !== ' ' && HIDDEN.test(ch)) out += utf16Escapes(ch);
    else out += ch;
  }
  return `"${out}"`;
}

/** A word a POSIX shell takes as is: no quoting, expansion or globbing can touch it. */
const PLAIN_WORD = /^[\w@%+=:,./-]+$/;

/** UTF-8 bytes of `ch` as printf octal escapes (`\033`). */
function printfOctal(ch: string): string {
  return Array.from(new TextEncoder().encode(ch), (b) => `\\${b.toString(8).padStart(3, '0')}`).join('');
}

/**
 * A POSIX shell word (sh, dash, bash, zsh) that expands to exactly `value`, whether written to a script
 * or pasted into a terminal. Single quotes keep everything literal (no `$`, backquote or backslash
 * processing); a quote itself is `\'` between quoted runs; a line feed stays inside the quotes. Every
 * other control or invisible character is produced by `"$(printf '\ooo')"` instead of being pasted raw,
 * so a terminal never receives a raw control character (Ctrl-C, Tab completion, an escape sequence ending
 * bracketed paste). NUL cannot be part of any shell word or environment value: it is left out.
 */
export function shellWord(value: string): string {
  if (PLAIN_WORD.test(value)) return value;
  let out = '';
  let quoted = '';
  let hidden = '';
  const flushQuoted = () => {
    if (quoted) out += `'${quoted}'`;
    quoted = '';
  };
  const flushHidden = () => {
    if (hidden) out += `"$(printf '${hidden}')"`;
    hidden = '';
  };
  for (const ch of codePoints(value)) {
    if (ch === '\0') continue;
    if (ch === "'") {
      flushHidden();
      flushQuoted();
      out += "\\'";
    } else if (ch !== ' ' && ch !== '\n' && HIDDEN.test(ch)) {
      flushQuoted();
      hidden += printfOctal(isLoneSurrogate(ch) ? '\uFFFD' : ch);
    } else {
      flushHidden();
      quoted += ch;
    }
  }
  flushHidden();
  flushQuoted();
  return out || "''";
}
