package io.strata.worker.ufs;

import io.strata.common.exception.StrataException;
import io.strata.common.id.BlockId;
import io.strata.master.MasterKeys;
import io.strata.master.file.FileInfo;
import io.strata.master.file.WriteType;
import io.strata.worker.InProcessMaster;
import io.strata.worker.store.Allocator;
import io.strata.worker.store.BlockAnnotator;
import io.strata.worker.store.BlockStore;
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
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * What the UFS layer's tests share: a real master in this JVM ({@link InProcessMaster}) whose files are loaded from,
 * and written through to, its root under file system; a real one-tier store in a temp dir, whose events go to the
 * worker's master sync registered with that master; and a read sink that collects what it is sent (or reads the store
 * when told to, as the data service does).
 */
final class UfsTestKit {
  private UfsTestKit() {}

  /**
   * One real master for a test class ({@link #get}), in a temp dir: started before its first test, closed (and its dir
   * deleted) after its last. Files created there, and files it loads from its root under file system, are in blocks of
   * {@code blockSize} bytes.
   */
  static final class MasterPerClass implements BeforeAllCallback, AfterAllCallback {
    private final long blockSize;
    private Path home;
    private InProcessMaster master;

    MasterPerClass(long blockSize) {
      this.blockSize = blockSize;
    }

    InProcessMaster get() {
      return master;
    }

    @Override
    public void beforeAll(ExtensionContext context) throws IOException {
      home = Files.createTempDirectory("strata-ufs-test-master");
      master = new InProcessMaster(home, Clock.systemUTC(), Map.of(MasterKeys.UFS_BLOCK_SIZE.name(),
          Long.toString(blockSize), MasterKeys.BLOCK_SIZE_MIN.name(), Long.toString(blockSize)));
    }

    @Override
    public void afterAll(ExtensionContext context) throws IOException {
      if (master != null) {
        master.close();
      }
      try (Stream<Path> s = Files.walk(home)) {
        for (Path p : s.sorted(java.util.Comparator.reverseOrder()).toList()) {
          Files.delete(p);
        }
      }
    }
  }

  /** A worker registered with {@code master} over a one-tier (MEM) store of {@code quota} bytes in {@code dir}. */
  static InProcessMaster.Worker worker(InProcessMaster master, Path dir, long quota) {
    return master.register(events -> new TieredBlockStore(List.of(new TierSpec("MEM",
        List.of(new TierSpec.Dir(dir, quota)))), Allocator.create("MaxFree"), BlockAnnotator.create("LRU"), events,
        Clock.systemUTC()));
  }

  /** A file created at {@code master} with {@code type}, its write under way: its id. */
  static long fileBeingWritten(InProcessMaster master, String path, long blockSize, WriteType type)
      throws StrataException {
    return master.fs().createFile(path, blockSize, true, 0644, type).id();
  }

  /**
   * Where {@code master} has the UFS copy of file {@code fileId} written, asked through {@code worker} (each ask names
   * a new temporary file, and the master renames the last one named into place when the file completes).
   */
  static Path target(InProcessMaster.Worker worker, long fileId) throws StrataException {
    return Path.of(java.net.URI.create(worker.client().ufsWriteTarget(fileId).uri()));
  }

  /** The temporary UFS copies of Strata file {@code path} (named ".NAME.strata-...") in the master's root UFS. */
  static List<Path> copiesBeingWritten(InProcessMaster master, String path) throws IOException {
    Path f = master.ufs().resolve(path.substring(1));
    String prefix = "." + f.getFileName() + ".strata-";
    if (!Files.isDirectory(f.getParent())) {
      return List.of();
    }
    try (Stream<Path> s = Files.list(f.getParent())) {
      return s.filter(c -> c.getFileName().toString().startsWith(prefix)).toList();
    }
  }

  /**
   * The block of a complete file of {@code length} bytes written MUST_CACHE (not persisted) through {@code worker},
   * which then lost its copy without the master hearing yet (no heartbeat since): the master lists that worker as the
   * block's only holder, and has no under file system copy of it.
   */
  static long unpersistedBlockGoneHere(InProcessMaster master, InProcessMaster.Worker worker, String path, int length)
      throws StrataException, IOException {
    long fileId = fileBeingWritten(master, path, 1 << 20, WriteType.MUST_CACHE);
    long id = BlockId.of(fileId, 0);
    put(worker.store(), id, content(fileId, length));
    worker.client().commitBlock(id, length, "MEM");
    FileInfo done = master.fs().completeFile(path, fileId, length);
    if (done.persisted() || !master.listed(id).equals(Map.of(id, "MEM"))) {
      throw new AssertionError("Expected a complete file, not persisted, its block on this worker: " + done);
    }
    worker.store().remove(id);
    return id;
  }

