package io.strata.tests;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;

/**
 * Fault injection for tests of an in-process cluster: the raw local file system, except that asking for the status
 * or the listing of a path whose name starts with {@code stall-} waits until the test calls {@link #release()} (at
 * most a minute, then it fails), as an under file system that stopped answering would. Mounted with the mount option
 * {@code fs.file.impl=<this class>}; everything else behaves as the local file system.
 */
public final class StallingFileSystem extends RawLocalFileSystem {
  private static volatile CountDownLatch gate = new CountDownLatch(1);
  private static final AtomicInteger WAITING = new AtomicInteger();

  /** Calls on {@code stall-} paths wait from now on (until {@link #release()}). */
  static void arm() {
    gate = new CountDownLatch(1);
  }

  /** Lets every waiting and later call through. */
  static void release() {
    gate.countDown();
  }

  /** Calls waiting now. */
  static int waiting() {
    return WAITING.get();
  }

  @Override
  public FileStatus getFileStatus(Path f) throws IOException {
    stall(f);
    return super.getFileStatus(f);
  }

  @Override
  public FileStatus[] listStatus(Path f) throws IOException {
    stall(f);
    return super.listStatus(f);
  }

  private static void stall(Path f) throws IOException {
    if (!f.getName().startsWith("stall-")) {
      return;
    }
    WAITING.incrementAndGet();
    try {
      if (!gate.await(60, TimeUnit.SECONDS)) {
        throw new IOException("Stalled call on " + f + " was not released within a minute");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("Interrupted while stalled on " + f);
    } finally {
      WAITING.decrementAndGet();
    }
  }
}
