package io.strata.server.ufs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.StreamCapabilities;
import org.apache.hadoop.fs.Syncable;
import org.apache.hadoop.util.Progressable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A UFS file Strata writes is made durable before it is closed: on a real local dir (Hadoop's raw local
 * file system, whose streams count their hsync calls here) each create and createNonRecursive stream hsyncs
 * once at close, after the last byte, and the file holds every byte.
 */
class SyncOnCloseTest {
  /** Hadoop's raw local file system, counting hsync calls on the streams it creates. */
  public static final class CountingLocalFileSystem extends RawLocalFileSystem {
    static final AtomicInteger HSYNCS = new AtomicInteger();
    static final AtomicInteger ABORTS = new AtomicInteger();
    /** Whether its streams say they can abort (as S3A's do). */
    static volatile boolean abortable;

    @Override
    public FSDataOutputStream create(org.apache.hadoop.fs.Path f, boolean overwrite, int bufferSize,
        short replication, long blockSize, Progressable progress) throws IOException {
      FSDataOutputStream real = super.create(f, overwrite, bufferSize, replication, blockSize, progress);
      return new FSDataOutputStream(new Counting(real), null);
    }

    private static final class Counting extends OutputStream implements Syncable, StreamCapabilities,
        org.apache.hadoop.fs.Abortable {
      private final FSDataOutputStream real;

      Counting(FSDataOutputStream real) {
        this.real = real;
      }

      @Override
      public void write(int b) throws IOException {
        real.write(b);
      }

      @Override
      public void write(byte[] b, int off, int len) throws IOException {
        real.write(b, off, len);
      }

      @Override
      public void hflush() throws IOException {
        real.hflush();
      }

      @Override
      public void hsync() throws IOException {
        HSYNCS.incrementAndGet();
        real.hsync();
      }

      @Override
      public boolean hasCapability(String capability) {
        return capability.equals(StreamCapabilities.ABORTABLE_STREAM) ? abortable : real.hasCapability(capability);
      }

      @Override
      public AbortableResult abort() {
        ABORTS.incrementAndGet();
        try {
          real.close();
        } catch (IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
        return new AbortableResult() {
          @Override
          public boolean alreadyClosed() {
            return false;
          }

          @Override
          public IOException anyCleanupException() {
            return null;
          }
        };
      }

      @Override
      public void close() throws IOException {
        real.close();
      }
    }
  }

  @TempDir
  Path tmp;

  @Test
  void closeHsyncsOnce_andTheFileHoldsEveryByte() throws Exception {
    CountingLocalFileSystem.HSYNCS.set(0);
    try (HadoopUnderFileSystem ufs = new HadoopUnderFileSystem(tmp.toUri(),
        Map.of("fs.file.impl", CountingLocalFileSystem.class.getName()))) {
      byte[] data = new byte[300_000];
      new java.util.Random(1).nextBytes(data);
      OutputStream out = ufs.create(tmp.resolve("a").toUri().toString());
      out.write(data);
      assertThat(CountingLocalFileSystem.HSYNCS.get()).isZero();
      out.close();
      out.close(); // a second close does nothing more
      assertThat(CountingLocalFileSystem.HSYNCS.get()).isEqualTo(1);
      assertThat(Files.readAllBytes(tmp.resolve("a"))).isEqualTo(data);

      try (OutputStream nr = ufs.createNonRecursive(tmp.resolve("b").toUri().toString())) {
        nr.write(7);
      }
      assertThat(CountingLocalFileSystem.HSYNCS.get()).isEqualTo(2);
      assertThat(Files.readAllBytes(tmp.resolve("b"))).containsExactly(7);
    }
  }

  /**
   * A stream given up (its file deleted next) is not synced: closed plainly where it cannot abort, aborted where it
   * can (S3A's, which then uploads nothing); a close afterwards does nothing more.
   */
  @Test
  void abandon_neverSyncs_andAbortsWhereTheStreamCan() throws Exception {
    CountingLocalFileSystem.HSYNCS.set(0);
    CountingLocalFileSystem.ABORTS.set(0);
    try (HadoopUnderFileSystem ufs = new HadoopUnderFileSystem(tmp.toUri(),
        Map.of("fs.file.impl", CountingLocalFileSystem.class.getName()))) {
      CountingLocalFileSystem.abortable = false;
      OutputStream plain = ufs.create(tmp.resolve("p").toUri().toString());
      plain.write(new byte[1000]);
      UnderFileSystem.abandon(plain);
      plain.close();
      CountingLocalFileSystem.abortable = true;
      OutputStream abortable = ufs.create(tmp.resolve("q").toUri().toString());
      abortable.write(new byte[1000]);
      UnderFileSystem.abandon(abortable);
      abortable.close();

      assertThat(CountingLocalFileSystem.HSYNCS.get()).isZero();
      assertThat(CountingLocalFileSystem.ABORTS.get()).isEqualTo(1);
    } finally {
      CountingLocalFileSystem.abortable = false;
    }
  }

  @Test
  void createNonRecursive_onALocalDir_neverMakesTheParent_andItsFileHoldsEveryByte() throws Exception {
    try (HadoopUnderFileSystem ufs = new HadoopUnderFileSystem(tmp.toUri(), Map.of())) {
      org.assertj.core.api.Assertions.assertThatThrownBy(() -> ufs.createNonRecursive(
          tmp.resolve("gone/f").toUri().toString())).isInstanceOf(java.io.FileNotFoundException.class);
      assertThat(tmp.resolve("gone")).as("a deleted parent stays deleted").doesNotExist();
      byte[] data = new byte[200_000];
      new java.util.Random(2).nextBytes(data);
      try (OutputStream out = ufs.createNonRecursive(tmp.resolve("c").toUri().toString())) {
        out.write(data);
      }
      assertThat(Files.readAllBytes(tmp.resolve("c"))).isEqualTo(data);
    }
  }
}