  /** Writes and commits block {@code blockId} in the store (the store alone: the master is not told). */
  static void put(BlockStore store, long blockId, byte[] data) throws IOException, StrataException {
    BlockStore.TempBlock t = store.createTemp(blockId, data.length);
    t.append(ByteBuffer.wrap(data));
    store.commit(t);
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

  /**
   * Collects a read. Flow control: ready unless {@link #gate} is closed (after its first {@link #readySends} sends:
   * a client that took some, then stopped reading); {@link #awaitReady} then waits for the gate. With {@link #hold}
   * closed, its first send blocks the sender until it opens ({@link #held} once it does): the loading thread stuck
   * mid-way, where a test needs it to stay, as a slow disk or under file system would hold it.
   * {@link #serveFromStore()} reads the range from the store itself; {@link #resumeFromStore} the rest of it, at
   * once if ready, else once {@link #open} opens the gate (as a store read waits for its call's ready events).
   */
  static final class CollectingSink implements ReadSink {
    final BlockStore store;
    final long blockId;
    final long offset;
    final long length;
    final CountDownLatch gate;
    final CountDownLatch done = new CountDownLatch(1);
    /** Counted down the first time the sink says it is not ready. */
    final CountDownLatch foundNotReady = new CountDownLatch(1);
    final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    volatile int readySends;
    volatile CountDownLatch hold;
    volatile boolean held;
    volatile boolean cancelled;
    volatile boolean servedFromStore;
    /** Where {@link #resumeFromStore} was asked to resume, or -1. */
    volatile long resumedAt = -1;
    volatile Throwable failure;
    volatile boolean completed;
    volatile boolean waitedForReady;
    private int sends;
    private Runnable pending;

    CollectingSink(BlockStore store, long blockId, long offset, long length, CountDownLatch gate) {
      this.store = store;
      this.blockId = blockId;
      this.offset = offset;
      this.length = length;
      this.gate = gate;
    }

    /** A ready sink whose first send blocks until {@code hold} opens. */
    static CollectingSink holding(BlockStore store, long blockId, long offset, long length, CountDownLatch hold) {
      CollectingSink s = new CollectingSink(store, blockId, offset, length, null);
      s.hold = hold;
      return s;
    }

    @Override
    public synchronized boolean isReady() {
      boolean ready = !cancelled && (gate == null || gate.getCount() == 0 || sends < readySends);
      if (!ready) {
        foundNotReady.countDown();
      }
      return ready;
    }

    @Override
    public boolean awaitReady(long timeoutMs) throws InterruptedException {
      waitedForReady = true;
      if (cancelled) {
        return false;
      }
      return isReady() || gate.await(timeoutMs, TimeUnit.MILLISECONDS);
    }

    @Override
    public boolean isCancelled() {
      return cancelled;
    }

    @Override
    public void send(ByteBuffer data) {
      CountDownLatch h = hold;
      if (h != null) {
        held = true;
        try {
          if (!h.await(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("The test never released its hold on block " + blockId);
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException(e);
        }
        hold = null;
      }
      synchronized (this) {
        byte[] b = new byte[data.remaining()];
        data.get(b);
        bytes.write(b, 0, b.length);
        sends++;
      }
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
      readStore(offset);
    }

    @Override
    public void resumeFromStore(long from) {
      resumedAt = from;
      synchronized (this) {
        if (gate != null && gate.getCount() > 0) {
          pending = () -> readStore(from);
          return;
        }
      }
      readStore(from);
    }

    /** Opens the gate: the reader reads again (a store read waiting for it goes on, on this thread). */
    void open() {
      Runnable r;
      synchronized (this) {
        gate.countDown();
        r = pending;
        pending = null;
      }
      if (r != null) {
        r.run();
      }
    }

    /** Sends {@code [from, offset + length)} of the block from the store, then completes. */
    private void readStore(long from) {
      try (BlockStore.ReadHandle h = store.openForRead(blockId, false)) {
        ByteBuffer buf = ByteBuffer.allocate((int) (offset + length - from));
        while (buf.hasRemaining() && h.channel().read(buf, from + buf.position()) >= 0) {
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
