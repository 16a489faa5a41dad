/** One Server-Sent Event: its `event` name (default "message") and its data lines joined. */
export interface SseMessage {
  event: string;
  data: string;
}

/**
 * An incremental parser of the text/event-stream format (WHATWG HTML, "Server-sent events"): feed it the
 * decoded text as it arrives, in chunks of any size; it calls `onMessage` once per complete event.
 * Comments (keep-alives) and fields other than event/data are skipped.
 */
export function createSseParser(onMessage: (message: SseMessage) => void): (chunk: string) => void {
  let buffer = '';
  let event = '';
  let data: string[] = [];
  return (chunk) => {
    buffer += chunk;
    // A chunk ending in CR may be half of a CRLF: keep the CR until the next chunk says which.
    const held = buffer.endsWith('\r') ? '\r' : '';
    const lines = (held ? buffer.slice(0, -1) : buffer).split(/\r\n|\r|\n/);
    // The last piece has no line end yet (or is empty after one): keep it for the next chunk.
    buffer = (lines.pop() ?? '') + held;
    for (const line of lines) {
      if (line === '') {
        if (data.length > 0) onMessage({ event: event || 'message', data: data.join('\n') });
        event = '';
        data = [];
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      let value = colon === -1 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
    }
  };
}

const BACKOFF_MIN_MS = 1000;
const BACKOFF_MAX_MS = 30_000;

/** Waits after the n-th failed attempt in a row (0-based): doubling from 1 s, at most 30 s, with jitter. */
export function backoffMs(failures: number, random = Math.random): number {
  const base = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** failures);
  return Math.round(base / 2 + (base / 2) * random());
}
