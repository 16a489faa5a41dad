import * as z from 'zod/mini';
import { messages, type MessageKey } from './messages.js';

/**
 * The one building block every text the platform accepts is checked with. PostgreSQL refuses
 * NUL in text (the request ended as a 500), C0/C1 control characters and the Unicode line separators break
 * single-line fields, and bidirectional controls reverse what follows them on screen (a lock named
 * "Front\u202Erood" reads "Front" + "door" reversed). Every string schema of the contract goes through
 * `checkText` (or one of the schemas below), so a new field gets the rule by being written like the others.
 */

/** C0 controls (U+0000–U+001F), DEL and the C1 controls (U+007F–U+009F). */
// eslint-disable-next-line no-control-regex -- matching control characters is this pattern's purpose
export const CONTROL_CHARACTERS = /[\u0000-\u001F\u007F-\u009F]/;
/** The same, except tab, line feed and carriage return: what multi-line text (a mailing address) may hold. */
// eslint-disable-next-line no-control-regex -- matching control characters is this pattern's purpose
export const MULTILINE_CONTROL_CHARACTERS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/;
/** Line breaks a single line must not hold: LF, CR, NEL and the Unicode line and paragraph separators. */
export const LINE_BREAKS = /[\n\r\u0085\u2028\u2029]/;
/** Bidirectional controls: embeddings and overrides, isolates, the LRM/RLM marks and the Arabic letter mark. */
export const BIDI_CONTROLS = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/;

/**
 * - `line`: one line of display text (names, emails, URLs, ids): no line breaks, controls or bidi controls;
 * - `multiline`: like `line`, but tab, LF, CR and the Unicode line separators are allowed;
 * - `secret`: what is never shown (passwords): anything but control characters.
 */
export type TextKind = 'line' | 'multiline' | 'secret';

/** What is wrong with `value` as text of this kind (a key of `messages`), or null. */
export function textProblem(value: string, kind: TextKind = 'line'): MessageKey | null {
  if (kind === 'multiline') {
    if (MULTILINE_CONTROL_CHARACTERS.test(value)) return 'controlCharacters';
  } else if (kind === 'line') {
    if (LINE_BREAKS.test(value)) return 'lineBreaks';
    if (CONTROL_CHARACTERS.test(value)) return 'controlCharacters';
  } else if (CONTROL_CHARACTERS.test(value)) return 'controlCharacters';
  if (kind !== 'secret' && BIDI_CONTROLS.test(value)) return 'bidiControls';
  return null;
}

/** The check to add to any `z.string()`: one issue with the contract's message when the text is not allowed. */
export const checkText = (kind: TextKind = 'line') =>
  z.superRefine((value: string, ctx) => {
    const problem = textProblem(value, kind);
    if (problem) ctx.addIssue({ code: 'custom', message: messages[problem], input: value });
  });

export interface TextOptions {
  /** Longest allowed length (after trimming). */
  max: number;
  /** 1: required (empty after trimming is `messages.required`); 0: may be empty. Default 1. */
  min?: 0 | 1;
  kind?: TextKind;
  /** Trim surrounding white space first (default true; never for secrets). */
  trim?: boolean;
  /** Message when the length exceeds `max` (default `messages.tooLong`). */
  tooLong?: string;
}

/** A string field: trimmed, required unless `min: 0`, at most `max` long, and checked by `checkText`. */
export function text({ max, min = 1, kind = 'line', trim = kind !== 'secret', tooLong = messages.tooLong }: TextOptions) {
  return z
    .string({ error: messages.required })
    .check(
      ...(trim ? [z.trim()] : []),
      ...(min === 1 ? [z.minLength(1, messages.required)] : []),
      z.maxLength(max, tooLong),
      checkText(kind),
    );
}

/** A path parameter: an id the route looks up (never a control character, which PostgreSQL refuses). */
export const idParam = () => z.string().check(z.maxLength(200, messages.tooLong), checkText());
