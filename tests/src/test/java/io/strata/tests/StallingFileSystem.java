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
 * most a minute, then it fails), as an under file system that stopped answering would; and, once a test called
 * {@link #armWrites()}, creating a file whose name contains {@code write-stall} (a persist's temporary copy of such a
 * file too) waits likewise until {@link #releaseWrites()}. Mounted with the mount option
 * {@code fs.file.impl=<this class>}; everything else behaves as the local file system.
 */
public final class StallingFileSystem extends RawLocalFileSystem {
  private static volatile CountDownLatch gate = new CountDownLatch(1);
  private static final AtomicInteger WAITING = new AtomicInteger();
  private static volatile CountDownLatch writeGate = new CountDownLatch(0);
  private static final AtomicInteger WRITES_WAITING = new AtomicInteger();

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

  /** Creates of {@code write-stall} files wait from now on (until {@link #releaseWrites()}). */
  static void armWrites() {
    writeGate = new CountDownLatch(1);
  }

  /** Lets every waiting and later create through. */
  static void releaseWrites() {
    writeGate.countDown();
  }

  /** Creates waiting now. */
  static int writesWaiting() {
    return WRITES_WAITING.get();
  }

  @Override
  protected java.io.OutputStream createOutputStream(Path f, boolean append) throws IOException {
    stallWrite(f);
    return super.createOutputStream(f, append);
  }

  @Override
  protected java.io.OutputStream createOutputStreamWithMode(Path f, boolean append,
      org.apache.hadoop.fs.permission.FsPermission permission) throws IOException {
    stallWrite(f);
    return super.createOutputStreamWithMode(f, append, permission);
  }

  private static void stallWrite(Path f) throws IOException {
    if (!f.getName().contains("write-stall")) {
      return;
    }
    WRITES_WAITING.incrementAndGet();
    try {
      await(writeGate, f);
    } finally {
      WRITES_WAITING.decrementAndGet();
    }
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
      await(gate, f);
    } finally {
      WAITING.decrementAndGet();
    }
  }

  private static void await(CountDownLatch g, Path f) throws IOException {
    try {
      if (!g.await(60, TimeUnit.SECONDS)) {
        throw new IOException("Stalled call on " + f + " was not released within a minute");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("Interrupted while stalled on " + f);
    }
  }
}
