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

    @Override
    public FSDataOutputStream create(org.apache.hadoop.fs.Path f, boolean overwrite, int bufferSize,
        short replication, long blockSize, Progressable progress) throws IOException {
      FSDataOutputStream real = super.create(f, overwrite, bufferSize, replication, blockSize, progress);
      return new FSDataOutputStream(new Counting(real), null);
    }

    private static final class Counting extends OutputStream implements Syncable, StreamCapabilities {
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
        return real.hasCapability(capability);
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
