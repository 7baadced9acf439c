package io.strata.master.file;

import java.io.IOException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.fs.RawLocalFileSystem;

/**
 * Hadoop's local file system whose next rename, once {@link #arm armed}, waits until the test releases it: a UFS
 * whose rename is slow (as an S3 copy is), chosen through a mount's {@code fs.file.impl} option. One armed rename
 * at a time; the latches are the test's.
 */
public final class GatedRenameFileSystem extends RawLocalFileSystem {
  private static final java.util.concurrent.atomic.AtomicBoolean ARMED = new java.util.concurrent.atomic.AtomicBoolean();
  static volatile CountDownLatch entered;
  static volatile CountDownLatch release;

  /** The next rename waits: {@link #entered} counts down when it begins, {@link #release} lets it go on. */
  static void arm() {
    entered = new CountDownLatch(1);
    release = new CountDownLatch(1);
    ARMED.set(true);
  }

  /** Disarms, and lets a rename waiting now go on (a test's clean-up). */
  static void disarm() {
    ARMED.set(false);
    CountDownLatch r = release;
    if (r != null) {
      r.countDown();
    }
  }

  @Override
  public boolean rename(org.apache.hadoop.fs.Path src, org.apache.hadoop.fs.Path dst) throws IOException {
    if (ARMED.compareAndSet(true, false)) {
      entered.countDown();
      try {
        if (!release.await(30, TimeUnit.SECONDS)) {
          throw new IOException("the test never released the rename");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException(e);
      }
    }
    return super.rename(src, dst);
  }
}
