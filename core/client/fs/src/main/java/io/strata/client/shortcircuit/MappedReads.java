package io.strata.client.shortcircuit;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decides, for one client, whether short-circuit reads of blocks on a memory file system copy from a mapping of
 * the block's file ({@link BlockMapping}: one copy, but every page of a new mapping is a page fault) or read its
 * channel (two copies in the kernel and the JDK, no faults). Which is faster depends on the machine, not on
 * Strata: on one VM a 4 KiB page fault costs about 0.1 us and the mapped read ran 1.4x the channel's; on another
 * (a paravirtualised guest) a fault costs about 2 us and the mapped read ran at a fifth of the channel's
 * (docs/PERFORMANCE.md). So the default, {@code auto}, measures it once per client on the first memory-backed
 * block of at least {@link #MIN_PROBE_BYTES}: a copy of its first bytes (up to {@link #PROBE_BYTES}) from a new
 * mapping against a channel read of the same bytes, {@link #PROBE_ROUNDS} times alternating, the faster of each
 * kept; the mapping is chosen only when it beats the channel read. The outcome is logged once at INFO. Until it
 * is known (a probe running on another thread, only smaller blocks seen so far) blocks are read by channel,
 * which is always correct. {@code true} maps without measuring and {@code false} never maps (the key
 * {@code strata.user.shortcircuit.read.mmap}).
 *
 * <p>Thread-safe: the probe runs at most once, on the thread whose block first qualifies, with no lock held.
 */
public final class MappedReads {
  private static final Logger LOG = LoggerFactory.getLogger(MappedReads.class);
  /** Bytes a probe copies each way: long enough for a few thousand page faults, short enough to cost ms. */
  static final int PROBE_BYTES = 4 << 20;
  /** The smallest block a probe runs on: fewer bytes measure the call more than the copy. */
  static final int MIN_PROBE_BYTES = 1 << 20;
  static final int PROBE_ROUNDS = 3;
  /** Probes that fail with an I/O error before reads go by channel without measuring again. */
  static final int MAX_FAILED_PROBES = 3;

  /** How blocks on a memory file system are read. */
  public enum Mode {
    /** Measured once per client (the default). */
    AUTO,
    /** Always mapped. */
    MAP,
    /** Never mapped. */
    CHANNEL;

    /** {@code auto}, {@code true} (map) or {@code false} (channel), any case; null for anything else. */
    public static Mode parse(String value) {
      switch (value.trim().toLowerCase(Locale.ROOT)) {
        case "auto":
          return AUTO;
        case "true":
          return MAP;
        case "false":
          return CHANNEL;
        default:
          return null;
      }
    }
  }

  private static final int UNDECIDED = 0;
  private static final int PROBING = 1;
  private static final int MAPPED = 2;
  private static final int BY_CHANNEL = 3;

  private final Mode mode;
  private final AtomicInteger state = new AtomicInteger(UNDECIDED);
  private volatile String finding = "not measured yet";
  private final AtomicInteger failedProbes = new AtomicInteger();
  private final AtomicInteger probes = new AtomicInteger();

  public MappedReads(Mode mode) {
    this.mode = mode;
  }

  /**
   * Whether {@code block} is to be read through a mapping: never for a block not on a memory file system (a disk
   * read error under a mapping would end the JVM); otherwise as the mode says, measured on this block when it
   * is the first to qualify for the probe.
   */
  boolean use(ShortCircuitClient.OpenBlock block) {
    if (!block.memoryBacked() || mode == Mode.CHANNEL) {
      return false;
    }
    if (mode == Mode.MAP) {
      return true;
    }
    int s = state.get();
    if (s == MAPPED || s == BY_CHANNEL) {
      return s == MAPPED;
    }
    if (s != UNDECIDED || block.length() < MIN_PROBE_BYTES || !state.compareAndSet(UNDECIDED, PROBING)) {
      return false;
    }
    boolean map = false;
    int next = BY_CHANNEL;
    try {
      long[] best = probe(block.channel(), (int) Math.min(block.length(), PROBE_BYTES));
      map = best != null && best[0] < best[1];
      next = map ? MAPPED : BY_CHANNEL;
      finding = best == null ? "the block could not be mapped"
          : String.format(Locale.ROOT, "copying %d KiB from a new mapping took %.3f ms, reading them by channel "
              + "%.3f ms", Math.min(block.length(), PROBE_BYTES) >> 10, best[0] / 1e6, best[1] / 1e6);
    } catch (IOException e) {
      // This block's file could not be read (closed under the probe, say): the next block measures again, up
      // to MAX_FAILED_PROBES times, then reads go by channel for good.
      finding = "the probe failed: " + e;
      if (failedProbes.incrementAndGet() < MAX_FAILED_PROBES) {
        next = UNDECIDED;
      }
    } catch (RuntimeException e) {
      finding = "the probe failed: " + e;
    } finally {
      state.set(next); // whatever was thrown: never left PROBING, which would keep every read from deciding
    }
    if (next != UNDECIDED) {
      LOG.info("Short-circuit reads of blocks on a memory file system {} ({})",
          map ? "copy from a mapping of the block file" : "read the block file's channel", finding);
    }
    probes.incrementAndGet();
    return map;
  }

  /** Probes run so far (a measurement, failed or not, of a block). */
  public int probes() {
    return probes.get();
  }

  /** What the probe found, for logs and tests: the outcome and its two times, or why there is none. */
  public String finding() {
    int s = state.get();
    return (s == MAPPED ? "mapped: " : s == BY_CHANNEL ? "channel: " : "undecided: ") + finding;
  }

  /** The mode this client was configured with. */
  public Mode mode() {
    return mode;
  }

  /**
   * The fastest of {@link #PROBE_ROUNDS} copies of {@code len} bytes from a new mapping and of as many channel
   * reads of them, in ns ({@code [mapped, channel]}), alternating; null when the file cannot be mapped.
   */
  static long[] probe(FileChannel channel, int len) throws IOException {
    byte[] into = new byte[Math.min(len, 1 << 20)];
    ByteBuffer wrapped = ByteBuffer.wrap(into);
    long mapped = Long.MAX_VALUE;
    long read = Long.MAX_VALUE;
    for (int round = 0; round < PROBE_ROUNDS; round++) {
      long t0 = System.nanoTime();
      for (int at = 0; at < len; at += into.length) {
        wrapped.clear().limit(Math.min(into.length, len - at));
        while (wrapped.hasRemaining()) {
          if (channel.read(wrapped, at + wrapped.position()) < 0) {
            throw new IOException("the block file ended at " + (at + wrapped.position()) + " of " + len);
          }
        }
      }
      long t1 = System.nanoTime();
      BlockMapping m = BlockMapping.map(channel, len, -1);
      if (m == null) {
        return null;
      }
      try {
        for (int at = 0; at < len; at += into.length) {
          m.copy(at, into, 0, Math.min(into.length, len - at));
        }
      } finally {
        m.close();
      }
      long t2 = System.nanoTime();
      read = Math.min(read, t1 - t0);
      mapped = Math.min(mapped, t2 - t1);
    }
    return new long[] {mapped, read};
  }
}
