/**
 * Follows the MQTT fixed headers in a byte stream, so an oversized packet is refused from its first bytes
 * instead of being buffered whole. Every MQTT packet starts with one type byte and its remaining length
 * (1–4 bytes, 7 bits each, low first); the guard skips that many bytes to the next header.
 */
export class FrameGuard {
  /** Bytes of the current packet's body still to skip. */
  private skip = 0;
  /** Reading a header: 0 = expecting the type byte, 1–4 = length bytes read so far. */
  private headerBytes = 0;
  private length = 0;

  constructor(private readonly maxPacketBytes: number) {}

  /** False as soon as a packet announces more than the limit (or a malformed length). */
  feed(chunk: Buffer): boolean {
    let i = 0;
    while (i < chunk.length) {
      if (this.skip > 0) {
        const step = Math.min(this.skip, chunk.length - i);
        this.skip -= step;
        i += step;
        continue;
      }
      const byte = chunk[i++]!;
      if (this.headerBytes === 0) {
        this.headerBytes = 1;
        this.length = 0;
        continue;
      }
      this.length += (byte & 0x7f) * 128 ** (this.headerBytes - 1);
      if (this.length > this.maxPacketBytes) return false;
      if (byte & 0x80) {
        if (++this.headerBytes > 4) return false;
        continue;
      }
      this.headerBytes = 0;
      this.skip = this.length;
    }
    return true;
  }
}
