/**
 * A translation of the English table: the same keys at every level, any text as values. Lists keep
 * their length (the wizard's steps), so a language cannot drop or add an entry.
 */
export type Catalogue<T> = T extends string
  ? string
  : T extends readonly string[]
    ? { readonly [I in keyof T]: string }
    : { readonly [K in keyof T]: Catalogue<T[K]> };

export const LANGUAGES = ['en', 'de'] as const;
export type Language = (typeof LANGUAGES)[number];
