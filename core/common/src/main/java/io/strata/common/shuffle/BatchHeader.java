package io.strata.common.shuffle;

import java.nio.ByteBuffer;

/**
 * The header each batch carries in a shuffle partition file. A partition file is a sequence of batches,
 * each {@link #BYTES} bytes of header (big-endian: magic, map index, attempt id, batch id, data length,
 * CRC32C of the data) followed by the data. The worker writes header and data in one append under the
 * partition's lock, so batches never interleave; the reader checks the magic and the CRC of every batch.
 *
 * <p>A batch id says where the batch stands among its map attempt's batches for its partition
 * ({@link #batchId}): its number from 0, shifted left one bit, plus one on that attempt's last batch for the
 * partition. A reader that has the last batch and as many distinct batches as its number says has every
 * batch the attempt pushed there; a writer whose last batch for a partition went before it knew it was the
 * last ends the partition with an empty batch marked last.
 *
 * <p>An immutable value; thread-safe.
 */
public record BatchHeader(int mapIndex, long attemptId, int batchId, int length, int crc32c) {
  /** "STB1": a header that does not start with it means the file is not a partition file or is damaged. */
  public static final int MAGIC = 0x53544231;
  public static final int BYTES = 4 + 4 + 8 + 4 + 4 + 4;

  /** Batch numbers a batch id can carry: 2^30 batches per map attempt and partition. */
  public static final int MAX_SEQUENCE = (1 << 30) - 1;

  /** The batch id of a map attempt's batch number {@code sequence} (from 0) for its partition. */
  public static int batchId(int sequence, boolean last) {
    if (sequence < 0 || sequence > MAX_SEQUENCE) {
      throw new IllegalArgumentException("Batch number " + sequence + " out of range [0, " + MAX_SEQUENCE + "]");
    }
    return sequence << 1 | (last ? 1 : 0);
  }

  /** This batch's number among its map attempt's batches for its partition, from 0. */
  public int sequence() {
    return batchId >>> 1;
  }

  /** Whether this is its map attempt's last batch for its partition. */
  public boolean last() {
    return (batchId & 1) != 0;
  }

  /** Writes this header at {@code out}'s position (advancing it). */
  public void writeTo(ByteBuffer out) {
    out.putInt(MAGIC).putInt(mapIndex).putLong(attemptId).putInt(batchId).putInt(length).putInt(crc32c);
  }

  public ByteBuffer toBuffer() {
    ByteBuffer b = ByteBuffer.allocate(BYTES);
    writeTo(b);
    return b.flip();
  }

  /**
   * Reads a header from {@code in}'s position (advancing it); IllegalArgumentException naming {@code where}
   * when the magic is wrong or the length negative.
   */
  public static BatchHeader readFrom(ByteBuffer in, String where) {
    int magic = in.getInt();
    if (magic != MAGIC) {
      throw new IllegalArgumentException(String.format("%s: no batch header (magic %08x, expected %08x)", where,
          magic, MAGIC));
    }
    BatchHeader h = new BatchHeader(in.getInt(), in.getLong(), in.getInt(), in.getInt(), in.getInt());
    if (h.length < 0) {
      throw new IllegalArgumentException(where + ": batch header with negative length " + h.length);
    }
    return h;
  }

  /** CRC32C of {@code data} from its position to its limit (the position is left alone). */
  public static int crc32c(ByteBuffer data) {
    java.util.zip.CRC32C c = new java.util.zip.CRC32C();
    c.update(data.duplicate());
    return (int) c.getValue();
  }

  public static int crc32c(byte[] data, int off, int len) {
    java.util.zip.CRC32C c = new java.util.zip.CRC32C();
    c.update(data, off, len);
    return (int) c.getValue();
  }
}
