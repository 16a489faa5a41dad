/**
 * Response bodies a test writes into as it goes, as a server streams (the live events). A test may end with
 * its stream still open, as a page leaves it; setup.ts closes every one after each test, in every file, so
 * no reader waits on into the files after it (the files of a worker share this module).
 */
const open: ReadableStreamDefaultController<Uint8Array>[] = [];

/** A body to answer a request with, and the controller the test writes into it with. */
export function openStream() {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
  open.push(controller);
  return { body, controller };
}

/** Ends the streams of the test that just ran. */
export function closeStreams() {
  for (const controller of open.splice(0)) controller.close();
}
