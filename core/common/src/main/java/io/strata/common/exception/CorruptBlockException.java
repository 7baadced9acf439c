package io.strata.common.exception;

/**
 * A copy of a block failed its checksum: the bytes one worker holds (or sent) are not the bytes that were
 * written. It names what the caller needs to recover: the block, the worker whose copy is bad (its
 * address, or "" when it is not known), and the offset of the first bad checksum chunk in the block. The
 * reader marks that copy corrupt, reports it to the master and reads on from another copy or the under
 * file system. On the wire it is DATA_LOSS.
 */
public class CorruptBlockException extends DataLossException {
  private final long blockId;
  private final String worker;
  private final long offset;

  public CorruptBlockException(long blockId, String worker, long offset, String message) {
    super("Block " + blockId + " of worker " + worker + " is corrupt at offset " + offset + ": " + message);
    this.blockId = blockId;
    this.worker = worker;
    this.offset = offset;
  }

  public long blockId() {
    return blockId;
  }

  /** The worker holding the corrupt copy, as host:port. */
  public String worker() {
    return worker;
  }

  /** The block offset of the checksum chunk that failed. */
  public long offset() {
    return offset;
  }
}
