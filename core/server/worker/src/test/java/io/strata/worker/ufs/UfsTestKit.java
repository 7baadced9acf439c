package io.strata.worker.ufs;

import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.StrataException;
import io.strata.worker.store.Allocator;
import io.strata.worker.store.BlockAnnotator;
import io.strata.worker.store.BlockStore;
import io.strata.worker.store.StoreEvents;
import io.strata.worker.store.TierSpec;
import io.strata.worker.store.TieredBlockStore;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Test doubles for the UFS layer: a real one-tier store in a temp dir, a master double that answers
 * from a table and records commits, and a read sink that collects what it is sent (or reads the store
 * when told to, as the data service does).
 */
final class UfsTestKit {
  private UfsTestKit() {}

  static TieredBlockStore store(Path dir, long quota) {
    return new TieredBlockStore(List.of(new TierSpec("MEM", List.of(new TierSpec.Dir(dir, quota)))),
        Allocator.create("MaxFree"), BlockAnnotator.create("LRU"), StoreEvents.NONE, Clock.systemUTC());
  }

  static byte[] content(long seed, int length) {
    byte[] b = new byte[length];
    new Random(seed).nextBytes(b);
    return b;
  }

  /** Entries of the store dir's temp area. */
  static List<Path> tmpFiles(Path storeDir) {
    Path tmp = storeDir.resolve("tmp");
    if (!Files.exists(tmp)) {
      return List.of();
    }
    try (Stream<Path> s = Files.list(tmp)) {
      return s.toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Flips the bits of the byte at {@code offset} in the block's file (a copy gone bad on its disk). */
  static void corrupt(BlockStore store, long blockId, long offset) throws IOException {
    java.nio.file.Path file;
    try (BlockStore.ReadHandle h = store.openForRead(blockId, false)) {
      file = h.path();
    }
    try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(file,
        java.nio.file.StandardOpenOption.READ, java.nio.file.StandardOpenOption.WRITE)) {
      ByteBuffer one = ByteBuffer.allocate(1);
      ch.read(one, offset);
      one.put(0, (byte) ~one.get(0));
      ch.write(one.rewind(), offset);
    }
  }

  static byte[] readBlock(BlockStore store, long blockId) throws IOException {
    try (BlockStore.ReadHandle h = store.openForRead(blockId, false)) {
      ByteBuffer buf = ByteBuffer.allocate((int) h.meta().length());
      while (buf.hasRemaining() && h.channel().read(buf, buf.position()) >= 0) {
        // fill
      }
      return buf.array();
    }
  }

  /** A master that knows a table of block sources and write targets, and records commits. */
  static final class FakeMaster implements MasterClient {
    final Map<Long, BlockSource> sources = new ConcurrentHashMap<>();
    final Map<Long, UfsTarget> targets = new ConcurrentHashMap<>();
    final List<String> commits = new CopyOnWriteArrayList<>();
    final List<String> corruptReports = new CopyOnWriteArrayList<>();
    volatile long workerId = 7;
    volatile StrataException commitFailure;

    @Override
    public BlockSource blockSource(long blockId) throws StrataException {
      BlockSource s = sources.get(blockId);
      if (s == null) {
        throw new NotFoundException("Block " + blockId + " does not exist");
      }
      return s;
    }

    @Override
    public UfsTarget ufsWriteTarget(long fileId) throws StrataException {
      UfsTarget t = targets.get(fileId);
      if (t == null) {
        throw new NotFoundException("File " + fileId + " is not being written through");
      }
      return t;
    }

    @Override
    public void commitBlock(long blockId, long length, String tier) throws StrataException {
      if (commitFailure != null) {
        throw commitFailure;
      }
      commits.add(blockId + ":" + length + ":" + tier);
    }

    @Override
    public boolean reportCorrupt(long blockId, io.strata.common.net.WorkerAddress holder, long offset, String reason) {
      corruptReports.add(blockId + "@" + holder + ":" + offset);
      return true;
    }

    @Override
    public long workerId() {
      return workerId;
    }
  }

  /**
   * Collects a read. Ready unless {@link #gate} is closed (then the first send blocks the sender: flow
   * control held by a slow client); {@link #serveFromStore()} reads the range from the store itself.
   */
  static final class CollectingSink implements ReadSink {
    final BlockStore store;
    final long blockId;
    final long offset;
    final long length;
    final CountDownLatch gate;
    final CountDownLatch done = new CountDownLatch(1);
    final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    volatile boolean cancelled;
    volatile boolean servedFromStore;
    volatile Throwable failure;
    volatile boolean completed;
    volatile boolean waitedForReady;

    CollectingSink(BlockStore store, long blockId, long offset, long length, CountDownLatch gate) {
      this.store = store;
      this.blockId = blockId;
      this.offset = offset;
      this.length = length;
      this.gate = gate;
    }

    @Override
    public boolean awaitReady(long timeoutMs) throws InterruptedException {
      waitedForReady = true;
      if (cancelled) {
        return false;
      }
      return gate == null || gate.await(timeoutMs, TimeUnit.MILLISECONDS);
    }

    @Override
    public boolean isCancelled() {
      return cancelled;
    }

    @Override
    public synchronized void send(ByteBuffer data) {
      byte[] b = new byte[data.remaining()];
      data.get(b);
      bytes.write(b, 0, b.length);
    }

    @Override
    public void complete() {
      completed = true;
      done.countDown();
    }

    @Override
    public void fail(Throwable cause) {
      failure = cause;
      done.countDown();
    }

    @Override
    public void serveFromStore() {
      servedFromStore = true;
      try (BlockStore.ReadHandle h = store.openForRead(blockId, false)) {
        ByteBuffer buf = ByteBuffer.allocate((int) length);
        while (buf.hasRemaining() && h.channel().read(buf, offset + buf.position()) >= 0) {
          // fill
        }
        send(buf.flip());
        complete();
      } catch (IOException e) {
        fail(e);
      }
    }

    synchronized byte[] received() {
      return bytes.toByteArray();
    }

    boolean await() throws InterruptedException {
      return done.await(30, TimeUnit.SECONDS);
    }
  }
}
