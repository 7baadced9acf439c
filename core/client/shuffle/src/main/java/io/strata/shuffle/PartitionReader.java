package io.strata.shuffle;

import io.strata.client.FileInStream;
import io.strata.client.FileSystem;
import io.strata.client.URIStatus;
import io.strata.client.options.OpenFileOptions;
import io.strata.common.exception.DataLossException;
import io.strata.common.shuffle.BatchHeader;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;

/**
 * Reads the batches of sealed partition files, in file order, keeping only those of each map's
 * successful attempt ({@code attempts}: map index to attempt id) and the first of each (map index, batch
 * id): batches of failed or speculative attempts and batches a retried push applied twice are skipped.
 * Every batch's CRC32C is checked, and {@link #missing} tells whether the batches kept are all of each map's
 * (empty batches, a partition's end marks, are counted and not returned). The files are normal Strata files: the client reads the nearest copy
 * and fails over to the other copy or the under file system.
 *
 * <p>Not thread-safe: one reader task.
 */
public final class PartitionReader implements Iterator<byte[]>, AutoCloseable {
  private final FileSystem fs;
  private final Iterator<String> files;
  private final Map<Integer, Long> attempts;
  private final Map<String, URIStatus> statuses;
  /** A file's bytes read ahead when there are some ({@link PartitionPrefetch#take}), else null. */
  private final java.util.function.BiFunction<String, URIStatus, byte[]> readAhead;
  private final Set<Long> seen = new HashSet<>();
  /** Per map index: distinct batches kept, and the number of batches its last one says it pushed (0: not seen). */
  private final Map<Integer, int[]> kept = new java.util.HashMap<>();
  private DataInputStream in;
  private String current;
  private byte[] next;
  private long bytesRead;
  private long batchesKept;
  private long batchesSkipped;
  private long filesReadAhead;

  public PartitionReader(FileSystem fs, List<String> files, Map<Integer, Long> attempts) {
    this(fs, files, Map.of(), attempts);
  }

  /** With {@code statuses} (with blocks) of some of the files, by path: those open without a master call. */
  public PartitionReader(FileSystem fs, List<String> files, Map<String, URIStatus> statuses,
      Map<Integer, Long> attempts) {
    this(fs, files, statuses, attempts, (path, status) -> null);
  }

  /** As above; a file with a status whose bytes {@code readAhead} has is read from them instead of opened. */
  PartitionReader(FileSystem fs, List<String> files, Map<String, URIStatus> statuses, Map<Integer, Long> attempts,
      java.util.function.BiFunction<String, URIStatus, byte[]> readAhead) {
    this.readAhead = readAhead;
    this.fs = fs;
    this.files = files.iterator();
    this.statuses = statuses;
    this.attempts = attempts;
  }

  @Override
  public boolean hasNext() {
    if (next == null) {
      try {
        next = advance();
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }
    return next != null;
  }

  @Override
  public byte[] next() {
    if (!hasNext()) {
      throw new NoSuchElementException();
    }
    byte[] b = next;
    next = null;
    return b;
  }

  private byte[] advance() throws IOException {
    byte[] head = new byte[BatchHeader.BYTES];
    while (true) {
      if (in == null) {
        if (!files.hasNext()) {
          return null;
        }
        current = files.next();
        URIStatus known = statuses.get(current);
        byte[] ahead = known == null ? null : readAhead.apply(current, known);
        if (ahead != null) {
          filesReadAhead++;
          in = new DataInputStream(new java.io.ByteArrayInputStream(ahead));
        } else {
          FileInStream s = known == null ? fs.openFile(current) : fs.openFile(known, OpenFileOptions.defaults());
          // Sized to the file: a reduce task of a thousand-partition shuffle reads files of a few KiB.
          in = new DataInputStream(new java.io.BufferedInputStream(s, (int) Math.max(8192, Math.min(1 << 20,
              s.length()))));
        }
      }
      int got = in.read(head, 0, 1);
      if (got < 0) {
        in.close();
        in = null;
        continue;
      }
      BatchHeader h;
      byte[] data;
      try {
        in.readFully(head, 1, head.length - 1);
        h = BatchHeader.readFrom(ByteBuffer.wrap(head), current);
        data = new byte[h.length()];
        in.readFully(data);
      } catch (EOFException e) {
        throw new DataLossException(current + " ends inside a batch: the file is damaged");
      } catch (IllegalArgumentException e) {
        throw new DataLossException(e.getMessage());
      }
      bytesRead += head.length + data.length;
      if (BatchHeader.crc32c(data, 0, data.length) != h.crc32c()) {
        throw new DataLossException("Batch " + h.batchId() + " of map " + h.mapIndex() + " in " + current
            + " fails its CRC32C");
      }
      Long want = attempts.get(h.mapIndex());
      if (want == null || want != h.attemptId() || !seen.add(((long) h.mapIndex() << 32) | (h.batchId() & 0xffffffffL))) {
        batchesSkipped++;
        continue;
      }
      batchesKept++;
      int[] k = kept.computeIfAbsent(h.mapIndex(), m -> new int[2]);
      k[0]++;
      if (h.last()) {
        k[1] = h.sequence() + 1;
      }
      if (data.length == 0) {
        continue; // a partition's end mark: nothing to read
      }
      return data;
    }
  }

  /** Bytes read from the files so far (headers included, skipped batches too). */
  public long bytesRead() {
    return bytesRead;
  }

  public long batchesKept() {
    return batchesKept;
  }

  public long batchesSkipped() {
    return batchesSkipped;
  }

  /** Files whose bytes were read ahead ({@link PartitionPrefetch}) instead of opened here. */
  public long filesReadAhead() {
    return filesReadAhead;
  }

  /**
   * Once every file is read: why the batches kept miss some of a map's, or null when none misses any. Checked
   * are the maps in {@code expected} (their successful attempts reported bytes for this partition) and every map
   * a batch was kept of: each needs its last batch and as many distinct batches as that one's number says.
   */
  public String missing(Set<Integer> expected) {
    Set<Integer> maps = new java.util.TreeSet<>(expected);
    maps.addAll(kept.keySet());
    for (int m : maps) {
      int[] k = kept.get(m);
      if (k == null) {
        return "map " + m + " (attempt " + attempts.get(m) + ") reported bytes for it, but its sealed files hold no "
            + "batch of that attempt";
      }
      if (k[1] == 0) {
        return "its sealed files hold " + k[0] + " batches of map " + m + " (attempt " + attempts.get(m)
            + ") but not that attempt's last one";
      }
      if (k[0] != k[1]) {
        return "its sealed files hold " + k[0] + " distinct batches of map " + m + " (attempt " + attempts.get(m)
            + "), whose last batch says it pushed " + k[1];
      }
    }
    return null;
  }

  @Override
  public void close() throws IOException {
    if (in != null) {
      in.close();
      in = null;
    }
  }
}
