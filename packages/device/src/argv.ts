/**
 * Splits a command line into argv the way a POSIX shell splits words, without running a shell: spaces
 * separate words; 'single quotes' keep everything literally; "double quotes" keep spaces and take
 * backslash escapes of \ " $ and `; a backslash outside quotes keeps the next character. Nothing is
 * expanded ($VAR, *, ~ stay as written), so a configured command can never run more than itself.
 */
export function splitCommand(line: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: "'" | '"' | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote === "'") {
      if (c === "'") quote = null;
      else word += c;
    } else if (quote === '"') {
      if (c === '"') quote = null;
      else if (c === '\\' && i + 1 < line.length && '\\"$`'.includes(line[i + 1]!)) word += line[++i];
      else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === '\\') {
      if (i + 1 >= line.length) throw new Error('The command ends with a lone backslash');
      word += line[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote) throw new Error(`The command has an unclosed ${quote} quote`);
  if (inWord) words.push(word);
  if (words.length === 0) throw new Error('The command is empty');
  return words;
}
