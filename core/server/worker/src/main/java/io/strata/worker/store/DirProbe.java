package io.strata.worker.store;

import io.strata.common.exception.InternalException;
import io.strata.common.exception.ResourceExhaustedException;
import io.strata.common.exception.StrataException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Tells a dead storage dir from a transient error (after HDFS's disk checker): an I/O error alone never
 * takes a dir out of service. Too many open files, a full disk or quota, an interrupted call say nothing
 * about the disk; any other error is checked by a probe that writes a small file in {@code tmp/},
 * fsyncs it, reads it back and deletes it. The dir is bad only when its layout is gone or the probe
 * fails with a non-transient error (or reads back other bytes).
 *
 * <p>Stateless apart from a counter for probe names; thread-safe. Probes run on the caller's thread,
 * outside every lock.
 */
final class DirProbe {
  private static final AtomicLong SEQ = new AtomicLong();
  private static final byte[] PATTERN = "strata-dir-probe".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

  private DirProbe() {}

  /** What an error is, by what the OS said (Java gives no errno, only its text). */
  enum Kind { INTERRUPTED, OUT_OF_DESCRIPTORS, OUT_OF_SPACE, OTHER }

  static Kind kind(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof ClosedByInterruptException || t instanceof InterruptedIOException) {
        return Kind.INTERRUPTED;
      }
      String m = t.getMessage();
      if (m != null) {
        if (m.contains("Too many open files")) {
          return Kind.OUT_OF_DESCRIPTORS;
        }
        if (m.contains("No space left on device") || m.contains("Disk quota exceeded")) {
          return Kind.OUT_OF_SPACE;
        }
      }
    }
    return Kind.OTHER;
  }

  static boolean isTransient(Throwable e) {
    return kind(e) != Kind.OTHER;
  }

  /**
   * Whether {@code cause} (null: the health check found the layout gone) means the dir has failed. An
   * interrupted call is decided without a probe: the interrupted thread's own probe would fail the same way.
   */
  static boolean confirmsFailure(StorageDir dir, Throwable cause) {
    if (!dir.looksHealthy()) {
      return true;
    }
    if (cause == null || kind(cause) == Kind.INTERRUPTED) {
      return false;
    }
    return !probe(dir);
  }

  /** Write, fsync, read back, delete a probe file; false only on a non-transient failure. */
  static boolean probe(StorageDir dir) {
    Path p = dir.tmpDir.resolve(".probe-" + SEQ.incrementAndGet());
    try {
      try (FileChannel ch = FileChannel.open(p, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
          StandardOpenOption.READ)) {
        ByteBuffer out = ByteBuffer.wrap(PATTERN);
        while (out.hasRemaining()) {
          ch.write(out);
        }
        ch.force(true);
        ByteBuffer in = ByteBuffer.allocate(PATTERN.length);
        while (in.hasRemaining() && ch.read(in, in.position()) >= 0) {
          // read until full or end of file
        }
        if (!Arrays.equals(in.array(), PATTERN)) {
          return false;
        }
      } finally {
        Files.deleteIfExists(p);
      }
      return true;
    } catch (IOException e) {
      return isTransient(e) && dir.looksHealthy();
    }
  }

  /** The error a caller gets for a transient failure of {@code what} in a dir that stays in service. */
  static StrataException transientError(String what, StorageDir dir, IOException e) {
    return switch (kind(e)) {
      case OUT_OF_SPACE -> new ResourceExhaustedException(what + " failed: the file system of storage dir "
          + dir.root + " is full (" + e + "); the dir stays in service", e);
      case OUT_OF_DESCRIPTORS -> new ResourceExhaustedException(what + " failed: the worker has too many open "
          + "files (" + e + "); storage dir " + dir.root + " stays in service", e);
      default -> new InternalException(what + " failed in storage dir " + dir.root + " (" + e
          + "); a probe found the dir healthy, so it stays in service", e);
    };
  }
}
