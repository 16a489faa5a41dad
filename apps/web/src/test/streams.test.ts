import { expect, test } from 'vitest';
import { openStream } from './streams';

let ended = false;

test('a test may end with its stream still open', () => {
  void openStream().body.getReader().closed.then(() => (ended = true));
  expect(ended).toBe(false);
});

test('the stream the test before left open was closed after it', () => {
  expect(ended).toBe(true);
});
