package io.strata.worker.rpc;

import java.nio.ByteBuffer;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Direct buffers that block reads fill from block files (one kernel copy, no JDK temporary buffer) and
 * lend to gRPC until it has written them. Buffers come in power-of-two sizes from 4 KiB; a released buffer
 * is kept for reuse while the free ones total at most {@code maxFreeBytes}, else dropped to the garbage
 * collector. Only the free buffers are bounded here: the lent ones are bounded by the callers (a block read
 * lends one buffer at a time).
 *
 * <p>Thread-safe.
 */
final class DirectBufferPool {
  private static final int MIN_SHIFT = 12;
  private static final int MAX_SHIFT = 30;

  @SuppressWarnings("unchecked")
  private final ConcurrentLinkedDeque<ByteBuffer>[] free = new ConcurrentLinkedDeque[MAX_SHIFT + 1];
  private final long maxFreeBytes;
  private final AtomicLong freeBytes = new AtomicLong();
  private final AtomicInteger lent = new AtomicInteger();
  private final AtomicLong acquired = new AtomicLong();

  DirectBufferPool(long maxFreeBytes) {
    this.maxFreeBytes = maxFreeBytes;
    for (int i = MIN_SHIFT; i <= MAX_SHIFT; i++) {
      free[i] = new ConcurrentLinkedDeque<>();
    }
  }

  private static int shift(int bytes) {
    return Math.max(MIN_SHIFT, 32 - Integer.numberOfLeadingZeros(Math.max(1, bytes) - 1));
  }

  /** A cleared direct buffer with {@code bytes} of room (its limit), owned by the caller until {@link #release}. */
  ByteBuffer acquire(int bytes) {
    if (bytes < 0 || bytes > 1 << MAX_SHIFT) {
      throw new IllegalArgumentException("Cannot pool a buffer of " + bytes + " bytes");
    }
    int s = shift(bytes);
    ByteBuffer b = free[s].pollFirst();
    if (b != null) {
      freeBytes.addAndGet(-b.capacity());
    } else {
      b = ByteBuffer.allocateDirect(1 << s);
    }
    lent.incrementAndGet();
    acquired.incrementAndGet();
    b.clear().limit(bytes);
    return b;
  }

  /** Returns a buffer from {@link #acquire}; the caller must not touch it afterwards. */
  void release(ByteBuffer b) {
    lent.decrementAndGet();
    int cap = b.capacity();
    if (freeBytes.addAndGet(cap) <= maxFreeBytes) {
      free[Integer.numberOfTrailingZeros(cap)].addFirst(b);
    } else {
      freeBytes.addAndGet(-cap);
    }
  }

  /** Buffers acquired so far. */
  long acquired() {
    return acquired.get();
  }

  /** Buffers acquired and not yet released. */
  int lent() {
    return lent.get();
  }
}
