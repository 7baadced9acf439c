package io.strata.worker.store;

import io.strata.common.checksum.ChunkChecksums;
import io.strata.common.exception.InvalidArgumentException;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * The CRC32C checksums a block's writer sent so far, one per checksum chunk in chunk order, gathered as
 * they arrive in batches: with each WriteBlock message (streamed writes), or with each GRANT and the
 * COMMIT (short-circuit writes, whose list becomes the block's stored checksums through
 * {@link BlockStore.TempBlock#written}). A list made {@link #bounded} refuses more checksums than a block
 * of its maximum length can have; an {@link #unbounded} one leaves that to its caller (a streamed write
 * compares the count with the bytes received after every message).
 *
 * <p>Not thread-safe: one write owns it, and its calls come one at a time.
 */
public final class SentChecksums {
  private final long blockId;
  private final long max;
  private int[] crcs = new int[16];
  private int count;

  private SentChecksums(long blockId, long max) {
    this.blockId = blockId;
    this.max = max;
  }

  /** For a block of at most {@code maxLength} bytes: at most one checksum per chunk of that (and one more). */
  public static SentChecksums bounded(long blockId, long maxLength) {
    return new SentChecksums(blockId, Math.max(0, maxLength) / ChunkChecksums.CHUNK_BYTES + 1);
  }

  /** With no bound of its own. */
  public static SentChecksums unbounded(long blockId) {
    return new SentChecksums(blockId, Long.MAX_VALUE);
  }

  /** Appends {@code more}, the checksums of the chunks after those sent so far. */
  public void add(List<Integer> more) throws InvalidArgumentException {
    if (count + more.size() > max) {
      throw new InvalidArgumentException("Block " + blockId + ": the writer sent " + (count + more.size())
          + " checksums, more than a block of its maximum length can have");
    }
    if (count + more.size() > crcs.length) {
      crcs = Arrays.copyOf(crcs, Math.max(count + more.size(), crcs.length * 2));
    }
    for (int c : more) {
      crcs[count++] = c;
    }
  }

  /** Checksums sent so far. */
  public int count() {
    return count;
  }

  /** The checksum sent for chunk {@code i} ({@code i < count()}). */
  public int get(int i) {
    return crcs[Objects.checkIndex(i, count)];
  }

  /** A copy of every checksum sent so far. */
  public int[] toArray() {
    return Arrays.copyOf(crcs, count);
  }
}
