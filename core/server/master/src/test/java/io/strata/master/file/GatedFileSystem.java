package io.strata.master.file;

import java.io.IOException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.hadoop.fs.RawLocalFileSystem;

/**
 * Hadoop's local file system whose next rename, delete or status look (of a path ending as the test says, when it
 * says), once {@link #arm armed}, waits until the test releases it: a UFS whose calls are slow (as an S3 copy is), chosen through a mount's {@code fs.file.impl} option. One
 * armed call at a time; the latches are the test's.
 */
public final class GatedFileSystem extends RawLocalFileSystem {
  /** The calls that can be held. */
  enum Op { RENAME, DELETE, STATUS }

  private static final AtomicReference<Op> ARMED = new AtomicReference<>();
  static volatile CountDownLatch entered;
  static volatile CountDownLatch release;
  /** The path of the call held (its source, for a rename). */
  static volatile String held;
  /** Only a call on a path ending so is held (null: any). */
  private static volatile String pathEnding;

  /** The next {@code op} waits: {@link #entered} counts down when it begins, {@link #release} lets it go on. */
  static void arm(Op op) {
    arm(op, null);
  }

  /** As {@link #arm(Op)}, for a call on a path ending with {@code ending} only. */
  static void arm(Op op, String ending) {
    entered = new CountDownLatch(1);
    release = new CountDownLatch(1);
    held = null;
    pathEnding = ending;
    ARMED.set(op);
  }

  /** Disarms, and lets a call waiting now go on (a test's clean-up). */
  static void disarm() {
    ARMED.set(null);
    CountDownLatch r = release;
    if (r != null) {
      r.countDown();
    }
  }

  private static void holdIf(Op op, org.apache.hadoop.fs.Path path) throws IOException {
    String ending = pathEnding;
    if ((ending == null || path.toUri().getPath().endsWith(ending)) && ARMED.compareAndSet(op, null)) {
      held = path.toUri().getPath();
      entered.countDown();
      try {
        if (!release.await(30, TimeUnit.SECONDS)) {
          throw new IOException("the test never released the " + op);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException(e);
      }
    }
  }

  @Override
  public boolean rename(org.apache.hadoop.fs.Path src, org.apache.hadoop.fs.Path dst) throws IOException {
    holdIf(Op.RENAME, src);
    return super.rename(src, dst);
  }

  @Override
  public org.apache.hadoop.fs.FileStatus getFileStatus(org.apache.hadoop.fs.Path p) throws IOException {
    holdIf(Op.STATUS, p);
    return super.getFileStatus(p);
  }

  @Override
  public boolean delete(org.apache.hadoop.fs.Path p, boolean recursive) throws IOException {
    holdIf(Op.DELETE, p);
    return super.delete(p, recursive);
  }
}
