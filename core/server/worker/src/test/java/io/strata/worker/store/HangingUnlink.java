package io.strata.worker.store;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The real fsync whose unlink of one file (a block's file is named by its id) waits on a latch: a removal held
 * mid-way, as on a dying disk. {@link #unlinking} opens when that unlink begins to wait, and {@link #release} lets it
 * (and any later unlink of the file) go on. Shared by the worker's tests and the integration tests (the worker's
 * test-jar carries it).
 *
 * <p>Thread-safe: the unlinks come from the store's threads, the test reads and releases from its own.
 */
public class HangingUnlink extends StoreFixture.Fsync {
  /** Open once the named file's unlink waits. */
  public final CountDownLatch unlinking = new CountDownLatch(1);
  /** Lets the held unlink go on; a test's clean-up opens it too, so no unlink is left waiting. */
  public final CountDownLatch release = new CountDownLatch(1);
  private final AtomicInteger unlinks = new AtomicInteger();
  private volatile String hangs;
  private volatile Thread unlinker;

  /** Holds the unlink of the file named {@code fileName}. */
  public HangingUnlink(String fileName) {
    this.hangs = fileName;
  }

  /** Holds no unlink until {@link #hang} names a file. */
  public HangingUnlink() {
    this("");
  }

  /** From now on, holds the unlink of the file named {@code fileName}. */
  public void hang(String fileName) {
    this.hangs = fileName;
  }

  /** How many unlinks of the named file began. */
  public int unlinks() {
    return unlinks.get();
  }

  /** The thread of the last unlink of the named file, or null. */
  public Thread unlinker() {
    return unlinker;
  }

  @Override
  public void unlink(Path file) throws IOException {
    if (file.getFileName().toString().equals(hangs)) {
      unlinks.incrementAndGet();
      unlinker = Thread.currentThread();
      unlinking.countDown();
      try {
        release.await();
      } catch (InterruptedException e) {
        throw new IOException(e);
      }
    }
    super.unlink(file);
  }
}
