/** FC keeps the first and the last 4 KiB of a body; the middle is dropped, `downloaded` counts it. */
export const OUTPUT_EDGE_BYTES = 4096;
export const TRUNCATION_MARKER = '\n\n[... Tock: output truncated, only the first and last 4 KiB are kept ...]\n\n';

/**
 * Keeps the first and last OUTPUT_EDGE_BYTES of a stream of chunks in bounded memory, so a
 * multi-gigabyte body costs the same as a small one.
 */
export class OutputCapture {
  private head: Buffer = Buffer.alloc(0);
  private tail: Buffer = Buffer.alloc(0);
  total = 0;

  push(chunk: Uint8Array): void {
    this.total += chunk.length;
    let rest = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (this.head.length < OUTPUT_EDGE_BYTES) {
      const take = Math.min(OUTPUT_EDGE_BYTES - this.head.length, rest.length);
      this.head = Buffer.concat([this.head, rest.subarray(0, take)]);
      rest = rest.subarray(take);
    }
    if (rest.length === 0) return;
    // Copy, so the kept tail never pins a large chunk from the socket.
    this.tail =
      rest.length >= OUTPUT_EDGE_BYTES
        ? Buffer.from(rest.subarray(rest.length - OUTPUT_EDGE_BYTES))
        : Buffer.concat([this.tail, rest]).subarray(-OUTPUT_EDGE_BYTES);
  }

  /** Bytes dropped between head and tail. */
  get omitted(): number {
    return this.total - this.head.length - this.tail.length;
  }

  text(): string {
    if (this.omitted === 0) return Buffer.concat([this.head, this.tail]).toString('utf8');
    return this.head.toString('utf8') + TRUNCATION_MARKER + this.tail.toString('utf8');
  }
}
