package io.strata.common.id;

/**
 * Block ids name their file: the file id sits in the high {@value #FILE_ID_BITS} bits, the block's
 * index within the file in the low {@value #INDEX_BITS} bits. So a block id alone tells the master which
 * file it belongs to, and a file of up to 2^24 blocks (1 PiB at 64 MiB blocks) has one id range.
 * Stateless.
 */
public final class BlockId {
  public static final int INDEX_BITS = 24;
  public static final int FILE_ID_BITS = 63 - INDEX_BITS;
  public static final long MAX_INDEX = (1L << INDEX_BITS) - 1;
  public static final long MAX_FILE_ID = (1L << FILE_ID_BITS) - 1;

  private BlockId() {}

  public static long of(long fileId, long index) {
    if (fileId < 0 || fileId > MAX_FILE_ID) {
      throw new IllegalArgumentException("File id " + fileId + " is outside [0, " + MAX_FILE_ID + "]");
    }
    if (index < 0 || index > MAX_INDEX) {
      throw new IllegalArgumentException("Block index " + index + " is outside [0, " + MAX_INDEX + "]");
    }
    return (fileId << INDEX_BITS) | index;
  }

  public static long fileId(long blockId) {
    return blockId >>> INDEX_BITS;
  }

  public static int index(long blockId) {
    return (int) (blockId & MAX_INDEX);
  }

  public static boolean isValid(long blockId) {
    return blockId >= 0;
  }
}
