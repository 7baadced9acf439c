package io.strata.worker.store;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class BlockLockManagerTest {
  /** Long enough for a wrongly granted lock to show up; waiting this long is expected to time out. */
  private static final long STILL_BLOCKED_MS = 100;

  private final BlockLockManager locks = new BlockLockManager();
  private final ExecutorService pool = Executors.newCachedThreadPool();

  @AfterEach
  void stopThreads() {
    pool.shutdownNow();
  }

  /** Spins (no sleep) until {@code count} threads hold or wait for the block's lock. */
  private void awaitRefCount(long blockId, int count) {
    long deadline = System.nanoTime() + SECONDS.toNanos(10);
    while (locks.refCount(blockId) != count) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError(
            "block " + blockId + " has " + locks.refCount(blockId) + " holders/waiters, expected " + count);
      }
      Thread.yield();
    }
  }

  private static void assertStillWaiting(Future<?> future) {
    assertThatThrownBy(() -> future.get(STILL_BLOCKED_MS, MILLISECONDS)).isInstanceOf(TimeoutException.class);
  }

  // ---- sharing and exclusion ----

  @Test
  void readLocks_areHeldAtTheSameTime_byManyThreads() throws Exception {
    int readers = 4;
    CountDownLatch allHolding = new CountDownLatch(readers);
    CountDownLatch release = new CountDownLatch(1);
    List<Future<Boolean>> futures = new ArrayList<>();
    for (int i = 0; i < readers; i++) {
      futures.add(pool.submit(() -> {
        try (BlockLock lock = locks.readLock(1)) {
          allHolding.countDown();
          // Only true if every reader got its lock while this one still holds its own.
          boolean together = allHolding.await(10, SECONDS);
          release.await(10, SECONDS);
          return together;
        }
      }));
    }
    assertThat(allHolding.await(10, SECONDS)).isTrue();
    assertThat(locks.isReadLocked(1)).isTrue();
    assertThat(locks.tryWriteLock(1)).isEmpty();
    assertThat(locks.refCount(1)).isEqualTo(readers);

    release.countDown();
    for (Future<Boolean> f : futures) {
      assertThat(f.get(10, SECONDS)).isTrue();
    }
    assertThat(locks.isReadLocked(1)).isFalse();
    assertThat(locks.poolSize()).isZero();
  }

  @Test
  void tryWriteLock_fails_whileAReaderHoldsTheBlock_andSucceedsOnceItIsReleased() {
    BlockLock read = locks.readLock(7);
    assertThat(locks.tryWriteLock(7)).isEmpty();
    assertThat(locks.refCount(7)).as("a failed try leaves no reference behind").isEqualTo(1);

    read.close();
    Optional<BlockLock> write = locks.tryWriteLock(7);
    assertThat(write).isPresent();
    assertThat(write.get().blockId()).isEqualTo(7);
    write.get().close();
    assertThat(locks.poolSize()).isZero();
  }

  @Test
  void tryWriteLock_fails_whileAnotherWriterHoldsTheBlock() {
    try (BlockLock write = locks.writeLock(3)) {
      assertThat(locks.tryWriteLock(3)).isEmpty();
      assertThat(locks.isReadLocked(3)).as("a write lock is not a read lock").isFalse();
    }
    assertThat(locks.poolSize()).isZero();
  }

  @Test
  void locksOnDifferentBlocks_doNotInterfere() {
    try (BlockLock write = locks.writeLock(1); BlockLock read = locks.readLock(2)) {
      Optional<BlockLock> other = locks.tryWriteLock(3);
      assertThat(other).isPresent();
      other.get().close();
      assertThat(locks.isReadLocked(2)).isTrue();
      assertThat(locks.isReadLocked(1)).isFalse();
      assertThat(locks.poolSize()).isEqualTo(2);
    }
  }

  @Test
  void writeLock_waitsUntilEveryReaderHasReleased() throws Exception {
    BlockLock first = locks.readLock(1);
    BlockLock second = locks.readLock(1);
    Future<Boolean> writer = pool.submit(() -> {
      try (BlockLock write = locks.writeLock(1)) {
        return locks.isReadLocked(1);
      }
    });
    awaitRefCount(1, 3); // two readers and the waiting writer
    assertStillWaiting(writer);

    first.close();
    assertStillWaiting(writer); // one reader is still there

    second.close();
    assertThat(writer.get(10, SECONDS)).as("read-locked while the writer held it").isFalse();
    assertThat(locks.poolSize()).isZero();
  }

  @Test
  void readLock_waitsWhileAWriterHoldsTheBlock() throws Exception {
    BlockLock write = locks.writeLock(5);
    Future<Boolean> reader = pool.submit(() -> {
      try (BlockLock read = locks.readLock(5)) {
        return locks.tryWriteLock(5).isEmpty(); // the reader pins the block
      }
    });
    awaitRefCount(5, 2);
    assertStillWaiting(reader);

    write.close();
    assertThat(reader.get(10, SECONDS)).isTrue();
    assertThat(locks.poolSize()).isZero();
  }

  @Test
  void writeLock_waitsForAnotherWriter() throws Exception {
    BlockLock first = locks.writeLock(5);
    Future<Boolean> second = pool.submit(() -> {
      try (BlockLock write = locks.writeLock(5)) {
        return true;
      }
    });
    awaitRefCount(5, 2);
    assertStillWaiting(second);

    first.close();
    assertThat(second.get(10, SECONDS)).isTrue();
    assertThat(locks.poolSize()).isZero();
  }

  @Test
  void oneThread_mayHoldSeveralReadLocksOnABlock() {
    BlockLock a = locks.readLock(9);
    BlockLock b = locks.readLock(9);
    a.close();
    assertThat(locks.isReadLocked(9)).isTrue();
    assertThat(locks.tryWriteLock(9)).isEmpty();
    b.close();
    assertThat(locks.isReadLocked(9)).isFalse();
    assertThat(locks.poolSize()).isZero();
  }

  // ---- release ----

  @Test
  void readLock_releasedOnAnotherThread_letsAWriterIn() throws Exception {
    BlockLock read = pool.submit(() -> locks.readLock(4)).get(10, SECONDS);
    assertThat(locks.isReadLocked(4)).isTrue();

    read.close(); // this thread never took it

    assertThat(locks.isReadLocked(4)).isFalse();
    Optional<BlockLock> write = locks.tryWriteLock(4);
    assertThat(write).isPresent();
    write.get().close();
    assertThat(locks.poolSize()).isZero();
  }

  @Test
  void writeLock_releasedOnAnotherThread_letsAReaderIn() throws Exception {
    BlockLock write = locks.writeLock(4);
    pool.submit(write::close).get(10, SECONDS);

    try (BlockLock read = locks.readLock(4)) {
      assertThat(locks.isReadLocked(4)).isTrue();
    }
    assertThat(locks.poolSize()).isZero();
  }

  @Test
  void close_twice_releasesOnlyOnce() {
    BlockLock keep = locks.readLock(2);
    BlockLock twice = locks.readLock(2);
    twice.close();
    twice.close(); // must not also release the other reader's hold

    assertThat(locks.isReadLocked(2)).isTrue();
    assertThat(locks.tryWriteLock(2)).isEmpty();
    assertThat(locks.refCount(2)).isEqualTo(1);

    keep.close();
    BlockLock write = locks.tryWriteLock(2).orElseThrow();
    write.close();
    write.close(); // a second close of a write lock must not free a lock someone else then holds
    BlockLock next = locks.writeLock(2);
    write.close();
    assertThat(locks.tryWriteLock(2)).isEmpty();
    next.close();
    assertThat(locks.poolSize()).isZero();
  }

  @Test
  void waitingForALock_isNotInterruptible_butKeepsTheInterrupt() throws Exception {
    BlockLock read = locks.readLock(6);
    AtomicReference<Thread> waiter = new AtomicReference<>();
    Future<Boolean> writer = pool.submit(() -> {
      waiter.set(Thread.currentThread());
      try (BlockLock write = locks.writeLock(6)) {
        return Thread.currentThread().isInterrupted();
      }
    });
    awaitRefCount(6, 2);
    waiter.get().interrupt();
    assertStillWaiting(writer);

    read.close();
    assertThat(writer.get(10, SECONDS)).as("interrupt flag after acquiring").isTrue();
    assertThat(locks.poolSize()).isZero();
  }

  // ---- memory ----

  @Test
  void pool_holdsOnlyBlocksInUse_andShrinksToZero() {
    List<BlockLock> held = new ArrayList<>();
    for (long id = 0; id < 1_000; id++) {
      held.add(id % 2 == 0 ? locks.readLock(id) : locks.writeLock(id));
    }
    assertThat(locks.poolSize()).isEqualTo(1_000);
    for (long id = 0; id < 1_000; id++) {
      assertThat(locks.tryWriteLock(id)).isEmpty(); // failed tries must not add references
    }
    for (int i = 0; i < 500; i++) {
      held.get(i).close();
    }
    assertThat(locks.poolSize()).isEqualTo(500);
    held.forEach(BlockLock::close);
    assertThat(locks.poolSize()).isZero();
  }

  @Test
  void isReadLocked_ofAnUnusedBlock_isFalse_andCreatesNoEntry() {
    assertThat(locks.isReadLocked(123)).isFalse();
    assertThat(locks.poolSize()).isZero();
  }

  // ---- stress ----

  @Test
  void manyThreads_onFewBlocks_keepWritersExclusive_andReadersApartFromWriters() throws Exception {
    int threads = 8;
    int opsPerThread = 2_000;
    int blocks = 16;
    AtomicIntegerArray readersIn = new AtomicIntegerArray(blocks);
    AtomicIntegerArray writersIn = new AtomicIntegerArray(blocks);
    long[] counters = new long[blocks]; // plain longs: only the block locks order their updates
    AtomicInteger violations = new AtomicInteger();
    AtomicLong reads = new AtomicLong();
    AtomicLong writes = new AtomicLong();
    CountDownLatch start = new CountDownLatch(1);
    List<Future<?>> futures = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      Random random = new Random(42 + t);
      futures.add(pool.submit(() -> {
        start.await();
        for (int op = 0; op < opsPerThread; op++) {
          int b = random.nextInt(blocks);
          int kind = random.nextInt(10);
          if (kind < 5) {
            try (BlockLock read = locks.readLock(b)) {
              readersIn.incrementAndGet(b);
              long seen = counters[b];
              if (writersIn.get(b) != 0) {
                violations.incrementAndGet();
              }
              Thread.yield();
              if (counters[b] != seen) {
                violations.incrementAndGet(); // a writer changed the block under a reader
              }
              readersIn.decrementAndGet(b);
              reads.incrementAndGet();
            }
          } else {
            Optional<BlockLock> lock = kind < 8 ? Optional.of(locks.writeLock(b)) : locks.tryWriteLock(b);
            if (lock.isEmpty()) {
              continue;
            }
            try (BlockLock write = lock.get()) {
              if (writersIn.incrementAndGet(b) != 1 || readersIn.get(b) != 0) {
                violations.incrementAndGet();
              }
              long v = counters[b];
              Thread.yield(); // invite a lost update, should exclusion fail
              counters[b] = v + 1;
              writersIn.decrementAndGet(b);
              writes.incrementAndGet();
            }
          }
        }
        return null;
      }));
    }
    start.countDown();
    for (Future<?> f : futures) {
      f.get(60, SECONDS);
    }

    long total = 0;
    for (long c : counters) {
      total += c;
    }
    assertThat(violations.get()).isZero();
    assertThat(total).as("no lost updates").isEqualTo(writes.get());
    // Blocking writes alone are 30% of the ops, so at least that many writes went through.
    assertThat(writes.get()).isGreaterThanOrEqualTo(threads * opsPerThread * 3 / 10 - 500);
    assertThat(reads.get()).isGreaterThan(threads * opsPerThread / 3);
    assertThat(locks.poolSize()).isZero();
  }
}
